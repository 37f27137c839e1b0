#!/usr/bin/env bash
# hack/imports.sh - import blocks in goimports' three groups: the standard
# library, other modules, then this module (goimports -local), nothing else.
#
# goimports sorts and splits a block's imports into those groups but keeps any
# extra blank line a hand edit left; this script first joins each import block
# into one group, then lets goimports split it, so every file ends with at
# most three groups in that order.
#
# Usage: hack/imports.sh check|fix [FILE...]   (default: every tracked .go file)
set -euo pipefail
cd "$(dirname "$0")/.."

GOIMPORTS_VERSION=v0.52.0
LOCAL=github.com/seed-e581d630/k8s_gateway
goimports() { GOFLAGS=-mod=mod go run "golang.org/x/tools/cmd/goimports@$GOIMPORTS_VERSION" "$@"; }

mode=${1:-check}
shift || true
files=("$@")
((${#files[@]})) || mapfile -t files < <(git ls-files '*.go')

# join FILE: the file with the blank lines inside its import blocks removed.
join() { awk '/^import \($/ {inblock=1} inblock && /^\)$/ {inblock=0} !(inblock && /^[[:space:]]*$/)' "$1"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "${files[@]}"; do
	mkdir -p "$tmp/$(dirname "$f")"
	join "$f" >"$tmp/$f"
done
(cd "$tmp" && goimports -w -local "$LOCAL" "${files[@]}")

bad=0
for f in "${files[@]}"; do
	cmp -s "$f" "$tmp/$f" && continue
	case $mode in
	fix) cp "$tmp/$f" "$f" && echo "fixed $f" ;;
	check) echo "$f" && bad=1 ;;
	*) echo "usage: $0 check|fix [FILE...]" >&2 && exit 2 ;;
	esac
done
if ((bad)); then
	echo "import groups: run hack/imports.sh fix (standard library, other modules, $LOCAL)" >&2
	exit 1
fi
