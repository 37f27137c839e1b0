#!/usr/bin/env bash
# hack/gotool.sh - the pinned Go tools of lint, the chart tests and the
# release, each built once from the Go module proxy into $K8SGW_CACHE/bin
# (default ~/.cache/k8s_gateway/bin) with a version stamp, one builder at a
# time per tool ($CACHE/.build-NAME.lock). The plugin imports none of them.
#
# Usage: hack/gotool.sh NAME          build NAME if needed and print its path
#        hack/gotool.sh NAME ARGS...  build NAME if needed and run it
#        hack/gotool.sh all           build every tool below (hack/prebuild.sh)
#
# Each is built inside a copy of its own module as the module proxy serves it,
# so with exactly the dependency versions its go.sum names, replace
# directives included (go install MODULE@VERSION refuses those).
#
# renovate: the versions below are updated by Renovate (renovate.json).
set -euo pipefail

# NAME      MODULE                                 VERSION   PACKAGE             VERSION-LDFLAGS
TOOLS=(
	"actionlint   github.com/rhysd/actionlint              v1.7.12  ./cmd/actionlint    -X=github.com/rhysd/actionlint.version=v1.7.12"
	"helm-unittest github.com/helm-unittest/helm-unittest  v1.1.2   ./cmd/helm-unittest -X=github.com/helm-unittest/helm-unittest/internal/build.version=v1.1.2"
	"ko           github.com/google/ko                     v0.19.1  .                   -X=github.com/google/ko/pkg/commands.Version=v0.19.1"
	"cosign       github.com/sigstore/cosign/v3            v3.1.3   ./cmd/cosign        -X=sigs.k8s.io/release-utils/version.gitVersion=v3.1.3"
)

CACHE=${K8SGW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s_gateway}
BIN=$CACHE/bin

log() { printf '[gotool.sh] %s\n' "$*" >&2; }
die() {
	printf '[gotool.sh] ERROR: %s\n' "$*" >&2
	exit 1
}

setup_go() {
	command -v go >/dev/null 2>&1 || PATH=/usr/local/go/bin:$PATH
	command -v go >/dev/null 2>&1 || die "go not found (looked in PATH and /usr/local/go/bin)"
	export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"
}

# spec NAME: sets module, version, pkg and ldflags from TOOLS.
spec() {
	local line n
	for line in "${TOOLS[@]}"; do
		read -r n module version pkg ldflags <<<"$line"
		[[ $n == "$1" ]] && return 0
	done
	die "unknown tool $1 (known: $(for line in "${TOOLS[@]}"; do printf '%s ' "${line%% *}"; done))"
}

ok() { [[ -x $BIN/$1 && "$(cat "$BIN/.$1.version" 2>/dev/null)" == "$2" ]]; }

build() { # NAME
	local name=$1 module version pkg ldflags
	spec "$name"
	local stamp="$module@$version go=$(go env GOVERSION)"
	ok "$name" "$stamp" && return 0
	mkdir -p "$BIN"
	exec {lock}>"$CACHE/.build-$name.lock"
	flock "$lock"
	if ok "$name" "$stamp"; then
		exec {lock}>&-
		return 0
	fi
	local start=$SECONDS tmp dir
	tmp=$(mktemp -d "$BIN/.$name-build.XXXXXX")
	log "building $name ($module@$version), first time only"
	dir=$(cd "$tmp" && go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[[ -d $dir ]] || die "go mod download $module@$version failed"
	# A writable copy: the module cache is read-only, and go build may want to
	# write nothing but needs a directory it can enter as the main module.
	cp -r "$dir" "$tmp/src"
	chmod -R u+w "$tmp/src"
	if ! (cd "$tmp/src" && go build -trimpath -ldflags "-s -w $ldflags" -o "$tmp/$name" "$pkg") >"$tmp/build.log" 2>&1; then
		tail -n 30 "$tmp/build.log" >&2
		rm -rf "$tmp"
		die "building $name ($module@$version) failed"
	fi
	mv -f "$tmp/$name" "$BIN/$name"
	printf '%s' "$stamp" >"$BIN/.$name.version"
	rm -rf "$tmp"
	exec {lock}>&-
	log "built $name in $((SECONDS - start)) s"
}

setup_go
(($# >= 1)) || die "usage: $0 NAME [ARGS...] | all"
if [[ $1 == all ]]; then
	for line in "${TOOLS[@]}"; do build "${line%% *}"; done
	exit 0
fi
name=$1
shift
build "$name"
if (($# == 0)); then
	printf '%s\n' "$BIN/$name"
	exit 0
fi
exec "$BIN/$name" "$@"
