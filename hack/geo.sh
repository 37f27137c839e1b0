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

build_mmdb() {
	local src stamp="mmdbwriter=$MMDBWRITER_VERSION $(sha256sum "$HERE/../test/mmdb/main.go" | cut -c1-16)"
	if [[ -x $BIN/mmdb && -f $BIN/.mmdb.version && "$(cat "$BIN/.mmdb.version")" == "$stamp" ]]; then
		return 0
	fi
	src=$CACHE/src/mmdb
	rm -rf "$src"
	mkdir -p "$src" "$BIN"
	cp "$HERE/../test/mmdb/main.go" "$src/"
	local start
	start=$(date +%s)
	log "building the MMDB writer (mmdbwriter $MMDBWRITER_VERSION, first time only)"
	(
		cd "$src"
		go mod init k8sgw.local/mmdb >build.log 2>&1
		go get "github.com/maxmind/mmdbwriter@$MMDBWRITER_VERSION" >>build.log 2>&1
		go mod tidy >>build.log 2>&1
		go build -trimpath -ldflags '-s -w' -o "$BIN/.mmdb.tmp" . >>build.log 2>&1
	) || { tail -n 30 "$src/build.log" >&2; die "building the MMDB writer failed"; }
	mv -f "$BIN/.mmdb.tmp" "$BIN/mmdb"
	printf '%s' "$stamp" >"$BIN/.mmdb.version"
	log "built mmdb in $(($(date +%s) - start)) s"
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
