#!/usr/bin/env bash
# hack/geo.sh - build and cache the MMDB writer of the traffic-steering
# end-to-end tests (test/e2e/steering_test.go), from the Go module proxy only:
#
#   mmdb  test/mmdb: MaxMind's writer library (github.com/maxmind/mmdbwriter)
#         behind a command line that maps test networks to locations
#
# It is built in a module of its own (a copy of test/mmdb under
# $K8SGW_CACHE/src), never imported by the plugin, and cached in
# $K8SGW_CACHE/bin (default ~/.cache/k8s_gateway/bin) with a version stamp,
# under a lock: a second run costs nothing. Cold: about 30 s.
#
# Usage: hack/geo.sh build|path
set -euo pipefail

MMDBWRITER_VERSION=v1.2.0
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${K8SGW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s_gateway}
BIN=$CACHE/bin

log() { printf '[geo.sh] %s\n' "$*" >&2; }
die() { printf '[geo.sh] ERROR: %s\n' "$*" >&2; exit 1; }

setup_go() {
	command -v go >/dev/null 2>&1 || PATH=/usr/local/go/bin:$PATH
	command -v go >/dev/null 2>&1 || die "go not found"
	export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false"
}

# shellcheck source=hack/gowrapper.sh
source "$HERE/gowrapper.sh"

build_mmdb() {
	build_wrapper mmdb "$HERE/../test/mmdb/main.go" github.com/maxmind/mmdbwriter "$MMDBWRITER_VERSION" "the MMDB writer"
}

main() {
	setup_go
	case ${1:-build} in
	build)
		mkdir -p "$CACHE"
		exec 9>"$CACHE/.build-mmdb.lock"
		flock 9
		build_mmdb
		;;
	path) printf '%s\n' "$BIN" ;;
	*) die "usage: hack/geo.sh build|path" ;;
	esac
}

main "$@"
