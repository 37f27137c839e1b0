#!/usr/bin/env bash
# make demo: a local control plane, a few demo objects and the plugin answering
# on 127.0.0.1:1053, until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."

# On a terminal, Ctrl-C must reach this script alone. The terminal sends
# SIGINT to its foreground process group, which holds make too when this runs
# as `make demo`; GNU make then waits for the recipe and kills itself with
# SIGINT, whatever the recipe's exit status ("Error 130", exit 130). An
# interactive shell takes the terminal into a process group of its own (and
# gives it back when it exits), so the script runs in one.
if [[ -t 0 && -z ${K8SGW_DEMO_SHELL:-} ]]; then
	K8SGW_DEMO_SHELL=1 exec bash --norc --noprofile -i "$0" "$@"
fi
set +H # no history expansion in the interactive shell

PORT=${K8S_GATEWAY_PORT:-1053}
READY_PORT=${K8S_GATEWAY_READY_PORT:-18181}
pid=""
started="" # the control plane: "yes" when this run started it
interrupted=""
# cleanup runs once, on every exit. A stop the user asked for (Ctrl-C, TERM)
# exits 0 once the teardown succeeded; one line says what was stopped and removed.
cleanup() {
	local rc=$? what=() kept=""
	trap - EXIT INT TERM
	[[ $rc -eq 130 ]] && interrupted=yes # a foreground command got the Ctrl-C
	if [[ -n $pid ]] && kill "$pid" 2>/dev/null; then
		wait "$pid" 2>/dev/null || true
		what+=("stopped the plugin (pid $pid)")
	fi
	if [[ $started == yes && -z ${KEEP_CLUSTER:-} ]]; then
		local out
		if out=$(hack/cluster.sh down 2>&1); then
			what+=("stopped the control plane (etcd, kube-apiserver, kube-controller-manager) and removed its state ${KUBECONFIG%/*}")
		else
			printf '%s\n' "$out" >&2
			echo "demo: hack/cluster.sh down failed; see above" >&2
			exit 1
		fi
	elif [[ $started == yes ]]; then
		kept="; the control plane keeps running (KEEP_CLUSTER=1; hack/cluster.sh down removes it)"
	elif [[ $started == no ]]; then
		kept="; the control plane was running before the demo and keeps running (hack/cluster.sh down removes it)"
	fi
	local list="" w
	for w in "${what[@]}"; do list+="${list:+, }$w"; done
	if [[ -n $list$kept ]]; then echo "demo: ${list:-nothing to stop}${kept}"; fi
	[[ -n $interrupted ]] && exit 0
	exit "$rc"
}
trap cleanup EXIT
trap 'interrupted=yes; exit 130' INT TERM

eval "$(hack/cluster.sh env)" # KUBECONFIG is in the state dir
hack/install-deps.sh
# A control plane that was running before is left running.
if hack/cluster.sh status >/dev/null 2>&1; then started=no; else started=yes; fi
up=$(hack/cluster.sh up)
if [[ $up == *"# already running"* ]]; then started=no; fi
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

K8S_GATEWAY_PORT=$PORT K8S_GATEWAY_READY_PORT=$READY_PORT ./coredns -conf test/e2e/testdata/Corefile >/tmp/k8s_gateway-demo.log 2>&1 &
pid=$!
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
echo "demo: the plugin exited; its log: /tmp/k8s_gateway-demo.log" >&2
exit 1
