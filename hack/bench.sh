#!/usr/bin/env bash
# make bench: k8s_gateway against stock CoreDNS (file, whoami) and Knot DNS,
# with dnsperf, on a local control plane of its own (hack/cluster.sh).
# Arguments go to test/bench (see `go run ./test/bench -h`); for example
#   hack/bench.sh -sizes 1000,10000 -rounds 3 -out docs/operations/benchmarks.md
# K8SGW_BENCH_KEEP=1 keeps the control plane and its objects for the next run,
# so that a bigger size creates only the difference.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}

hack/install-deps.sh
export K8SGW_CLUSTER_DIR=${K8SGW_BENCH_CLUSTER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s_gateway/bench-cluster}
export K8SGW_APISERVER_PORT=${K8SGW_BENCH_APISERVER_PORT:-26643}
export K8SGW_ETCD_PORT=${K8SGW_BENCH_ETCD_PORT:-23990}
hack/cluster.sh up >/dev/null
eval "$(hack/cluster.sh env)"

bin=$(mktemp -d)
trap 'rm -rf "$bin"; if [[ -z ${K8SGW_BENCH_KEEP:-} ]]; then hack/cluster.sh down; fi' EXIT
make --no-print-directory build BINARY="$bin/coredns" >/dev/null
$GO build -o "$bin/coredns-lean" ./test/bench/coredns-lean
$GO build -o "$bin/bench" ./test/bench
# The servers get CPU 0 (where knotd puts its UDP worker itself); the tool,
# dnsperf and the control plane get CPU 1, or share CPU 0 on a single core.
client=1
if (($(nproc --all) < 2)); then client=0; fi
taskset -c "$client" "$bin/bench" -kubeconfig "$KUBECONFIG" -coredns "$bin/coredns" -lean "$bin/coredns-lean" \
	-cluster-dir "$K8SGW_CLUSTER_DIR" -server-cpu 0 -client-cpu "$client" "$@"
