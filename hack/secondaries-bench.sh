#!/usr/bin/env bash
# make bench-secondaries (and make bench): one k8s_gateway primary feeding N
# secondaries, BIND and Knot in turn, on loopback (test/e2e/secondaries_scale_test.go).
# For each N it writes a Service's load balancer address to the API server
# CHANGES times and prints: the time until every secondary answers the new
# address (p50 and max), the bytes of the IXFR each secondary transfers and of
# an AXFR of the zone, and the primary's CPU time per change; then a burst of
# BURST changes written back to back (serials, IXFRs and AXFRs, bytes per
# secondary); then the largest N again with a quarter of its NOTIFY targets
# never answering (N/4 dead addresses among 3N/4 secondaries, one listed
# first). The go test output of each run is kept in
# $TMPDIR/k8sgw-secondaries-bench-N-DEAD.log.
# Usage: hack/secondaries-bench.sh [N,N,... [CHANGES [NAMES [BURST]]]]   (default 2,8,32  10  200  20)
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
hack/install-deps.sh
counts=${1:-2,8,32} changes=${2:-10} names=${3:-200} burst=${4:-20}
# A control plane of its own, so that it never tears down another run's.
export K8SGW_E2E_CLUSTER_DIR=${K8SGW_E2E_CLUSTER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s_gateway/bench-secondaries-cluster}
export K8SGW_E2E_APISERVER_PORT=${K8SGW_E2E_APISERVER_PORT:-26943}
export K8SGW_E2E_ETCD_PORT=${K8SGW_E2E_ETCD_PORT:-24290}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
run() { # N DEAD
	local log=${TMPDIR:-/tmp}/k8sgw-secondaries-bench-$1-$2.log
	if ! K8SGW_SCALE_SECONDARIES=$1 K8SGW_SCALE_BLACKHOLE=$2 K8SGW_SCALE_CHANGES=$changes K8SGW_SCALE_BURST=$burst \
		K8SGW_SCALE_NAMES=$names K8SGW_SCALE_OUT=$out K8SGW_E2E_KEEP_CLUSTER=1 \
		$GO test -tags e2e -count=1 -v -timeout 20m -run '^TestSecondariesScale$' ./test/e2e >"$log" 2>&1; then
		tail -50 "$log" >&2
		echo "secondaries-bench: N=$1 failed; the whole output is in $log" >&2
		exit 1
	fi
}
IFS=, read -ra ns <<<"$counts"
for n in "${ns[@]}"; do
	echo "N=$n ..." >&2
	run "$n" 0
done
last=${ns[-1]}
dead=$((last / 4))
if [ "$dead" -gt 0 ]; then
	echo "N=$last with $dead NOTIFY targets that never answer ..." >&2
	run "$((last - dead))" "$dead"
fi
K8SGW_CLUSTER_DIR=$K8SGW_E2E_CLUSTER_DIR K8SGW_APISERVER_PORT=$K8SGW_E2E_APISERVER_PORT K8SGW_ETCD_PORT=$K8SGW_E2E_ETCD_PORT \
	hack/cluster.sh down >/dev/null 2>&1 || true
echo "$(date -u +%F) $(nproc) cores, $(uname -m), $(named -v 2>/dev/null || /usr/sbin/named -v), knotd $(/usr/sbin/knotd -V 2>/dev/null | awk '{print $NF}'); $names+2 names, $changes changes per row"
echo
echo "| secondaries (BIND+Knot) | dead NOTIFY targets | each secondary answers, p50 | every secondary answers, p50 | max | the plugin answers, p50 | IXFR bytes per change and secondary | AXFR bytes | primary CPU per change |"
echo "|---|---|---|---|---|---|---|---|---|"
awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	printf "| %s (%s+%s) | %s | %s ms | %s ms | %s ms | %s ms | %s | %s | %s ms |\n", v["secondaries"], v["bind"], v["knot"],
		v["blackhole"], v["each_p50_ms"], v["p50_ms"], v["max_ms"], v["plugin_p50_ms"], v["ixfr_bytes"], v["axfr_bytes"], v["cpu_ms_per_change"] }' "$out"
echo
echo "Bursts of $burst changes written back to back:"
echo
echo "| secondaries | dead NOTIFY targets | written in | every secondary current after the last write | serials | IXFRs received | AXFRs received | bytes per secondary |"
echo "|---|---|---|---|---|---|---|---|"
awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	printf "| %s | %s | %s ms | %s ms | %s | %s | %s | %s |\n", v["secondaries"], v["blackhole"],
		v["burst_write_ms"], v["burst_after_ms"], v["burst_serials"], v["burst_ixfr"], v["burst_axfr"], v["burst_bytes_per_secondary"] }' "$out"
