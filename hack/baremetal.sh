#!/usr/bin/env bash
# hack/baremetal.sh - build and cache the controllers of the bare-metal
# end-to-end stage (test/e2e/baremetal_*_test.go), from the Go module proxy:
#
#   metallb-controller  go.universe.tf/metallb/controller: assigns
#                       LoadBalancer addresses from IPAddressPools (no speaker)
#   metallb-crds/       the CRDs of the module's config/crd/bases
#   traefik             test/baremetal/traefik: Traefik's Kubernetes Ingress and Gateway
#                       API providers, which write the status of Ingresses,
#                       Gateways and routes
#
# Each is built once and cached in $K8SGW_CACHE/bin (default
# ~/.cache/k8s_gateway/bin) with a version stamp, under a lock of its own so
# that two runs never build it at once. They never enter the plugin's binary.
#
# Usage: hack/baremetal.sh build|path
#   build   build what is missing (cold: see docs/operations/benchmarks.md); prints nothing on stdout
#   path    print the directory holding the binaries
set -euo pipefail

METALLB_VERSION=v0.16.2
TRAEFIK_VERSION=v3.7.13
# The frr-k8s the controller is built with: v0.0.27, which MetalLB v0.16.2
# requires, is refused by the proxy.
FRRK8S_VERSION=v0.0.26
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

CACHE=${K8SGW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s_gateway}
BIN=$CACHE/bin

log() { printf '[baremetal.sh] %s\n' "$*" >&2; }
die() {
	printf '[baremetal.sh] ERROR: %s\n' "$*" >&2
	exit 1
}

setup_go() {
	command -v go >/dev/null 2>&1 || PATH=/usr/local/go/bin:$PATH
	command -v go >/dev/null 2>&1 || die "go not found"
	export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false"
}

stamp_ok() { [[ -f $1 && "$(cat "$1")" == "$2" ]]; }

# locked NAME FUNCTION: run FUNCTION under $CACHE/.build-NAME.lock.
locked() {
	mkdir -p "$CACHE" "$BIN"
	exec {fd}>"$CACHE/.build-$1.lock"
	if ! flock -n "$fd"; then
		log "another run is building $1; waiting"
		flock "$fd"
	fi
	"$2"
	exec {fd}>&-
}

# in_module DIR NAME: a wrapper module NAME in DIR (emptied first).
in_module() {
	rm -rf "$1"
	mkdir -p "$1"
	(cd "$1" && go mod init "$2" >build.log 2>&1)
}

# build_metallb: MetalLB's controller, from a wrapper module. The frr-k8s
# version MetalLB's go.mod requires (v0.0.27) is refused by the proxy; the
# one before it (v0.0.26) lacks one type of its API that MetalLB's FRR-K8s
# BGP mode fills in (AS path prepending), so a copy of v0.0.26 gets it. The
# stage configures no BGP. The CRDs of the module's config/crd/bases go to
# $BIN/metallb-crds.
build_metallb() {
	local stamp="metallb=$METALLB_VERSION frr-k8s=$FRRK8S_VERSION+aspathprepend"
	if [[ -x $BIN/metallb-controller ]] && stamp_ok "$BIN/.metallb-controller.version" "$stamp" &&
		stamp_ok "$BIN/metallb-crds/.version" "$stamp"; then
		return 0
	fi
	local src=$CACHE/src/metallb start dir frr
	start=$(date +%s)
	log "building MetalLB's controller $METALLB_VERSION (first time only)"
	in_module "$src" k8sgw.local/metallb
	frr=$(cd "$src" && go mod download -json "github.com/metallb/frr-k8s@$FRRK8S_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[[ -f $frr/go.mod ]] || die "cannot download github.com/metallb/frr-k8s@$FRRK8S_VERSION"
	cp -r "$frr" "$src/frr-k8s"
	chmod -R u+w "$src/frr-k8s"
	sed -i 's|^\(\tPrefixesWithCommunity \[\]CommunityPrefixes .*\)$|\1\n\n\t// PrefixesWithAsPathPrepend: added for MetalLB (see hack/baremetal.sh).\n\tPrefixesWithAsPathPrepend []AsPathPrependPrefixes `json:"withAsPathPrepend,omitempty"`|' \
		"$src/frr-k8s/api/v1beta1/frrconfiguration_types.go"
	grep -q PrefixesWithAsPathPrepend "$src/frr-k8s/api/v1beta1/frrconfiguration_types.go" || die "patching frr-k8s failed"
	cat >"$src/frr-k8s/api/v1beta1/aspathprepend.go" <<-'EOF'
		package v1beta1

		// AsPathPrependPrefixes are prefixes advertised with the local AS
		// prepended to their AS path AsPathPrepend times. Not in frr-k8s
		// v0.0.26; MetalLB v0.16.2 fills it in (see hack/baremetal.sh).
		type AsPathPrependPrefixes struct {
			Prefixes      []string `json:"prefixes,omitempty"`
			AsPathPrepend uint8    `json:"asPathPrepend,omitempty"`
		}
	EOF
	(
		cd "$src"
		go mod edit -replace="github.com/metallb/frr-k8s=./frr-k8s"
		go get "go.universe.tf/metallb/controller@$METALLB_VERSION" >>build.log 2>&1
		go build -trimpath -ldflags '-s -w' -o "$BIN/.metallb-controller.tmp" go.universe.tf/metallb/controller >>build.log 2>&1
	) || {
		tail -n 30 "$src/build.log" >&2
		die "building MetalLB's controller failed"
	}
	dir=$(cd "$src" && go list -m -f '{{.Dir}}' go.universe.tf/metallb)
	[[ -d $dir/config/crd/bases ]] || die "MetalLB's CRDs not found in the module ($dir)"
	rm -rf "$BIN/metallb-crds"
	mkdir -p "$BIN/metallb-crds"
	cp "$dir"/config/crd/bases/*.yaml "$BIN/metallb-crds/"
	chmod 644 "$BIN/metallb-crds/"*.yaml
	printf '%s' "$stamp" >"$BIN/metallb-crds/.version"
	mv -f "$BIN/.metallb-controller.tmp" "$BIN/metallb-controller"
	printf '%s' "$stamp" >"$BIN/.metallb-controller.version"
	rm -rf "$src"
	log "built metallb-controller in $(($(date +%s) - start)) s"
}

# build_traefik: test/baremetal/traefik (Traefik's Kubernetes Ingress and Gateway API
# providers, which write the status) from a wrapper module. The traefik
# command does not build from the proxy: the modules of eight of its ACME DNS
# providers' SDKs, and the fork of go-http-auth it replaces its dependency
# with, are refused (403). Its go.mod also replaces
# github.com/traefik/traefik/dynamic/ext by a directory that is a module of
# its own, so not in the module's zip nor on the proxy; it only declares empty
# extension points (the open-source build extends nothing), and an equivalent
# is written here.
build_traefik() {
	local stamp="traefik=$TRAEFIK_VERSION $(sha256sum "$HERE/../test/baremetal/traefik/main.go" | cut -c1-16)"
	if [[ -x $BIN/traefik ]] && stamp_ok "$BIN/.traefik.version" "$stamp"; then
		return 0
	fi
	local src=$CACHE/src/traefik start
	start=$(date +%s)
	log "building Traefik's providers $TRAEFIK_VERSION (first time only: minutes)"
	in_module "$src" k8sgw.local/traefik
	cp "$HERE/../test/baremetal/traefik/main.go" "$src/"
	mkdir -p "$src/ext"
	cat >"$src/ext/go.mod" <<-'EOF'
		module github.com/traefik/traefik/dynamic/ext

		go 1.24
	EOF
	cat >"$src/ext/ext.go" <<-'EOF'
		// Package ext holds the extension points of Traefik's dynamic
		// configuration; the open-source build extends nothing.
		package ext

		// HTTP extends dynamic.HTTPConfiguration.
		type HTTP struct{}

		// Router extends dynamic.Router.
		type Router struct{}

		// RouterIng extends the routers the Ingress provider builds.
		type RouterIng struct{}

		// ToRouter returns the Router extension of r.
		func (r RouterIng) ToRouter() Router { return Router{} }
	EOF
	(
		cd "$src"
		# The replacements of Traefik's go.mod, with the refused fork of
		# go-http-auth (not imported by the providers) replaced by its origin.
		go mod edit -require="github.com/traefik/traefik/v3@$TRAEFIK_VERSION" \
			-replace=github.com/traefik/traefik/dynamic/ext=./ext \
			-replace=github.com/abbot/go-http-auth=github.com/abbot/go-http-auth@v0.4.0 \
			-replace=github.com/gorilla/mux=github.com/containous/mux@v0.0.0-20250523120546-41b6ec3aed59 \
			-exclude=github.com/tencentcloud/tencentcloud-sdk-go@v3.0.83+incompatible
		go mod tidy >>build.log 2>&1
		go build -trimpath -ldflags '-s -w' -o "$BIN/.traefik.tmp" . >>build.log 2>&1
	) || {
		tail -n 30 "$src/build.log" >&2
		die "building Traefik's providers failed"
	}
	mv -f "$BIN/.traefik.tmp" "$BIN/traefik"
	printf '%s' "$stamp" >"$BIN/.traefik.version"
	rm -rf "$src"
	log "built traefik in $(($(date +%s) - start)) s"
}

main() {
	setup_go
	case ${1:-} in
	build)
		locked metallb build_metallb
		locked traefik build_traefik
		;;
	metallb) locked metallb build_metallb ;;
	traefik) locked traefik build_traefik ;;
	path) echo "$BIN" ;;
	*)
		echo "usage: $0 build|metallb|traefik|path" >&2
		exit 2
		;;
	esac
}

main "$@"
