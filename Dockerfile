# syntax=docker/dockerfile:1
# CoreDNS with the k8s_gateway plugin: a static binary on distroless, run as
# an unprivileged user on port 1053 (the chart maps the Service's port 53).
#
#   make image                     # docker build -t k8s-gateway:dev .
#   docker build --build-arg VERSION=v1.2.3 -t ghcr.io/seed-e581d630/k8s_gateway:v1.2.3 .

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
# Dependencies first, so that a source change reuses the module layer.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=v0.1.0-dev
ARG TARGETOS=linux
ARG TARGETARCH
# The flags of `make build`.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
      -ldflags "-s -w -X github.com/seed-e581d630/k8s_gateway.Version=${VERSION}" \
      -o /out/coredns ./cmd/coredns

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/coredns /coredns
USER 65532:65532
EXPOSE 1053/udp 1053/tcp
ENTRYPOINT ["/coredns"]
