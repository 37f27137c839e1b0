# k8s_gateway: build, test and try out the CoreDNS plugin.

GO        ?= go
BINARY    ?= coredns
FUZZTIME  ?= 10s
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.1.0-dev)
LDFLAGS   := -s -w -X github.com/seed-e581d630/k8s_gateway.Version=$(VERSION)
export GOTOOLCHAIN ?= local

.PHONY: all build test lint unit fuzz e2e e2e-baremetal e2e-node chaos bench bench-smoke bench-hostile demo deps cluster-up cluster-down clean

all: build

## build: the CoreDNS binary with k8s_gateway compiled in (./coredns)
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BINARY) ./cmd/coredns

## test: everything CI runs: lint, unit tests (race), short fuzzing, end-to-end, on a real node, the fault suite
## (the stages that need Debian packages install the missing ones first, as make demo does: see deps);
## the test tools' cold builds run in the background meanwhile (hack/prebuild.sh). It prints last each
## stage's verdict, every flaky test run again and every skipped test (hack/stages.sh, hack/gotest.sh).
## K8SGW_SKIP_NODE=1 skips the node stage and K8SGW_SKIP_BAREMETAL=1 the bare-metal one (both need root;
## without root and these, they fail); K8SGW_SKIP_FORK=1 the fork differential (it needs the fork's source
## archive, hack/fork.sh; .ci/run sets it, saying so, on a machine without the archive)
TEST_STAGES := lint unit chart-test fuzz e2e e2e-node chaos bench-smoke
test:
	@hack/prebuild.sh start
	@export K8SGW_TEST_SUMMARY=$$(mktemp "$${TMPDIR:-/tmp}/k8sgw-test-summary-XXXXXX"); \
	hack/stages.sh $(MAKE) $(TEST_STAGES); rc=$$?; hack/prebuild.sh stop; hack/prebuild.sh wait; \
	cat "$$K8SGW_TEST_SUMMARY"; rm -f "$$K8SGW_TEST_SUMMARY"; exit $$rc

## lint: gofmt, import groups (hack/imports.sh: goimports -local), go vet, no exported name that only
## tests use beyond hack/testexports/baseline.txt (which may only shrink), no compiled file tracked (hack/nobinaries),
## and the GitHub workflows (actionlint, built by hack/gotool.sh)
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@hack/imports.sh check
	@$(GO) run ./hack/nobinaries
	@$(GO) run ./hack/testexports -baseline hack/testexports/baseline.txt
	$(GO) vet ./...
	$(GO) vet -tags e2e ./test/e2e ./test/node
	$(GO) vet -tags chaos ./test/chaos
	@hack/gotool.sh actionlint -shellcheck= -pyflakes= .github/workflows/*.yml

## unit: unit, table and pipeline tests with the race detector (fuzz seeds included)
unit:
	$(GO) test -race -count=1 ./...

## chart-test: the chart's helm-unittest suites (charts/k8s-gateway/tests): every template and the values
## that change it, rendered without a control plane (helm-unittest built by hack/gotool.sh)
.PHONY: chart-test
chart-test:
	hack/gotool.sh helm-unittest --color=false charts/k8s-gateway

## fuzz: each fuzz target of every package for $(FUZZTIME) (hack/fuzz.sh: a run that failed only with
## the fuzzing coordinator's own deadline, go.dev/issue/75804, is run again and reported FLAKY)
fuzz:
	@hack/fuzz.sh $(GO) $(FUZZTIME)

## e2e: the built binary against a real kube-apiserver and etcd (hack/cluster.sh), checked with dig;
## with the bare-metal stage (TestBareMetal: MetalLB and Traefik write every status, BIND delegates, unbound validates)
e2e: deps
	hack/gotest.sh $(GO) test -tags e2e -count=1 -timeout 60m -v ./test/e2e

## e2e-baremetal: only the bare-metal stage of e2e (MetalLB, Traefik, BIND, unbound; needs root; hack/baremetal.sh)
e2e-baremetal: deps
	hack/gotest.sh $(GO) test -tags e2e -count=1 -timeout 30m -v -run '^TestBareMetal$$' ./test/e2e

## e2e-node: the image (Dockerfile, podman), the chart (helm) and the manifest as pods on a real node (needs root; hack/node.sh);
## make release against a loopback registry (docker-registry), its chart installed from there with the image pulled by containerd
e2e-node: deps
	hack/gotest.sh $(GO) test -tags e2e -count=1 -timeout 30m -v ./test/node

## chaos: the fault suite: the built binary under query load while the control plane, RBAC, CRDs,
## the Corefile and the input break and recover (a control plane of its own); writes nothing
chaos: deps
	hack/gotest.sh $(GO) test -tags chaos -count=1 -timeout 15m -v ./test/chaos

## bench: k8s_gateway vs stock CoreDNS (file, whoami) and Knot with dnsperf at 1k/10k/100k names; writes docs/operations/benchmarks.md;
## then bench-steering (weighted and geo names against plain ones, with and without geoip), bench-secondaries,
## and what 4 views of one cluster cost against 1 at 5k and 100k objects (hack/bench-views.sh)
bench:
	hack/bench.sh -out docs/operations/benchmarks.md $(BENCH_ARGS)
	$(MAKE) --no-print-directory bench-steering
	hack/secondaries-bench.sh $(SECONDARIES_ARGS)
	hack/bench-views.sh

## bench-secondaries: one primary feeding 2, 8 and 32 BIND and Knot secondaries: API change to every secondary
## answering (p50/max), IXFR and AXFR bytes, primary CPU per change; prints a table for docs/operations/benchmarks.md
## (SECONDARIES_ARGS="N,N CHANGES NAMES BURST"; the smoke, four secondaries, runs in e2e)
.PHONY: bench-secondaries
bench-secondaries:
	hack/secondaries-bench.sh $(SECONDARIES_ARGS)

## bench-steering: server CPU per query of a plain, a weighted and a geo name side by side, with the
## geoip plugin and a test MMDB (hack/geo.sh); prints a table for docs/operations/benchmarks.md
.PHONY: bench-steering
bench-steering:
	hack/geo.sh build
	"$$(hack/geo.sh path)/mmdb" -o "$${TMPDIR:-/tmp}/k8sgw-bench-steering.mmdb" 198.51.100.0/24=EU,DE,HE 203.0.113.0/24=NA,US,CA
	hack/bench.sh -steering "$${TMPDIR:-/tmp}/k8sgw-bench-steering.mmdb" $(BENCH_ARGS)

## bench-smoke: the benchmark at a tiny size, to check that it works (it asserts no speed)
# A control plane of its own, so that it never tears down one that `make bench` kept.
bench-smoke:
	K8SGW_BENCH_CLUSTER_DIR=$${XDG_CACHE_HOME:-$$HOME/.cache}/k8s_gateway/bench-smoke-cluster \
	K8SGW_BENCH_APISERVER_PORT=26743 K8SGW_BENCH_ETCD_PORT=24090 \
	hack/bench.sh -sizes 40,60 -rounds 1 -duration 1s -latency-duration 1s -rate 1000 -fresh 5 -churn 20

## bench-hostile: forged UPDATE messages (512 B, 16 KB, 64 KB; UDP and TCP) against the updates listener while
## dnsperf measures queries: server CPU per forged message, query rates; a signed update over TCP under 64
## connections without a key from 8 addresses (the smoke runs in e2e); see docs/operations/benchmarks.md
bench-hostile:
	hack/bench-hostile.sh $(HOSTILE_ARGS)

## demo: start a local control plane, demo objects and the plugin on 127.0.0.1:1053
demo:
	hack/demo.sh

## deps: install the Debian packages the tests and the demo need (apt-get, with sudo unless root), when missing
deps:
	hack/install-deps.sh

cluster-up:
	hack/cluster.sh up
cluster-down:
	hack/cluster.sh down

clean:
	rm -f $(BINARY)

# ---- Helm chart, install manifest, image, local cluster with Tilt ----------

HELM         ?= hack/helm.sh
MANIFEST     ?= examples/install-clusterwide.yml
IMAGE        ?= ghcr.io/seed-e581d630/k8s_gateway:$(VERSION)
# docker, or podman where there is no docker.
DOCKER       ?= $(shell command -v docker >/dev/null 2>&1 && echo docker || echo podman)
TILT         ?= tilt
# The values examples/install-clusterwide.yml is rendered with.
MANIFEST_ARGS := k8s-gateway charts/k8s-gateway --namespace kube-system --set domain=example.com --set helmLabels=false

.PHONY: manifest image up down release release-base

## manifest: render charts/k8s-gateway into $(MANIFEST) (helm from hack/helm.sh)
manifest:
	@set -e; tmp=$$(mktemp); trap 'rm -f "$$tmp"' EXIT; \
	{ \
		echo '# k8s_gateway for `kubectl apply -f`: the chart charts/k8s-gateway rendered with'; \
		echo '# its default values and: release k8s-gateway, namespace kube-system,'; \
		echo '# domain example.com (replace it in the ConfigMap'"'"'s Corefile with your zone).'; \
		echo '# The ServiceAccount gets list/watch on the published kinds, nothing else.'; \
		echo '# Without the labels of Helm (helmLabels=false): kubectl, not Helm, manages these objects.'; \
		echo '#'; \
		echo '#   helm template $(MANIFEST_ARGS)'; \
		echo '#'; \
		echo '# Generated by `make manifest`: do not edit (a test fails when it is stale).'; \
		$(HELM) template $(MANIFEST_ARGS); \
	} >"$$tmp"; \
	mv -f "$$tmp" $(MANIFEST); chmod 644 $(MANIFEST); echo "wrote $(MANIFEST)"

## image: the container image (Dockerfile), tagged $(IMAGE)
image:
	$(DOCKER) build --build-arg VERSION=$(VERSION) -t $(IMAGE) .

# make release: where the image and the chart go (host[:port][/path]), the base
# pinned by digest (default: the project's own, pushed to REGISTRY first), the output,
# and how to sign: key (COSIGN_KEY, a cosign key file; its password in the environment,
# COSIGN_PASSWORD), keyless (the release workflow's OIDC identity), none
# (default: key when COSIGN_KEY is set, else none).
REGISTRY     ?=
BASE_IMAGE   ?=
DIST         ?= dist
SIGN         ?=
COSIGN_KEY   ?=

## release: VERSION=vX.Y.Z REGISTRY=host[:port][/path]: linux/amd64 and linux/arm64 binaries, their SBOMs
## (CycloneDX) and SHA256SUMS in $(DIST)/; one multi-arch image (ko) to REGISTRY/k8s_gateway:VERSION and the chart,
## naming it by digest, to oci://REGISTRY/charts/k8s-gateway, both signed with cosign (SIGN), the image attested with
## the SBOMs and the build's provenance; without a container engine (hack/release.sh, CONTRIBUTING.md)
release:
	@[ -n "$(REGISTRY)" ] || { echo "make release: set REGISTRY=host[:port][/path] (and VERSION=vX.Y.Z)" >&2; exit 1; }
	LDFLAGS='$(LDFLAGS)' BASE_IMAGE='$(BASE_IMAGE)' DIST='$(DIST)' SIGN='$(SIGN)' COSIGN_KEY='$(COSIGN_KEY)' \
		hack/release.sh release '$(VERSION)' '$(REGISTRY)'

## release-base: REGISTRY=...: push the project's minimal base (the pinned CA bundle, user 65532) and print its
## digest, the same whoever builds it
release-base:
	@[ -n "$(REGISTRY)" ] || { echo "make release-base: set REGISTRY=host[:port][/path]" >&2; exit 1; }
	@hack/release.sh base '$(REGISTRY)'

## up: build and run the chart, the demo objects and a port-forward on a local cluster (Tiltfile)
up:
	$(TILT) up

## down: remove what `make up` deployed
down:
	$(TILT) down
