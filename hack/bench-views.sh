#!/usr/bin/env bash
# make bench, views: what four views (k8s_gateway blocks) of one cluster
# cost against one, measured from outside (resident memory, Go heap, watches,
# query rate; test/e2e TestViewsCost), at 5,000 LoadBalancer Services (an A
# and an SRV name each; the blocks read Services only) and at 100,000
# objects (those Services and 95,000 single-host Ingresses; every kind read).
# The objects live in a control plane of its own, kept between runs: the
# first run creates them (about 30 min on a loaded 2-core VM, most of it the
# API server's ClusterIP allocation for the Services); a later run checks
# them (listed in pages) and measures, in a few minutes. Bounded by the
# test's timeout.
# K8SGW_BENCH_VIEWS_SIZES picks the sizes (default "5000 100000").
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}

export K8SGW_E2E_CLUSTER_DIR=${K8SGW_BENCH_VIEWS_CLUSTER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s_gateway/bench-views-cluster}
export K8SGW_E2E_APISERVER_PORT=${K8SGW_BENCH_VIEWS_APISERVER_PORT:-27143}
export K8SGW_E2E_ETCD_PORT=${K8SGW_BENCH_VIEWS_ETCD_PORT:-24543}
export K8SGW_E2E_KEEP_CLUSTER=1 K8SGW_VIEWS_COST=1 K8SGW_VIEWS_COST_KEEP=1
export K8SGW_VIEWS_COST_VIEWS=1,4 K8SGW_VIEWS_COST_SERVICES=5000

for n in ${K8SGW_BENCH_VIEWS_SIZES:-5000 100000}; do
	resources=""
	if ((n <= K8SGW_VIEWS_COST_SERVICES)); then
		resources=Service # the Ingresses of the bigger size stay out
	fi
	echo "[bench-views] $n objects"
	K8SGW_VIEWS_COST_NAMES=$n K8SGW_VIEWS_COST_RESOURCES=$resources \
		$GO test -tags e2e -count=1 -v -timeout 90m -run '^TestViewsCost$' ./test/e2e |
		sed -n '/objects (/,/^--- /p'
done
echo "[bench-views] the control plane stays up for the next run: K8SGW_CLUSTER_DIR=$K8SGW_E2E_CLUSTER_DIR hack/cluster.sh down stops it"
