#!/usr/bin/env bash
# hack/release.sh - build and push a release without a container engine
# (make release and make release-base call it; see CONTRIBUTING.md).
#
#   hack/release.sh release VERSION REGISTRY   binaries, SBOMs, image index, chart, checksums
#   hack/release.sh base REGISTRY              only the project's base image; prints NAME@sha256:...
#   hack/release.sh notes VERSION              the release notes: VERSION's section of CHANGELOG.md
#   hack/release.sh tools                      build the cached tools (ocirelease, cyclonedx-gomod, helm)
#   hack/release.sh warm                       the tools, and the cross-compiles into Go's build cache
#                                              (hack/prebuild.sh, so that make test's release test links only)
#
# REGISTRY is host[:port][/path]: the image goes to REGISTRY/k8s_gateway:VERSION,
# the chart to oci://REGISTRY/charts/k8s-gateway (chart version VERSION without
# its "v"), the base to REGISTRY/k8s-gateway-base. A loopback registry is
# spoken to in plain HTTP.
#
# Environment: LDFLAGS (the Makefile's, with Version), BASE_IMAGE (a base pinned
# by digest; default: the project's base, pushed to REGISTRY first), DIST
# (output directory, default dist), PLATFORMS (default "linux/amd64 linux/arm64"),
# K8SGW_CACHE (tool cache, default ~/.cache/k8s_gateway).

set -euo pipefail

CYCLONEDX_VERSION=v1.10.0   # github.com/CycloneDX/cyclonedx-gomod
MODULE=github.com/seed-e581d630/k8s_gateway
SOURCE_URL=https://$MODULE

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
CACHE=${K8SGW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s_gateway}
BIN=$CACHE/bin
DIST=${DIST:-$ROOT/dist}
PLATFORMS=${PLATFORMS:-linux/amd64 linux/arm64}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

log() { printf '[release.sh] %s\n' "$*" >&2; }
die() {
	printf '[release.sh] ERROR: %s\n' "$*" >&2
	exit 1
}

# cached NAME STAMP BUILD-FUNCTION: build $BIN/NAME once per stamp, one builder at a time.
cached() {
	local name=$1 stamp=$2 build=$3
	[[ -x $BIN/$name && "$(cat "$BIN/.$name.version" 2>/dev/null)" == "$stamp" ]] && return 0
	mkdir -p "$BIN"
	exec {lock}>"$CACHE/.build-$name.lock"
	flock "$lock"
	if [[ -x $BIN/$name && "$(cat "$BIN/.$name.version" 2>/dev/null)" == "$stamp" ]]; then
		exec {lock}>&-
		return 0
	fi
	local start=$SECONDS
	log "building $name ($stamp), first time only"
	"$build" "$BIN/.$name.tmp" || die "building $name failed"
	mv -f "$BIN/.$name.tmp" "$BIN/$name"
	printf '%s' "$stamp" >"$BIN/.$name.version"
	log "built $name in $((SECONDS - start)) s"
	exec {lock}>&-
}

build_ocirelease() { # OUT: from hack/ocirelease, a module of its own (go.mod/go.sum pin go-containerregistry)
	(cd "$HERE/ocirelease" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags '-s -w' -o "$1" .)
}

build_cyclonedx() { # OUT
	local dir
	dir=$(mktemp -d "$BIN/.cyclonedx.XXXXXX")
	CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOBIN=$dir \
		go install -trimpath -ldflags '-s -w' "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$CYCLONEDX_VERSION" &&
		mv -f "$dir/cyclonedx-gomod" "$1"
	local rc=$?
	rm -rf "$dir"
	return $rc
}

tools() {
	local src
	src=$(cat "$HERE"/ocirelease/{go.mod,go.sum,*.go} | sha256sum | cut -c1-16)
	cached ocirelease "src=$src go=$(go env GOVERSION)" build_ocirelease
	cached cyclonedx-gomod "$CYCLONEDX_VERSION" build_cyclonedx
	HELM=$("$HERE/helm.sh")
	OCIRELEASE=$BIN/ocirelease CYCLONEDX=$BIN/cyclonedx-gomod
}

registry_host() { printf '%s' "${1%%/*}"; }

# plain_http REGISTRY: a loopback registry speaks HTTP (ocirelease decides the same way).
plain_http() {
	case $(registry_host "$1") in
	localhost | localhost:* | 127.* | \[::1\] | \[::1\]:*) return 0 ;;
	esac
	return 1
}

check_registry() {
	local re='^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)(:[0-9]+)?(/[a-z0-9._-]+)*$'
	[[ $1 =~ $re ]] ||
		die "REGISTRY=$1: want host[:port][/path] (lower-case path), e.g. ghcr.io/seed-e581d630"
}

# base REGISTRY: push the project's base (CA certificates, nonroot 65532) and print NAME@sha256:...
base() {
	SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct)} \
		"$OCIRELEASE" base -tag "$1/k8s-gateway-base:nonroot"
}

release() {
	local version=$1 registry=$2
	[[ $version =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]] ||
		die "VERSION=$version: want vMAJOR.MINOR.PATCH[-PRERELEASE]"
	check_registry "$registry"
	[[ -n ${LDFLAGS:-} ]] || die "LDFLAGS is empty (run make release)"
	[[ $LDFLAGS == *"Version=$version"* ]] || die "LDFLAGS do not set Version=$version: $LDFLAGS"
	local revision epoch start=$SECONDS t
	revision=$(git -C "$ROOT" rev-parse HEAD)
	git -C "$ROOT" diff --quiet HEAD -- || log "WARNING: the tree has uncommitted changes; revision $revision does not describe them"
	epoch=$(git -C "$ROOT" log -1 --format=%ct)
	export SOURCE_DATE_EPOCH=$epoch
	rm -rf "$DIST"
	mkdir -p "$DIST"

	# The binaries, cross-compiled (nothing foreign-arch runs), and an SBOM of each one's modules.
	local plat os arch out binaries=()
	for plat in $PLATFORMS; do
		os=${plat%/*} arch=${plat#*/}
		out=$DIST/coredns-$os-$arch
		t=$SECONDS
		(cd "$ROOT" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOFLAGS=-buildvcs=false \
			go build -trimpath -ldflags "$LDFLAGS" -o "$out" ./cmd/coredns)
		log "built $out in $((SECONDS - t)) s"
		"$CYCLONEDX" bin -json -noserial -notimestamp -version "$version" -output "$out.cdx.json" "$out"
		binaries+=(-binary "$plat=$out")
	done

	# The image: each platform's binary on the base pinned by digest, one index.
	local base_image=${BASE_IMAGE:-}
	if [[ -z $base_image ]]; then
		base_image=$(base "$registry")
		log "the project's base: $base_image"
	fi
	[[ $base_image == *@sha256:* ]] || die "BASE_IMAGE=$base_image is not pinned by digest (NAME@sha256:...)"
	local image
	image=$("$OCIRELEASE" image -base "$base_image" -tag "$registry/k8s_gateway:$version" "${binaries[@]}" \
		-label "org.opencontainers.image.source=$SOURCE_URL" \
		-label "org.opencontainers.image.url=$SOURCE_URL" \
		-label "org.opencontainers.image.version=$version" \
		-label "org.opencontainers.image.revision=$revision" \
		-label "org.opencontainers.image.licenses=Apache-2.0" \
		-label "org.opencontainers.image.title=k8s_gateway" \
		-label "org.opencontainers.image.description=CoreDNS with the k8s_gateway plugin")
	log "pushed $registry/k8s_gateway:$version ($image)"
	printf '%s\n' "$image" >"$DIST/image.txt"
	printf '%s\n' "$base_image" >"$DIST/base-image.txt"

	# The chart: version and appVersion of the release, its default image the
	# one just pushed (the tag defaults to appVersion).
	local chart_version=${version#v} host=${registry%%/*} path="" work=$DIST/.chart
	[[ $registry == */* ]] && path=${registry#*/}/
	rm -rf "$work"
	mkdir -p "$work"
	cp -r "$ROOT/charts/k8s-gateway" "$work/"
	awk -v reg="$host" -v repo="${path}k8s_gateway" '
		/^image:/ { inimage = 1; print; next }
		/^[^ #]/ { inimage = 0 }
		inimage && /^  registry:/ { print "  registry: " reg; next }
		inimage && /^  repository:/ { print "  repository: " repo; next }
		{ print }' "$ROOT/charts/k8s-gateway/values.yaml" >"$work/k8s-gateway/values.yaml"
	grep -qx "  registry: $host" "$work/k8s-gateway/values.yaml" &&
		grep -qx "  repository: ${path}k8s_gateway" "$work/k8s-gateway/values.yaml" ||
		die "could not set image.registry/repository in the chart's values.yaml"
	"$HELM" package "$work/k8s-gateway" --version "$chart_version" --app-version "$version" -d "$DIST" >&2
	rm -rf "$work"
	local chart=$DIST/k8s-gateway-$chart_version.tgz plain=()
	plain_http "$registry" && plain=(--plain-http)
	"$HELM" push "$chart" "oci://$registry/charts" "${plain[@]}" >&2
	log "pushed oci://$registry/charts/k8s-gateway:$chart_version"

	(cd "$DIST" && sha256sum coredns-* "${chart##*/}" >SHA256SUMS)
	log "release $version in $DIST after $((SECONDS - start)) s:"
	(cd "$DIST" && ls -l >&2)
}

# warm: compile every platform's binary once (the release's flags, output
# thrown away), so that a release later only links.
warm() {
	local plat t
	for plat in $PLATFORMS; do
		t=$SECONDS
		(cd "$ROOT" && CGO_ENABLED=0 GOOS=${plat%/*} GOARCH=${plat#*/} GOFLAGS=-buildvcs=false \
			go build -trimpath -ldflags '-s -w' -o /dev/null ./cmd/coredns)
		log "compiled coredns for $plat in $((SECONDS - t)) s"
	done
}

# notes VERSION: the body of the section "## [VERSION] ..." of CHANGELOG.md
# ($CHANGELOG), up to the next "## " heading; an error when there is none.
notes() {
	local file=${CHANGELOG:-$ROOT/CHANGELOG.md} out
	out=$(awk -v head="## [$1]" '
		index($0, head) == 1 { on = 1; next }
		on && /^## / { exit }
		on { print }' "$file" | sed -e '/./,$!d')
	[[ -n ${out//[$'\n\t ']/} ]] || die "$file has no section \"## [$1]\" with notes"
	printf '%s\n' "$out"
}

cmd=${1:-}
shift || true
case $cmd in
notes)
	(($# == 1)) || die "usage: $0 notes VERSION"
	notes "$1"
	;;
tools) tools ;;
warm)
	tools
	warm
	;;
base)
	(($# == 1)) || die "usage: $0 base REGISTRY"
	check_registry "$1"
	tools
	base "$1"
	;;
release)
	(($# == 2)) || die "usage: $0 release VERSION REGISTRY"
	tools
	release "$1" "$2"
	;;
*) die "usage: $0 release VERSION REGISTRY | base REGISTRY | notes VERSION | tools | warm" ;;
esac
