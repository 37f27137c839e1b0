#!/usr/bin/env bash
# hack/cluster.sh - build, cache and run a real local Kubernetes control plane
# (etcd + kube-apiserver + kube-controller-manager) on 127.0.0.1, for the
# k8s_gateway end-to-end tests and demo. Only needs Go, the Go module proxy
# and (for openssl, when missing) Debian apt. See hack/README.md.
#
# Usage: hack/cluster.sh build|up|down|status|env|stop-apiserver|start-apiserver
#
# Progress goes to stderr; `up` and `env` print shell `export` lines on
# stdout, so `eval "$(hack/cluster.sh up)"` works.

set -euo pipefail

# ---------------------------------------------------------------- versions --
K8S_VERSION=v1.37.1          # k8s.io/kubernetes
K8S_STAGING_VERSION=v0.37.1  # published k8s.io/* staging modules of that release
ETCD_VERSION=v3.6.16         # go.etcd.io/etcd/server/v3

# ---------------------------------------------------------------- layout ----
CACHE=${K8SGW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s_gateway}
BIN=$CACHE/bin
SRC=$CACHE/src
STATE=${K8SGW_CLUSTER_DIR:-$CACHE/cluster}
STATE=${STATE%/}
MARKER=.k8sgw-cluster          # proves a state dir is ours before rm -rf

READY_TIMEOUT=${K8SGW_READY_TIMEOUT:-90}  # seconds to wait for /readyz
STOP_TIMEOUT=${K8SGW_STOP_TIMEOUT:-20}    # seconds between TERM and KILL

COMPONENTS=(etcd kube-apiserver kube-controller-manager)
BINARIES=(etcd kube-apiserver kube-controller-manager kubectl)
# The node's binaries (hack/node.sh), built on request only.
NODE_BINARIES=(kubelet kube-scheduler kube-proxy)
# Commands of k8s.io/kubernetes that the wrapper module builds.
K8S_TOOLS=(kube-apiserver kube-controller-manager kubectl "${NODE_BINARIES[@]}")

# Controllers kube-controller-manager runs (v1.37 names, all "-controller"
# suffixed): namespaces finish terminating, garbage collection, default
# ServiceAccounts (+ legacy token secrets), EndpointSlices, and the aggregated
# admin/edit/view ClusterRoles get their rules.
KCM_CONTROLLERS=${K8SGW_KCM_CONTROLLERS:-namespace-controller,garbage-collector-controller,serviceaccount-controller,serviceaccount-token-controller,endpointslice-controller,clusterrole-aggregation-controller}
# With a node, pods need Deployments, ReplicaSets, the kube-root-ca.crt
# ConfigMap of their token volumes, a node that loses its not-ready taint,
# PodDisruptionBudgets and the removal of orphaned pods.
NODE_KCM_CONTROLLERS=deployment-controller,replicaset-controller,root-ca-certificate-publisher-controller,node-lifecycle-controller,disruption-controller,pod-garbage-collector-controller,horizontal-pod-autoscaler-controller

# shellcheck source=hack/node.sh
source "$(dirname "${BASH_SOURCE[0]}")/node.sh"

log() { printf '[cluster.sh] %s\n' "$*" >&2; }
UP_HINT=""
die() {
	printf '[cluster.sh] ERROR: %s\n' "$*" >&2
	[[ -z $UP_HINT ]] || printf '[cluster.sh] %s\n' "$UP_HINT" >&2
	exit 1
}

usage() {
	cat >&2 <<EOF
usage: $0 <command>

  build            build etcd, kube-apiserver, kube-controller-manager, kubectl
                   into $BIN (only what is missing)
  up               build if needed, start the control plane, print KUBECONFIG
  down             stop every component and remove $STATE
  status           show which components are running
  env              print export KUBECONFIG=... and export KUBECTL=...
  stop-apiserver   stop only kube-apiserver (etcd data is kept)
  start-apiserver  start kube-apiserver again and wait for /readyz

environment: K8SGW_CACHE, K8SGW_CLUSTER_DIR, K8SGW_ETCD_PORT (default 23790,
peer = +1), K8SGW_APISERVER_PORT (default 26443), K8SGW_KCM_PORT (default
apiserver port + 10000), K8SGW_READY_TIMEOUT (default 90 s).
EOF
}

# ================================================================ build ======

setup_go() {
	if ! command -v go >/dev/null 2>&1; then
		[[ -x /usr/local/go/bin/go ]] || die "go not found (looked in PATH and /usr/local/go/bin)"
		PATH=/usr/local/go/bin:$PATH
	fi
	export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0
	export GOFLAGS="-mod=mod -buildvcs=false"
}

# go_logged LOGFILE CMD... : run a go command with output in LOGFILE; on
# failure show the tail and explain module proxy refusals.
go_logged() {
	local logf=$1
	shift
	if "$@" >"$logf" 2>&1; then
		return 0
	fi
	tail -n 40 "$logf" >&2 || true
	if grep -Eq '403 Forbidden|410 Gone|404 Not Found|: reading https?://[^ ]*: [0-9]{3}|unknown revision|invalid version' "$logf"; then
		die "the Go module proxy refused a download (see above). This script pins k8s.io/kubernetes $K8S_VERSION, staging modules $K8S_STAGING_VERSION and etcd $ETCD_VERSION because the proxy is known to serve them; some versions (e.g. v1.37.2) answer 403. Command: $*"
	fi
	die "command failed (full log: $logf): $*"
}

# mod_download MODULE VERSION : prints the path of the module's go.mod file.
mod_download() {
	local mod=$1 ver=$2 out
	mkdir -p "$SRC"
	out=$(cd "$SRC" && go mod download -json "$mod@$ver" 2>&1) || true
	if ! grep -q '"GoMod"' <<<"$out" || grep -q '"Error"' <<<"$out"; then
		printf '%s\n' "$out" >&2
		die "cannot download $mod@$ver from the Go module proxy (a refused version answers 403/410; pin one the proxy serves)"
	fi
	sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p' <<<"$out"
}

# stamp_ok FILE CONTENT : true when FILE holds exactly CONTENT.
stamp_ok() { [[ -f $1 && "$(cat "$1")" == "$2" ]]; }

binary_ok() { # NAME VERSION
	[[ -x $BIN/$1 ]] && stamp_ok "$BIN/.$1.version" "$2"
}

# Wrapper module for etcd: `go install go.etcd.io/etcd/server/v3@...` is
# refused because of its replace directives, so build it from a tiny main
# module of our own that just calls etcdmain.Main (what server/main.go does).
prepare_etcd_src() {
	local dir=$SRC/etcd stamp="etcd=$ETCD_VERSION"
	stamp_ok "$dir/.stamp" "$stamp" && return 0
	log "preparing etcd $ETCD_VERSION wrapper module in $dir"
	local gomod goline
	gomod=$(mod_download go.etcd.io/etcd/server/v3 "$ETCD_VERSION")
	goline=$(awk '$1 == "go" && NF == 2 { print $2; exit }' "$gomod")
	rm -rf "$dir"
	mkdir -p "$dir"
	cat >"$dir/main.go" <<'EOF'
// Generated by k8s_gateway hack/cluster.sh: the etcd server binary.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
EOF
	(
		cd "$dir"
		go_logged "$dir/prepare.log" go mod init k8sgw.local/etcd-build
		go_logged "$dir/prepare.log" go mod edit -require="go.etcd.io/etcd/server/v3@$ETCD_VERSION" ${goline:+-go="$goline"}
		go_logged "$dir/prepare.log" go mod tidy
	)
	printf '%s' "$stamp" >"$dir/.stamp"
}

# Wrapper module for Kubernetes: requires k8s.io/kubernetes and points every
# staging module (the ./staging/src replace block of kubernetes' own go.mod,
# read from the module cache) at its published v0.x.y twin.
prepare_kubernetes_src() {
	local dir=$SRC/kubernetes stamp="kubernetes=$K8S_VERSION staging=$K8S_STAGING_VERSION tools=${K8S_TOOLS[*]}"
	stamp_ok "$dir/.stamp" "$stamp" && return 0
	log "preparing kubernetes $K8S_VERSION wrapper module in $dir (downloads modules on first run)"
	local gomod goline
	gomod=$(mod_download k8s.io/kubernetes "$K8S_VERSION")
	[[ -f $gomod ]] || die "go.mod of k8s.io/kubernetes@$K8S_VERSION not found at '$gomod'"

	local -a staging edits
	mapfile -t staging < <(awk '
		/=>[[:space:]]*\.\/staging\// {
			for (i = 1; i <= NF; i++) if ($i == "=>") { print $(i - 1); break }
		}' "$gomod" | sort -u)
	((${#staging[@]} > 0)) || die "found no ./staging replace directives in $gomod"
	goline=$(awk '$1 == "go" && NF == 2 { print $2; exit }' "$gomod")

	edits=(-require="k8s.io/kubernetes@$K8S_VERSION")
	[[ -n $goline ]] && edits+=(-go="$goline")
	local m
	for m in "${staging[@]}"; do
		edits+=(-replace="$m=$m@$K8S_STAGING_VERSION")
	done
	# godebug lines (single or block form) keep the runtime defaults upstream uses.
	while read -r m; do
		[[ -n $m ]] && edits+=(-godebug="$m")
	done < <(awk '
		/^godebug[[:space:]]*\(/ { inblk = 1; next }
		inblk && /^\)/ { inblk = 0; next }
		inblk && NF { print $1; next }
		$1 == "godebug" && NF == 2 { print $2 }' "$gomod")
	for m in "${K8S_TOOLS[@]}"; do
		edits+=(-tool="k8s.io/kubernetes/cmd/$m")
	done

	rm -rf "$dir"
	mkdir -p "$dir"
	(
		cd "$dir"
		go_logged "$dir/prepare.log" go mod init k8sgw.local/kubernetes-build
		go_logged "$dir/prepare.log" go mod edit "${edits[@]}"
		log "resolving kubernetes dependencies (${#staging[@]} staging modules -> $K8S_STAGING_VERSION)"
		go_logged "$dir/prepare.log" go mod tidy
	)
	printf '%s' "$stamp" >"$dir/.stamp"
}

k8s_ldflags() {
	local v=${K8S_VERSION#v} major minor date pkg
	major=${v%%.*}
	minor=${v#*.}
	minor=${minor%%.*}
	date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	printf '%s' "-s -w"
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		printf ' %s' \
			"-X $pkg.gitVersion=$K8S_VERSION" \
			"-X $pkg.gitMajor=$major" \
			"-X $pkg.gitMinor=$minor" \
			"-X $pkg.gitTreeState=clean" \
			"-X $pkg.gitCommit=" \
			"-X $pkg.buildDate=$date"
	done
}

TMP_BINARY=""
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup_tmp() { [[ -z $TMP_BINARY ]] || rm -f "$TMP_BINARY"; }

# go_build NAME VERSION DIR PACKAGE LDFLAGS : build into a temp file, rename.
go_build() {
	local name=$1 ver=$2 dir=$3 pkg=$4 ldflags=$5 start
	start=$SECONDS
	log "building $name $ver (first build takes several minutes)..."
	TMP_BINARY=$BIN/.$name.tmp.$$
	(cd "$dir" && go_logged "$dir/build-$name.log" go build -trimpath -ldflags "$ldflags" -o "$TMP_BINARY" "$pkg")
	mv -f "$TMP_BINARY" "$BIN/$name"
	TMP_BINARY=""
	printf '%s' "$ver" >"$BIN/.$name.version"
	log "built $BIN/$name in $((SECONDS - start))s"
}

# cmd_build [NAME...] : build the named binaries (default: the control plane's)
# that are missing from $BIN.
cmd_build() {
	local -a names=("$@")
	((${#names[@]})) || names=("${BINARIES[@]}")
	local name missing=0
	for name in "${names[@]}"; do
		case $name in
		etcd) binary_ok etcd "$ETCD_VERSION" || missing=1 ;;
		*) binary_ok "$name" "$K8S_VERSION" || missing=1 ;;
		esac
	done
	((missing)) || return 0

	setup_go
	mkdir -p "$BIN" "$SRC"
	# One builder at a time per cache (parallel test packages may race here).
	exec {build_lock}>"$CACHE/.build.lock"
	if ! flock -n "$build_lock"; then
		log "another build is running in $CACHE; waiting for it"
		flock "$build_lock"
	fi
	# Leftovers of a build that was killed (the lock says none is running now).
	for name in "${names[@]}"; do rm -f "$BIN/.$name.tmp."*; done
	trap cleanup_tmp EXIT

	local ldflags
	ldflags=$(k8s_ldflags)
	for name in "${names[@]}"; do
		if [[ $name == etcd ]]; then
			binary_ok etcd "$ETCD_VERSION" && continue
			prepare_etcd_src
			go_build etcd "$ETCD_VERSION" "$SRC/etcd" . "-s -w"
			continue
		fi
		binary_ok "$name" "$K8S_VERSION" && continue
		prepare_kubernetes_src
		go_build "$name" "$K8S_VERSION" "$SRC/kubernetes" "k8s.io/kubernetes/cmd/$name" "$ldflags"
	done
	trap - EXIT
	exec {build_lock}>&-
}

# ================================================================ cluster ====

ETCD_PORT="" ETCD_PEER_PORT="" APISERVER_PORT="" KCM_PORT="" NODE_MODE="" APISERVER_ADDR=""

# Ports: recorded in the state dir on first `up`, so later commands (and a
# changed environment) keep talking to the same cluster.
load_ports() {
	if [[ -f $STATE/ports.env ]]; then
		# shellcheck source=/dev/null
		source "$STATE/ports.env"
		APISERVER_ADDR=${APISERVER_ADDR:-127.0.0.1}  # state dirs of before the node
		return 0
	fi
	ETCD_PORT=${K8SGW_ETCD_PORT:-23790}
	ETCD_PEER_PORT=$((ETCD_PORT + 1))
	APISERVER_PORT=${K8SGW_APISERVER_PORT:-26443}
	KCM_PORT=${K8SGW_KCM_PORT:-}
	# K8SGW_NODE=1: a node beside the control plane (hack/node.sh). The API
	# server then serves on the pods' bridge, where they can reach it.
	NODE_MODE=${K8SGW_NODE:-}
	[[ $NODE_MODE == 1 ]] || NODE_MODE=""
	APISERVER_ADDR=127.0.0.1
	[[ -z $NODE_MODE ]] || APISERVER_ADDR=$NODE_ADDR
	local p
	for p in "$ETCD_PORT" "$APISERVER_PORT" ${KCM_PORT:+"$KCM_PORT"}; do
		if ! [[ $p =~ ^[0-9]+$ ]] || ((p <= 0 || p >= 65535)); then
			die "invalid port '$p'"
		fi
	done
}

save_ports() {
	printf 'ETCD_PORT=%s\nETCD_PEER_PORT=%s\nAPISERVER_PORT=%s\nKCM_PORT=%s\nNODE_MODE=%s\nAPISERVER_ADDR=%s\n' \
		"$ETCD_PORT" "$ETCD_PEER_PORT" "$APISERVER_PORT" "$KCM_PORT" "$NODE_MODE" "$APISERVER_ADDR" >"$STATE/ports.env"
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The controller manager's secure port: derived from the apiserver port
# (+10000, or -10000 where that lands in the kernel's ephemeral range, in
# which an outgoing connection may hold the port without listening on it, so
# that the probe below finds it free and the bind fails), moving up until a
# free one is found.
pick_kcm_port() {
	[[ -n $KCM_PORT ]] && return 0
	local p=$((APISERVER_PORT + 10000)) i lo=32768 hi=60999
	read -r lo hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	if ((p >= 65535 || p >= lo && p <= hi)) && ((APISERVER_PORT - 10000 >= 1024)); then
		p=$((APISERVER_PORT - 10000))
	fi
	for ((i = 0; i < 100; i++, p++)); do
		if ((p != ETCD_PORT && p != ETCD_PEER_PORT)) && ! port_in_use "$p"; then
			KCM_PORT=$p
			return 0
		fi
	done
	die "no free port for kube-controller-manager near $((APISERVER_PORT + 10000))"
}

# ---- processes ----

bin_real() { realpath -m "$(node_bin "$1")"; }

# proc_alive NAME : the recorded PID exists and runs our binary.
proc_alive() {
	local name=$1 pidf=$STATE/$1.pid pid exe
	[[ -s $pidf ]] || return 1
	pid=$(<"$pidf")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
	[[ $exe == "$(bin_real "$name")" || $exe == "$(bin_real "$name") (deleted)" ]]
}

recorded_pid() { cat "$STATE/$1.pid" 2>/dev/null || true; }

# start_proc NAME ARGS... : detached (own session), stdin closed, output to
# logs/NAME.log, PID in NAME.pid (written by the process itself before exec).
start_proc() {
	local name=$1 i
	shift
	local pidf=$STATE/$name.pid logf=$STATE/logs/$name.log
	rm -f "$pidf"
	printf '\n==== %s starting %s ====\n' "$(date -u +%FT%TZ)" "$name" >>"$logf"
	# shellcheck disable=SC2016 # expanded by the inner bash
	setsid bash -c 'echo "$$" >"$0.tmp" && mv -f "$0.tmp" "$0" && exec "$@"' \
		"$pidf" "$(node_bin "$name")" "$@" </dev/null >>"$logf" 2>&1 {state_lock}>&- &
	for ((i = 0; i < 100; i++)); do
		[[ -s $pidf ]] && break
		sleep 0.05
	done
	[[ -s $pidf ]] || die "$name did not start (log: $logf)"
	# The PID is written just before exec: wait for the exec to happen so a
	# proc_alive right after this cannot mistake the wrapper for a dead process.
	local pid
	pid=$(<"$pidf")
	for ((i = 0; i < 100; i++)); do
		proc_alive "$name" && return 0
		[[ -d /proc/$pid ]] || break
		sleep 0.05
	done
	proc_alive "$name" || { log_tail "$name"; die "$name exited right after starting"; }
}

# stop_proc NAME : TERM, then KILL after STOP_TIMEOUT seconds.
stop_proc() {
	local name=$1 pid i
	if ! proc_alive "$name"; then
		rm -f "$STATE/$name.pid"
		return 0
	fi
	pid=$(recorded_pid "$name")
	log "stopping $name (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	local deadline=$((SECONDS + STOP_TIMEOUT))
	while ((SECONDS < deadline)) && proc_alive "$name"; do
		sleep 0.1
	done
	if proc_alive "$name"; then
		log "$name did not exit after ${STOP_TIMEOUT}s; sending KILL"
		kill -KILL "$pid" 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do
			proc_alive "$name" || break
			sleep 0.1
		done
		proc_alive "$name" && die "could not stop $name (pid $pid)"
	fi
	rm -f "$STATE/$name.pid"
}

log_tail() {
	local name=$1 n=${2:-40}
	printf -- '----- last %s lines of %s -----\n' "$n" "$STATE/logs/$name.log" >&2
	tail -n "$n" "$STATE/logs/$name.log" >&2 2>/dev/null || true
	printf -- '-----\n' >&2
}

# ---- state: certificates, tokens, kubeconfigs ----

ensure_openssl() {
	command -v openssl >/dev/null 2>&1 && return 0
	[[ $(id -u) -eq 0 ]] || die "openssl is missing; install it (apt-get install openssl)"
	log "installing openssl with apt-get"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >&2
}

prepare_state() {
	if [[ -d $STATE && ! -f $STATE/$MARKER ]] && [[ -n $(ls -A "$STATE") ]]; then
		die "$STATE exists and was not created by this script; refusing to use it"
	fi
	mkdir -p "$STATE/logs" "$STATE/pki" "$STATE/etcd-data"
	chmod 700 "$STATE/etcd-data" "$STATE/pki"
	touch "$STATE/$MARKER"
	[[ -f $STATE/ports.env ]] || save_ports

	local pki=$STATE/pki
	if [[ ! -f $pki/.done ]]; then
		ensure_openssl
		log "creating CA, serving certificate and service-account keys in $pki"
		(
			umask 077
			cd "$pki"
			cat >openssl.cnf <<EOF
[req]
distinguished_name = dn_ca
prompt = no

[dn_ca]
CN = k8s_gateway test cluster CA

[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign, digitalSignature
subjectKeyIdentifier = hash

[v3_server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = IP:127.0.0.1, IP:$APISERVER_ADDR, IP:10.96.0.1, DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local
EOF
			openssl req -x509 -new -nodes -newkey rsa:2048 -sha256 -days 3650 \
				-config openssl.cnf -extensions v3_ca -keyout ca.key -out ca.crt 2>/dev/null
			openssl req -new -nodes -newkey rsa:2048 -sha256 -config openssl.cnf \
				-subj /CN=kube-apiserver -keyout apiserver.key -out apiserver.csr 2>/dev/null
			openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key \
				-set_serial "0x$(openssl rand -hex 16)" -days 3650 -sha256 \
				-extfile openssl.cnf -extensions v3_server -out apiserver.crt 2>/dev/null
			openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key 2>/dev/null
			openssl pkey -in sa.key -pubout -out sa.pub 2>/dev/null
			printf '%s,admin,k8sgw-admin,"system:masters"\n' "$(openssl rand -hex 32)" >tokens.csv
			rm -f apiserver.csr
			touch .done
		)
	fi

	local token ca_data
	token=$(cut -d, -f1 "$pki/tokens.csv")
	ca_data=$(base64 -w0 <"$pki/ca.crt")
	write_kubeconfig "$STATE/kubeconfig" "$token" "$ca_data"
	write_kubeconfig "$STATE/kube-controller-manager.kubeconfig" "$token" "$ca_data"
}

write_kubeconfig() {
	local file=$1 token=$2 ca_data=$3
	(
		umask 077
		cat >"$file.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: k8sgw
  cluster:
    server: https://$APISERVER_ADDR:$APISERVER_PORT
    certificate-authority-data: $ca_data
users:
- name: admin
  user:
    token: $token
contexts:
- name: k8sgw
  context:
    cluster: k8sgw
    user: admin
    namespace: default
current-context: k8sgw
EOF
		mv -f "$file.tmp" "$file"
	)
}

# ---- components ----

etcd_healthy() {
	local resp
	# shellcheck disable=SC2016 # expanded by the inner bash
	resp=$(timeout 3 bash -c '
		exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&3
		cat <&3' _ "$ETCD_PORT" 2>/dev/null) || return 1
	[[ $resp == *'"health":"true"'* ]]
}

start_etcd() {
	port_in_use "$ETCD_PORT" && die "port $ETCD_PORT (etcd client) is already in use; set K8SGW_ETCD_PORT"
	port_in_use "$ETCD_PEER_PORT" && die "port $ETCD_PEER_PORT (etcd peer) is already in use; set K8SGW_ETCD_PORT"
	local state=new
	[[ -d $STATE/etcd-data/member ]] && state=existing
	log "starting etcd on 127.0.0.1:$ETCD_PORT"
	start_proc etcd \
		--name=k8sgw \
		--data-dir="$STATE/etcd-data" \
		--listen-client-urls="http://127.0.0.1:$ETCD_PORT" \
		--advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster="k8sgw=http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster-state="$state" \
		--unsafe-no-fsync \
		--log-level=warn
	local i
	for ((i = 0; i < 300; i++)); do
		etcd_healthy && return 0
		proc_alive etcd || { log_tail etcd; die "etcd exited during startup"; }
		sleep 0.1
	done
	log_tail etcd
	die "etcd not healthy after 30s"
}

start_apiserver() {
	proc_alive etcd || die "etcd is not running; use '$0 up'"
	port_in_use "$APISERVER_PORT" && die "port $APISERVER_PORT (kube-apiserver) is already in use; set K8SGW_APISERVER_PORT"
	local pki=$STATE/pki
	log "starting kube-apiserver on https://$APISERVER_ADDR:$APISERVER_PORT"
	start_proc kube-apiserver \
		--bind-address="$APISERVER_ADDR" \
		--advertise-address="$APISERVER_ADDR" \
		--secure-port="$APISERVER_PORT" \
		--etcd-servers="http://127.0.0.1:$ETCD_PORT" \
		--tls-cert-file="$pki/apiserver.crt" \
		--tls-private-key-file="$pki/apiserver.key" \
		--client-ca-file="$pki/ca.crt" \
		--token-auth-file="$pki/tokens.csv" \
		--authorization-mode=RBAC \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$pki/sa.pub" \
		--service-account-signing-key-file="$pki/sa.key" \
		--service-cluster-ip-range=10.96.0.0/16 \
		--endpoint-reconciler-type=none \
		--kubelet-preferred-address-types=InternalIP \
		--shutdown-watch-termination-grace-period=2s \
		--cert-dir="$STATE/apiserver-certs" \
		--profiling=false
	wait_apiserver_ready
}

# kubectl against the cluster, quietly.
kc() { "$BIN/kubectl" --kubeconfig="$STATE/kubeconfig" --request-timeout=5s "$@"; }

wait_apiserver_ready() {
	local start=$SECONDS out
	while ((SECONDS - start < READY_TIMEOUT)); do
		if ! proc_alive kube-apiserver; then
			log_tail kube-apiserver 60
			die "kube-apiserver exited during startup"
		fi
		out=$(kc get --raw=/readyz 2>/dev/null) || out=""
		if [[ $out == ok ]]; then
			log "kube-apiserver ready after $((SECONDS - start))s"
			return 0
		fi
		sleep 0.25
	done
	log_tail kube-apiserver 60
	die "kube-apiserver not ready after ${READY_TIMEOUT}s"
}

start_kcm() {
	pick_kcm_port
	save_ports
	local controllers=$KCM_CONTROLLERS
	[[ -z $NODE_MODE ]] || controllers+=,$NODE_KCM_CONTROLLERS
	port_in_use "$KCM_PORT" && die "port $KCM_PORT (kube-controller-manager) is already in use; set K8SGW_KCM_PORT"
	local pki=$STATE/pki kcfg=$STATE/kube-controller-manager.kubeconfig
	log "starting kube-controller-manager (secure port 127.0.0.1:$KCM_PORT)"
	start_proc kube-controller-manager \
		--kubeconfig="$kcfg" \
		--authentication-kubeconfig="$kcfg" \
		--authorization-kubeconfig="$kcfg" \
		--bind-address=127.0.0.1 \
		--secure-port="$KCM_PORT" \
		--cert-dir="$STATE/kcm-certs" \
		--controllers="$controllers" \
		--use-service-account-credentials=false \
		--service-account-private-key-file="$pki/sa.key" \
		--root-ca-file="$pki/ca.crt" \
		--leader-elect=false \
		--profiling=false
}

# The controller manager is working once the default ServiceAccount exists.
wait_kcm_working() {
	local start=$SECONDS
	while ((SECONDS - start < READY_TIMEOUT)); do
		proc_alive kube-controller-manager || { log_tail kube-controller-manager 60; die "kube-controller-manager exited"; }
		if kc -n default get serviceaccount default >/dev/null 2>&1; then
			log "kube-controller-manager working after $((SECONDS - start))s"
			return 0
		fi
		sleep 0.25
	done
	log_tail kube-controller-manager 60
	die "default ServiceAccount did not appear within ${READY_TIMEOUT}s (kube-controller-manager)"
}

print_env() {
	printf 'export KUBECONFIG=%s\n' "$STATE/kubeconfig"
	printf 'export KUBECTL=%s\n' "$BIN/kubectl"
}

all_running() {
	local c
	for c in "${COMPONENTS[@]}"; do proc_alive "$c" || return 1; done
	[[ -z $NODE_MODE ]] && return 0
	for c in "${NODE_COMPONENTS[@]}"; do proc_alive "$c" || return 1; done
}

# Serialise up/down/start/stop on one state dir. The lock fd is closed in
# every process we start (see start_proc), so only this script holds it.
# lock_state WAIT_SECONDS [soft]: with "soft", go on without the lock after
# the wait (down/stop must not hang forever on a stuck holder).
state_lock=""
lock_state() {
	local wait=$1 soft=${2:-}
	mkdir -p "$(dirname "$STATE")"
	exec {state_lock}>"$STATE.lock"
	flock -n "$state_lock" && return 0
	log "waiting up to ${wait}s for another $0 on $STATE"
	flock -w "$wait" "$state_lock" && return 0
	[[ -n $soft ]] || die "could not lock $STATE.lock within ${wait}s"
	log "WARNING: proceeding without the lock on $STATE"
}

cmd_up() {
	cmd_build
	lock_state 600
	load_ports
	if all_running; then
		log "cluster already running in $STATE (apiserver https://127.0.0.1:$APISERVER_PORT)"
		# Decided under the lock: the test harness (test/internal/harness)
		# leaves a cluster it did not start running when its suite ends.
		echo "# already running"
		print_env
		return 0
	fi
	local start=$SECONDS
	# Fail before starting anything if a port we still need is taken.
	if ! proc_alive etcd; then
		port_in_use "$ETCD_PORT" && die "port $ETCD_PORT (etcd client) is already in use; set K8SGW_ETCD_PORT"
		port_in_use "$ETCD_PEER_PORT" && die "port $ETCD_PEER_PORT (etcd peer) is already in use; set K8SGW_ETCD_PORT"
	fi
	if ! proc_alive kube-apiserver && port_in_use "$APISERVER_PORT"; then
		die "port $APISERVER_PORT (kube-apiserver) is already in use; set K8SGW_APISERVER_PORT"
	fi
	UP_HINT="components that did start are left running for inspection; logs in $STATE/logs; clean up with: $0 down"
	[[ -z $NODE_MODE ]] || node_check
	prepare_state
	[[ -z $NODE_MODE ]] || node_net_up
	proc_alive etcd || start_etcd
	proc_alive kube-apiserver || start_apiserver
	if ! proc_alive kube-controller-manager; then
		start_kcm
		wait_kcm_working
	fi
	[[ -z $NODE_MODE ]] || node_start
	UP_HINT=""
	log "cluster up in $((SECONDS - start))s; state in $STATE"
	print_env
}

cmd_down() {
	lock_state 30 soft
	local c i
	[[ -d $STATE ]] && node_stop
	for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
		c=${COMPONENTS[i]}
		[[ -d $STATE ]] && stop_proc "$c"
	done
	if [[ -d $STATE ]]; then
		[[ -f $STATE/$MARKER ]] || die "$STATE has no $MARKER marker; not removing it"
		rm -rf "$STATE"
		log "removed $STATE"
	else
		log "no cluster state at $STATE"
	fi
	rm -f "$STATE.lock"
}

cmd_stop_apiserver() {
	lock_state 30 soft
	[[ -d $STATE ]] || die "no cluster at $STATE"
	stop_proc kube-apiserver
}

cmd_start_apiserver() {
	lock_state 300
	[[ -f $STATE/$MARKER ]] || die "no cluster at $STATE; use '$0 up'"
	load_ports
	if proc_alive kube-apiserver; then
		log "kube-apiserver already running (pid $(recorded_pid kube-apiserver))"
		return 0
	fi
	binary_ok kube-apiserver "$K8S_VERSION" || die "kube-apiserver not built; use '$0 build'"
	start_apiserver
}

cmd_status() {
	local c rc=0
	[[ -d $STATE ]] || { log "no cluster at $STATE"; return 1; }
	load_ports
	for c in "${COMPONENTS[@]}"; do
		if proc_alive "$c"; then
			printf '%-24s running (pid %s)\n' "$c" "$(recorded_pid "$c")"
		else
			printf '%-24s stopped\n' "$c"
			rc=1
		fi
	done
	printf 'apiserver                https://127.0.0.1:%s\nkubeconfig               %s\n' "$APISERVER_PORT" "$STATE/kubeconfig"
	return "$rc"
}

main() {
	local cmd=${1:-}
	case $cmd in
	build)
		cmd_build
		log "all binaries present in $BIN"
		;;
	podman)
		shift
		node_podman "$@"
		;;
	image-bases)
		node_image_bases "$(realpath "$(dirname "${BASH_SOURCE[0]}")/..")"
		;;
	load-image)
		[[ -n ${2:-} ]] || die "usage: $0 load-image IMAGE"
		node_import_image "$2"
		;;
	build-node)
		cmd_build "${NODE_BINARIES[@]}"
		log "node binaries present in $BIN"
		;;
	up) cmd_up ;;
	down) cmd_down ;;
	status) cmd_status ;;
	env) print_env ;;
	stop-apiserver) cmd_stop_apiserver ;;
	start-apiserver) cmd_start_apiserver ;;
	-h | --help | help) usage ;;
	*)
		usage
		exit 2
		;;
	esac
}

main "$@"
exit $?
