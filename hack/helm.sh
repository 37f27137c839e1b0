#!/usr/bin/env bash
# hack/helm.sh - the Helm CLI for this repository, built from the Go module
# proxy (no release tarballs needed) and cached next to the test cluster's
# binaries.
#
# Usage:
#   hack/helm.sh              build helm if needed and print its path
#   hack/helm.sh ARGS...      build helm if needed and run `helm ARGS...`
#
# Environment: K8SGW_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/k8s_gateway);
# the binary is $K8SGW_CACHE/bin/helm, rebuilt when HELM_VERSION changes.

set -euo pipefail

HELM_VERSION=v3.22.0   # helm.sh/helm/v3; check with: go list -m -versions helm.sh/helm/v3
K8S_MINOR=37           # the Kubernetes minor `helm template` assumes (matches hack/cluster.sh)

CACHE=${K8SGW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s_gateway}
BIN=$CACHE/bin
HELM=$BIN/helm

log() { printf '[helm.sh] %s\n' "$*" >&2; }
die() {
	printf '[helm.sh] ERROR: %s\n' "$*" >&2
	exit 1
}

helm_ok() { [[ -x $HELM && -f $BIN/.helm.version && "$(cat "$BIN/.helm.version")" == "$HELM_VERSION" ]]; }

TMPDIR_BUILD=""
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() { [[ -z $TMPDIR_BUILD ]] || rm -rf "$TMPDIR_BUILD"; }

build_helm() {
	if ! command -v go >/dev/null 2>&1; then
		[[ -x /usr/local/go/bin/go ]] || die "go not found (looked in PATH and /usr/local/go/bin)"
		PATH=/usr/local/go/bin:$PATH
	fi
	export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0
	mkdir -p "$BIN"
	# One builder at a time per cache.
	exec {lock}>"$CACHE/.helm-build.lock"
	if ! flock -n "$lock"; then
		log "another helm build is running in $CACHE; waiting for it"
		flock "$lock"
	fi
	if helm_ok; then
		exec {lock}>&-
		return 0
	fi
	TMPDIR_BUILD=$(mktemp -d "$BIN/.helm-build.XXXXXX")
	trap cleanup EXIT
	local ldflags start=$SECONDS logf=$TMPDIR_BUILD/build.log
	ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
	ldflags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
	local pkg
	for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
		ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$K8S_MINOR"
	done
	log "building helm $HELM_VERSION from the Go module proxy (a few minutes the first time)..."
	# `go install pkg@version` builds with helm's own go.mod; it refuses modules
	# with replace directives, so fall back to a throwaway wrapper module.
	if ! GOBIN=$TMPDIR_BUILD GOFLAGS=-buildvcs=false \
		go install -trimpath -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >"$logf" 2>&1; then
		if ! grep -q 'replace directives\|must not contain directives' "$logf"; then
			tail -n 40 "$logf" >&2
			die "go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION failed (is $HELM_VERSION served by the Go module proxy?)"
		fi
		log "go install refused; building in a wrapper module"
		(
			cd "$TMPDIR_BUILD"
			export GOFLAGS="-mod=mod -buildvcs=false"
			go mod init k8sgw.local/helm-build
			go get "helm.sh/helm/v3@$HELM_VERSION"
			go build -trimpath -ldflags "$ldflags" -o "$TMPDIR_BUILD/helm" helm.sh/helm/v3/cmd/helm
		) >>"$logf" 2>&1 || {
			tail -n 40 "$logf" >&2
			die "building helm $HELM_VERSION failed"
		}
	fi
	mv -f "$TMPDIR_BUILD/helm" "$HELM"
	printf '%s' "$HELM_VERSION" >"$BIN/.helm.version"
	cleanup
	TMPDIR_BUILD=""
	trap - EXIT
	exec {lock}>&-
	log "built $HELM ($("$HELM" version --short)) in $((SECONDS - start))s"
}

helm_ok || build_helm
if (($# == 0)); then
	printf '%s\n' "$HELM"
	exit 0
fi
exec "$HELM" "$@"
