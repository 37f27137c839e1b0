#!/usr/bin/env bash
# hack/release.sh - build, push, sign and attest a release without a container
# engine (make release and make release-base call it; see CONTRIBUTING.md).
#
#   hack/release.sh release VERSION REGISTRY   binaries, SBOMs, image, chart, signatures, attestations, checksums
#   hack/release.sh base REGISTRY              only the project's base image; prints NAME@sha256:...
#   hack/release.sh notes VERSION              the release notes: VERSION's section of CHANGELOG.md
#   hack/release.sh tools                      build the cached tools
#   hack/release.sh warm                       the tools, and the cross-compiles into Go's build cache
#                                              (hack/prebuild.sh, so that make test's release test links only)
#
# REGISTRY is host[:port][/path]: the image goes to REGISTRY/k8s_gateway:VERSION,
# the chart to oci://REGISTRY/charts/k8s-gateway (chart version VERSION without
# its "v"), the base to REGISTRY/k8s-gateway-base. A loopback registry is
# spoken to in plain HTTP.
#
# The tools, each the standard one for its job: ko builds the image of
# cmd/coredns on the base (.ko.yaml); cosign signs the image and the chart and
# attaches each platform's CycloneDX SBOM (cyclonedx-gomod) and the build's
# SLSA provenance as signed attestations (OCI referrers of the image); helm
# packages and pushes the chart. Hand-written: the base (hack/ocirelease: no
# tool builds one from files without a container engine or a package
# repository) and the provenance's few lines of JSON (no tool writes SLSA
# provenance outside a CI service's own builder).
#
# Environment: LDFLAGS (the Makefile's, with Version), BASE_IMAGE (a base pinned
# by digest; default: the project's base, pushed to REGISTRY first), DIST
# (output directory, default dist), PLATFORMS (default "linux/amd64 linux/arm64"),
# SIGN (key: with COSIGN_KEY, a cosign key file, and COSIGN_PASSWORD; keyless:
# Sigstore's public instance with the CI's OIDC identity; none: no signature
# nor attestation; default key when COSIGN_KEY is set, else none), BUILDER_ID
# and BUILD_URL (the provenance's builder and run; the workflow sets them),
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

build_crane() { # OUT: go-containerregistry's crane, at hack/ocirelease's go.sum
	(cd "$HERE/ocirelease" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags '-s -w' -o "$1" github.com/google/go-containerregistry/cmd/crane)
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

# tools [all]: the base's builder, the SBOM writer and helm; with "all", ko
# and cosign too (hack/gotool.sh), which only a release needs.
tools() {
	local src
	src=$(cat "$HERE"/ocirelease/{go.mod,go.sum,*.go} | sha256sum | cut -c1-16)
	cached ocirelease "src=$src go=$(go env GOVERSION)" build_ocirelease
	cached cyclonedx-gomod "$CYCLONEDX_VERSION" build_cyclonedx
	HELM=$("$HERE/helm.sh")
	OCIRELEASE=$BIN/ocirelease CYCLONEDX=$BIN/cyclonedx-gomod
	if [[ ${1:-} == all ]]; then
		cached crane "src=$src go=$(go env GOVERSION)" build_crane
		CRANE=$BIN/crane
		KO=$("$HERE/gotool.sh" ko)
		COSIGN=$("$HERE/gotool.sh" cosign)
	fi
}

registry_host() { printf '%s' "${1%%/*}"; }

# plain_http REGISTRY: a loopback registry speaks HTTP (ko and ocirelease,
# on go-containerregistry, decide the same way).
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

# base REGISTRY: push the project's base (hack/ocirelease: the pinned CA
# bundle, nonroot 65532, all at time 0) and print NAME@sha256:... Its digest
# depends only on hack/ocirelease's sources and go.sum.
base() {
	SOURCE_DATE_EPOCH=0 "$OCIRELEASE" base -tag "$1/k8s-gateway-base:nonroot"
}

# cosign_run ARGS...: cosign with the release's signing mode and registry.
cosign_run() {
	local args=("$@")
	case $SIGN in
	key) args+=(--key "$COSIGN_KEY" --signing-config "$SIGNING_CONFIG") ;;
	keyless) ;;
	*) die "SIGN=$SIGN: want key, keyless or none" ;;
	esac
	plain_http "$REGISTRY" && args+=(--allow-http-registry --allow-insecure-registry)
	"$COSIGN" "${args[@]}" >&2
}

# provenance: the SLSA v1 provenance predicate of the build: the source
# commit, the base by digest, the toolchain, and each binary's digest.
provenance() {
	local version=$1 revision=$2 base_image=$3 byproducts="" sep="" plat file
	for plat in $PLATFORMS; do
		file=coredns-${plat%/*}-${plat#*/}
		byproducts+="$sep{\"name\": \"$file\", \"digest\": {\"sha256\": \"$(sha256sum "$DIST/$file" | cut -c1-64)\"}}"
		sep=", "
	done
	cat <<JSON
{
  "buildDefinition": {
    "buildType": "$SOURCE_URL/blob/main/hack/release.sh",
    "externalParameters": {"version": "$version", "registry": "$REGISTRY", "source": "git+$SOURCE_URL@$revision"},
    "internalParameters": {"go": "$(go env GOVERSION)", "ldflags": "$LDFLAGS", "sourceDateEpoch": $SOURCE_DATE_EPOCH, "platforms": "$PLATFORMS"},
    "resolvedDependencies": [
      {"uri": "git+$SOURCE_URL", "digest": {"gitCommit": "$revision"}},
      {"uri": "oci://${base_image%@*}", "digest": {"sha256": "${base_image##*@sha256:}"}}
    ]
  },
  "runDetails": {
    "builder": {"id": "${BUILDER_ID:-$SOURCE_URL/blob/main/hack/release.sh}"},
    "metadata": {"invocationId": "${BUILD_URL:-}"},
    "byproducts": [$byproducts]
  }
}
JSON
}

release() {
	local version=$1
	REGISTRY=$2
	[[ $version =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]] ||
		die "VERSION=$version: want vMAJOR.MINOR.PATCH[-PRERELEASE]"
	check_registry "$REGISTRY"
	[[ -n ${LDFLAGS:-} ]] || die "LDFLAGS is empty (run make release)"
	[[ $LDFLAGS == *"Version=$version"* ]] || die "LDFLAGS do not set Version=$version: $LDFLAGS"
	SIGN=${SIGN:-$([[ -n ${COSIGN_KEY:-} ]] && echo key || echo none)}
	case $SIGN in
	key) [[ -r ${COSIGN_KEY:-} ]] || die "SIGN=key: COSIGN_KEY=${COSIGN_KEY:-} is not a readable cosign key file" ;;
	keyless) ;;
	none) log "WARNING: SIGN=none: the image and the chart are not signed, and carry no attestation" ;;
	*) die "SIGN=$SIGN: want key, keyless or none" ;;
	esac
	local revision start=$SECONDS t
	revision=$(git -C "$ROOT" rev-parse HEAD)
	git -C "$ROOT" diff --quiet HEAD -- || log "WARNING: the tree has uncommitted changes; revision $revision does not describe them"
	export SOURCE_DATE_EPOCH
	SOURCE_DATE_EPOCH=$(git -C "$ROOT" log -1 --format=%ct)
	export GOFLAGS=-buildvcs=false CGO_ENABLED=0
	rm -rf "$DIST"
	mkdir -p "$DIST"
	DIST=$(cd "$DIST" && pwd)

	# The binaries, cross-compiled (nothing foreign-arch runs), and an SBOM of
	# each one's modules, which names the binary's SHA-256.
	local plat os arch out kplats=""
	for plat in $PLATFORMS; do
		os=${plat%/*} arch=${plat#*/}
		out=$DIST/coredns-$os-$arch
		t=$SECONDS
		(cd "$ROOT" && GOOS=$os GOARCH=$arch go build -trimpath -ldflags "$LDFLAGS" -o "$out" ./cmd/coredns)
		log "built $out in $((SECONDS - t)) s"
		"$CYCLONEDX" bin -json -noserial -notimestamp -version "$version" -output "$out.cdx.json" "$out"
		kplats+=${kplats:+,}$plat
	done

	# The image: ko builds cmd/coredns again, with the same flags (so the same
	# bytes: TestRelease compares them), on the base pinned by digest.
	local base_image=${BASE_IMAGE:-}
	if [[ -z $base_image ]]; then
		base_image=$(base "$REGISTRY")
		log "the project's base: $base_image"
	fi
	[[ $base_image == *@sha256:* ]] || die "BASE_IMAGE=$base_image is not pinned by digest (NAME@sha256:...)"
	local image label labels=() insecure=() crane_insecure=()
	for label in "source=$SOURCE_URL" "url=$SOURCE_URL" "version=$version" "revision=$revision" \
		"licenses=Apache-2.0" "title=k8s_gateway" "description=CoreDNS with the k8s_gateway plugin"; do
		labels+=(--image-label "org.opencontainers.image.$label" --image-annotation "org.opencontainers.image.$label")
	done
	plain_http "$REGISTRY" && insecure=(--insecure-registry) crane_insecure=(--insecure)
	t=$SECONDS
	image=$(cd "$ROOT" && KO_DOCKER_REPO=$REGISTRY/k8s_gateway KO_DEFAULTBASEIMAGE=$base_image LDFLAGS=$LDFLAGS \
		"$KO" build --bare --platform "$kplats" --tags "$version" --sbom none "${insecure[@]}" "${labels[@]}" ./cmd/coredns | tail -n 1)
	# ko prints REPO:TAG@sha256:...; the release names the image by digest.
	[[ $image == "$REGISTRY/k8s_gateway:$version@sha256:"* ]] || die "ko printed $image, want $REGISTRY/k8s_gateway:$version@sha256:..."
	image=$REGISTRY/k8s_gateway@${image##*@}
	log "pushed $REGISTRY/k8s_gateway:$version ($image) in $((SECONDS - t)) s"
	printf '%s\n' "$image" >"$DIST/image.txt"
	printf '%s\n' "$base_image" >"$DIST/base-image.txt"

	# Signatures and attestations: the index and each platform's image signed;
	# each platform's image attested with its binary's SBOM, the index with
	# the build's provenance.
	if [[ $SIGN != none ]]; then
		t=$SECONDS
		if [[ $SIGN == key ]]; then
			# A signing config without services: no transparency log, no
			# timestamp authority (keyless takes Sigstore's public ones).
			SIGNING_CONFIG=$DIST/.signing-config.json
			"$COSIGN" signing-config create --out "$SIGNING_CONFIG" >&2
		fi
		cosign_run sign --yes --recursive "$image"
		local digest
		for plat in $PLATFORMS; do
			digest=$("$CRANE" digest --platform "$plat" "${crane_insecure[@]}" "$image")
			cosign_run attest --yes --type cyclonedx --predicate "$DIST/coredns-${plat%/*}-${plat#*/}.cdx.json" "${image%@*}@$digest"
		done
		provenance "$version" "$revision" "$base_image" >"$DIST/provenance.json"
		cosign_run attest --yes --type slsaprovenance1 --predicate "$DIST/provenance.json" "$image"
		log "signed and attested $image in $((SECONDS - t)) s"
	fi

	# The chart: version and appVersion of the release, its default image the
	# one just pushed, by digest.
	local chart_version=${version#v} host=${REGISTRY%%/*} path="" work=$DIST/.chart index=${image##*@}
	[[ $REGISTRY == */* ]] && path=${REGISTRY#*/}/
	rm -rf "$work"
	mkdir -p "$work"
	cp -r "$ROOT/charts/k8s-gateway" "$work/"
	awk -v reg="$host" -v repo="${path}k8s_gateway" -v digest="$index" '
		/^image:/ { inimage = 1; print; next }
		/^[^ #]/ { inimage = 0 }
		inimage && /^  registry:/ { print "  registry: " reg; next }
		inimage && /^  repository:/ { print "  repository: " repo; next }
		inimage && /^  digest:/ { print "  digest: \"" digest "\""; next }
		{ print }' "$ROOT/charts/k8s-gateway/values.yaml" >"$work/k8s-gateway/values.yaml"
	grep -qx "  registry: $host" "$work/k8s-gateway/values.yaml" &&
		grep -qx "  repository: ${path}k8s_gateway" "$work/k8s-gateway/values.yaml" &&
		grep -qx "  digest: \"$index\"" "$work/k8s-gateway/values.yaml" ||
		die "could not set image.registry/repository/digest in the chart's values.yaml"
	# Artifact Hub's list of the chart's images: the one just pushed.
	sed -i "s|^      image: ghcr.io/seed-e581d630/k8s_gateway:.*|      image: $REGISTRY/k8s_gateway:$version@$index|" "$work/k8s-gateway/Chart.yaml"
	grep -q "image: $REGISTRY/k8s_gateway:$version@$index" "$work/k8s-gateway/Chart.yaml" ||
		die "could not set artifacthub.io/images in the chart's Chart.yaml"
	"$HELM" package "$work/k8s-gateway" --version "$chart_version" --app-version "$version" -d "$DIST" >&2
	rm -rf "$work"
	local chart=$DIST/k8s-gateway-$chart_version.tgz plain=() pushed chart_digest
	plain_http "$REGISTRY" && plain=(--plain-http)
	pushed=$("$HELM" push "$chart" "oci://$REGISTRY/charts" "${plain[@]}" 2>&1) || die "helm push: $pushed"
	printf '%s\n' "$pushed" >&2
	chart_digest=$(printf '%s\n' "$pushed" | sed -n 's/^Digest: \(sha256:[0-9a-f]\{64\}\)$/\1/p')
	[[ -n $chart_digest ]] || die "helm push printed no digest"
	printf '%s\n' "$REGISTRY/charts/k8s-gateway@$chart_digest" >"$DIST/chart.txt"
	log "pushed oci://$REGISTRY/charts/k8s-gateway:$chart_version ($chart_digest)"
	if [[ $SIGN != none ]]; then
		cosign_run sign --yes "$REGISTRY/charts/k8s-gateway@$chart_digest"
	fi

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
tools) tools all ;;
warm)
	tools all
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
	tools all
	release "$1" "$2"
	;;
*) die "usage: $0 release VERSION REGISTRY | base REGISTRY | notes VERSION | tools | warm" ;;
esac
