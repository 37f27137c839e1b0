# k8s_gateway: build, test and try out the CoreDNS plugin.

GO        ?= go
BINARY    ?= coredns
FUZZTIME  ?= 10s
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.1.0-dev)
LDFLAGS   := -s -w -X github.com/seed-e581d630/k8s_gateway.Version=$(VERSION)
export GOTOOLCHAIN ?= local

.PHONY: all build test lint unit fuzz e2e demo deps cluster-up cluster-down clean

all: build

## build: the CoreDNS binary with k8s_gateway compiled in (./coredns)
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BINARY) ./cmd/coredns

## test: everything CI runs: lint, unit tests (race), short fuzzing, end-to-end
test: lint unit fuzz e2e

## lint: gofmt and go vet
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./test/e2e

## unit: unit, table and pipeline tests with the race detector (fuzz seeds included)
unit:
	$(GO) test -race -count=1 ./...

## fuzz: each fuzz target for $(FUZZTIME)
fuzz:
	@for target in $$($(GO) test -list '^Fuzz' . | grep '^Fuzz'); do \
		echo "fuzzing $$target for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) . || exit 1; \
	done

## e2e: the built binary against a real kube-apiserver and etcd (hack/cluster.sh), checked with dig
e2e:
	$(GO) test -tags e2e -count=1 -timeout 40m -v ./test/e2e

## demo: start a local control plane, demo objects and the plugin on 127.0.0.1:1053
demo:
	hack/demo.sh

## deps: install the Debian packages the tests need
deps:
	hack/install-deps.sh

cluster-up:
	hack/cluster.sh up
cluster-down:
	hack/cluster.sh down

clean:
	rm -f $(BINARY)
