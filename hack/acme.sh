#!/usr/bin/env bash
# hack/acme.sh - build and cache the ACME test tools of the dynamic-update
# end-to-end tests (test/e2e/acme_*_test.go), from the Go module proxy only:
#
#   pebble  github.com/letsencrypt/pebble/v2/cmd/pebble   a small ACME CA
#   acmeclient  test/acmeclient: lego's library (github.com/go-acme/lego/v5)
#           and its RFC 2136 (TSIG) DNS-01 provider behind a few flags
#
# Each is built in a module of its own (go install MODULE@VERSION), never
# imported by the plugin, and cached in $K8SGW_CACHE/bin (default
# ~/.cache/k8s_gateway/bin) with a version stamp: a second run costs nothing.
#
# Usage: hack/acme.sh build|certmanager|path|certmanager-timing
#   build               build what is missing; prints nothing on stdout
#   path                print the directory holding the binaries
#   certmanager         build cert-manager's controllers (test/certmanager,
#                       cert-manager v1.21) and copy its CRDs: several minutes
#   certmanager-timing  time a build of cert-manager's controller packages
set -euo pipefail

PEBBLE_VERSION=v2.10.1
LEGO_VERSION=v5.6.0
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CERTMANAGER_VERSION=v1.21.2

CACHE=${K8SGW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s_gateway}
BIN=$CACHE/bin

log() { printf '[acme.sh] %s\n' "$*" >&2; }
die() { printf '[acme.sh] ERROR: %s\n' "$*" >&2; exit 1; }

setup_go() {
	command -v go >/dev/null 2>&1 || PATH=/usr/local/go/bin:$PATH
	command -v go >/dev/null 2>&1 || die "go not found"
	export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false"
}

# build NAME PACKAGE@VERSION: go install into a temporary GOBIN, then move the
# binary into $BIN atomically, with its stamp.
build() {
	local name=$1 pkg=$2 stamp="$2"
	if [[ -x $BIN/$name && -f $BIN/.$name.version && "$(cat "$BIN/.$name.version")" == "$stamp" ]]; then
		return 0
	fi
	mkdir -p "$BIN"
	local tmp start
	tmp=$(mktemp -d "$BIN/.acme-build.XXXXXX")
	start=$(date +%s)
	log "building $pkg (first time only)"
	if ! GOBIN=$tmp go install -trimpath -ldflags '-s -w' "$pkg" >"$tmp/build.log" 2>&1; then
		tail -n 30 "$tmp/build.log" >&2
		rm -rf "$tmp"
		die "go install $pkg failed"
	fi
	local out
	out=$(find "$tmp" -maxdepth 1 -type f -perm -u+x | head -n 1)
	[[ -n $out ]] || die "go install $pkg left no binary"
	mv -f "$out" "$BIN/$name"
	printf '%s' "$stamp" >"$BIN/.$name.version"
	rm -rf "$tmp"
	log "built $name in $(($(date +%s) - start)) s"
}

# pebble_certs: Pebble's test TLS certificate (for localhost and 127.0.0.1)
# and the CA that signed it, from the module, into $BIN/pebble-certs.
pebble_certs() {
	[[ -f $BIN/pebble-certs/.version && "$(cat "$BIN/pebble-certs/.version")" == "$PEBBLE_VERSION" ]] && return 0
	local dir
	dir=$(cd "$CACHE" && go mod download -json "github.com/letsencrypt/pebble/v2@$PEBBLE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[[ -d $dir/test/certs ]] || die "Pebble's test certificates not found in the module ($dir)"
	mkdir -p "$BIN/pebble-certs"
	cp "$dir/test/certs/pebble.minica.pem" "$dir/test/certs/localhost/cert.pem" "$dir/test/certs/localhost/key.pem" "$BIN/pebble-certs/"
	chmod 644 "$BIN/pebble-certs/"*
	printf '%s' "$PEBBLE_VERSION" >"$BIN/pebble-certs/.version"
}

# build_acmeclient: test/acmeclient (lego's library and RFC 2136 provider
# behind a few flags) from a wrapper module of its own. lego's command
# itself does not build from the module proxy: the SDKs of some of its DNS
# providers are refused (403).
build_acmeclient() {
	build_wrapper acmeclient "$HERE/../test/acmeclient/main.go" github.com/go-acme/lego/v5 "$LEGO_VERSION" "the ACME client"
}

# shellcheck source=hack/gowrapper.sh
source "$HERE/gowrapper.sh"

# build_certmanager: test/certmanager (cert-manager's controllers, from its
# main module: its command is a module the proxy does not serve) and its CRDs
# (deploy/crds of the module) into $BIN/cert-manager-crds.
build_certmanager() {
	local src stamp="cert-manager=$CERTMANAGER_VERSION $(sha256sum "$HERE/../test/certmanager/main.go" | cut -c1-16)"
	if [[ -x $BIN/certmanager && -f $BIN/.certmanager.version && "$(cat "$BIN/.certmanager.version")" == "$stamp" ]]; then
		return 0
	fi
	src=$CACHE/src/certmanager
	rm -rf "$src"
	mkdir -p "$src" "$BIN/cert-manager-crds"
	cp "$HERE/../test/certmanager/main.go" "$src/"
	local start dir
	start=$(date +%s)
	log "building cert-manager's controllers ($CERTMANAGER_VERSION, first time only: several minutes)"
	(
		cd "$src"
		go mod init k8sgw.local/certmanager >build.log 2>&1
		go get "github.com/cert-manager/cert-manager@$CERTMANAGER_VERSION" >>build.log 2>&1
		go mod tidy >>build.log 2>&1
		go build -trimpath -ldflags '-s -w' -o "$BIN/.certmanager.tmp" . >>build.log 2>&1
	) || { tail -n 30 "$src/build.log" >&2; die "building cert-manager's controllers failed"; }
	dir=$(cd "$src" && go list -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)
	cp "$dir"/deploy/crds/*.yaml "$BIN/cert-manager-crds/"
	chmod 644 "$BIN/cert-manager-crds/"*.yaml
	mv -f "$BIN/.certmanager.tmp" "$BIN/certmanager"
	printf '%s' "$stamp" >"$BIN/.certmanager.version"
	log "built certmanager in $(($(date +%s) - start)) s"
}

certmanager_timing() {
	# cert-manager's controller lives in its own module (cmd/controller) that
	# replaces the main module by a relative path, so go install refuses it:
	# build it from a wrapper module, as hack/cluster.sh does for etcd.
	local start
	CM_DIR=$(mktemp -d)
	trap 'rm -rf "$CM_DIR"' EXIT
	local dir=$CM_DIR
	start=$(date +%s)
	(
		cd "$dir"
		go mod init k8sgw.local/certmanager-timing >/dev/null 2>&1
		cat >main.go <<'GO'
package main

import (
	"github.com/cert-manager/cert-manager/pkg/controller"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/acme/dns"
)

func main() { _ = controller.Known() }
GO
		go get "github.com/cert-manager/cert-manager@$CERTMANAGER_VERSION" >get.log 2>&1 || { tail get.log >&2; exit 1; }
		go mod tidy >>get.log 2>&1 || { tail get.log >&2; exit 1; }
		log "modules resolved in $(($(date +%s) - start)) s"
		go build -o /dev/null . 2>&1 | tail -n 20 >&2
	)
	log "cert-manager controller packages built in $(($(date +%s) - start)) s (download + compile)"
}

# lock NAME: hold $CACHE/.build-acme-NAME.lock until the script exits, so that
# two runs (a test and hack/prebuild.sh) never build the same tool at once.
lock() {
	mkdir -p "$CACHE"
	exec {lock_fd}>"$CACHE/.build-acme-$1.lock"
	if ! flock -n "$lock_fd"; then
		log "another run is building $1; waiting"
		flock "$lock_fd"
	fi
}

main() {
	setup_go
	case ${1:-build} in
	build)
		lock build
		build pebble "github.com/letsencrypt/pebble/v2/cmd/pebble@$PEBBLE_VERSION"
		pebble_certs
		build_acmeclient
		;;
	certmanager) lock certmanager && build_certmanager ;;
	path) printf '%s\n' "$BIN" ;;
	certmanager-timing) certmanager_timing ;;
	*) die "usage: $0 build|certmanager|path|certmanager-timing" ;;
	esac
}

main "$@"
