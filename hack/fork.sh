#!/usr/bin/env bash
# hack/fork.sh - build and cache the k8s-gateway fork (github.com/k8s-gateway/
# k8s_gateway, the plugin most users run) as a test oracle for the fork
# differential (test/e2e/fork_test.go), from its source archive in the
# shared oracles directory (shared/oracles/ beside the checkout) and the Go
# module proxy only.
#
# The archive is pinned by its SHA-256: another archive is refused. It is
# unpacked under $K8SGW_CACHE/fork/<hash>/src (the test renders the fork's
# chart and reads its README example from there) and built as its README
# says, `go build` of its cmd/, into $K8SGW_CACHE/fork/<hash>/coredns, under a
# lock: a second run costs nothing. Nothing of it enters this repository or
# the plugin's binary. Cold: about 200 s of CPU (its module graph is large:
# external-dns, the cloud SDKs of CoreDNS), so about 2 minutes on two idle
# cores, plus the download of its modules; warm, a stamp check.
#
# Usage: hack/fork.sh build|path|src|archive
#   build    build it if needed
#   path     print the binary's path (after build)
#   src      print the unpacked source's directory (after build)
#   archive  print the archive's path; fail when it is not on this machine
#
# Environment: K8SGW_FORK_ARCHIVE, the archive's path, when it is not in
# shared/oracles/ beside (or above) the checkout.
set -euo pipefail

FORK_ARCHIVE_NAME=k8s_gateway-fork-bd2cc78320a2.tar.gz
FORK_SHA256=cac6ce0bff87a68fb9f4386c0fdecb7c7ff61bf2c014b920cc98d1e7b0634f91
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${K8SGW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s_gateway}
DIR=$CACHE/fork/${FORK_SHA256:0:16}

log() { printf '[fork.sh] %s\n' "$*" >&2; }
die() { printf '[fork.sh] ERROR: %s\n' "$*" >&2; exit 1; }

setup_go() {
	command -v go >/dev/null 2>&1 || PATH=/usr/local/go/bin:$PATH
	command -v go >/dev/null 2>&1 || die "go not found"
	export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false"
}

# archive prints the path of the pinned archive.
archive() {
	local d candidates=()
	[[ -n ${K8SGW_FORK_ARCHIVE:-} ]] && candidates+=("$K8SGW_FORK_ARCHIVE")
	d=$HERE/..
	for _ in 1 2 3; do
		d=$d/..
		candidates+=("$d/shared/oracles/$FORK_ARCHIVE_NAME")
	done
	for c in "${candidates[@]}"; do
		[[ -f $c ]] && { realpath "$c"; return; }
	done
	die "$FORK_ARCHIVE_NAME not found in shared/oracles/ above the checkout; set K8SGW_FORK_ARCHIVE"
}

built() { [[ -x $DIR/coredns && -f $DIR/.stamp && "$(cat "$DIR/.stamp")" == "$FORK_SHA256" ]]; }

build() {
	built && return 0
	local tarball sum start
	tarball=$(archive)
	sum=$(sha256sum "$tarball" | cut -d' ' -f1)
	[[ $sum == "$FORK_SHA256" ]] || die "$tarball has SHA-256 $sum, not the pinned $FORK_SHA256"
	start=$(date +%s)
	log "building the k8s-gateway fork from $tarball (first time only)"
	rm -rf "$DIR"
	mkdir -p "$DIR/src"
	tar -xzf "$tarball" -C "$DIR/src" --strip-components=1
	(cd "$DIR/src" && go build -trimpath -ldflags '-s -w' -o "$DIR/.coredns.tmp" ./cmd >"$DIR/build.log" 2>&1) ||
		{ tail -n 30 "$DIR/build.log" >&2; die "building the fork failed"; }
	mv -f "$DIR/.coredns.tmp" "$DIR/coredns"
	printf '%s' "$FORK_SHA256" >"$DIR/.stamp"
	log "built the fork in $(($(date +%s) - start)) s"
}

main() {
	setup_go
	case ${1:-build} in
	build)
		mkdir -p "$CACHE"
		exec 9>"$CACHE/.build-fork.lock"
		flock 9
		build
		;;
	path) printf '%s\n' "$DIR/coredns" ;;
	src) printf '%s\n' "$DIR/src" ;;
	archive) archive ;;
	*) die "usage: hack/fork.sh build|path|src|archive" ;;
	esac
}

main "$@"
