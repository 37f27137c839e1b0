#!/usr/bin/env bash
# make bench-hostile: the hostile-client benchmark of the updates option
# (test/e2e/acme_hostile_test.go): forged UPDATE messages of 512 B, 16 KB and
# 64 KB as fast as one client can, over UDP and TCP, while dnsperf measures
# normal queries; then 100 forged 64 KB messages a second; then signed
# updates over TCP while 64 connections without a key, from 8 loopback
# addresses, hold what they can. It prints the server's CPU per forged
# message, the query rates (min and median over the rounds) and how long the
# signed updates took, and writes the table to $K8SGW_HOSTILE_OUT when set.
# Usage: hack/bench-hostile.sh [ROUNDS [SECONDS]]   (default 5 rounds of 3 s)
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
hack/install-deps.sh
export K8SGW_HOSTILE_ROUNDS=${1:-5} K8SGW_HOSTILE_SECONDS=${2:-3}
# A control plane of its own, so that it never tears down another run's.
export K8SGW_E2E_CLUSTER_DIR=${K8SGW_E2E_CLUSTER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s_gateway/bench-hostile-cluster}
export K8SGW_E2E_APISERVER_PORT=${K8SGW_E2E_APISERVER_PORT:-26843}
export K8SGW_E2E_ETCD_PORT=${K8SGW_E2E_ETCD_PORT:-24190}
exec $GO test -tags e2e -count=1 -timeout 30m -v -run '^TestACMEHostileClients$' ./test/e2e
