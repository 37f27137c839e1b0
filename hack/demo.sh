#!/usr/bin/env bash
# make demo: a local control plane, a few demo objects and the plugin answering
# on 127.0.0.1:1053, until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${K8S_GATEWAY_PORT:-1053}
READY_PORT=${K8S_GATEWAY_READY_PORT:-18181}
hack/install-deps.sh
hack/cluster.sh up
eval "$(hack/cluster.sh env)"
echo "building coredns with k8s_gateway..."
make --no-print-directory build >/dev/null

kc() { "$KUBECTL" --kubeconfig "$KUBECONFIG" "$@"; }
lb() { # NAMESPACE RESOURCE NAME ADDRESS...
	local ns=$1 res=$2 name=$3 items=() a
	shift 3
	for a in "$@"; do
		if [[ $a =~ ^[0-9.]+$ || $a == *:* ]]; then items+=("{\"ip\":\"$a\"}"); else items+=("{\"hostname\":\"$a\"}"); fi
	done
	local IFS=,
	kc -n "$ns" patch "$res" "$name" --subresource=status --type=merge \
		-p "{\"status\":{\"loadBalancer\":{\"ingress\":[${items[*]}]}}}" >/dev/null
}

kc apply -f examples/demo.yml >/dev/null
lb demo ingress shop 192.0.2.10 2001:db8::10
lb demo ingress wildcard 192.0.2.11
lb demo ingress cloud lb-42.elb.example.net
lb kube-system service dns1 192.0.2.53 2001:db8::53
lb demo service postgres 192.0.2.20

K8S_GATEWAY_PORT=$PORT K8S_GATEWAY_READY_PORT=$READY_PORT ./coredns -conf examples/Corefile >/tmp/k8s_gateway-demo.log 2>&1 &
pid=$!
cleanup() {
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	if [[ -z ${KEEP_CLUSTER:-} ]]; then hack/cluster.sh down; fi
}
trap cleanup EXIT INT TERM
for _ in $(seq 100); do
	curl -fs "http://127.0.0.1:$READY_PORT/ready" >/dev/null 2>&1 && break
	kill -0 "$pid" 2>/dev/null || { cat /tmp/k8s_gateway-demo.log; exit 1; }
	sleep 0.1
done

echo
echo "k8s_gateway answers for example.com on 127.0.0.1:$PORT (log: /tmp/k8s_gateway-demo.log)."
echo "Try these (live answers below each):"
for q in "shop.example.com A" "shop.example.com AAAA" "api.shop.example.com A" "anything.apps.example.com A" \
	"cloud.example.com A" "postgres.demo.example.com A" "_postgres._tcp.postgres.demo.example.com SRV" \
	"db.example.com A" "example.com NS" "example.com SOA" "internal.demo.example.com A" "shop.example.com MX"; do
	set -- $q
	echo
	echo "\$ dig @127.0.0.1 -p $PORT $1 $2 +noall +answer +authority +additional +comments"
	dig @127.0.0.1 -p "$PORT" "$1" "$2" +noall +answer +authority +additional +comments | grep -v '^;; \(Got answer\|OPT\|QUESTION\)\|^; EDNS\|^$' || true
done
echo
echo "Change objects with: $KUBECTL --kubeconfig $KUBECONFIG ... (export KUBECONFIG=$KUBECONFIG)"
echo "Press Ctrl-C to stop and tear everything down (KEEP_CLUSTER=1 keeps the control plane)."
wait "$pid"
