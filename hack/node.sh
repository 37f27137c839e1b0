# shellcheck shell=bash
# hack/node.sh - a real node beside the control plane of hack/cluster.sh:
# containerd, kubelet, kube-scheduler and kube-proxy, pods on a bridge of its
# own. Sourced by hack/cluster.sh (K8SGW_NODE=1 hack/cluster.sh up); it uses
# that script's start_proc/stop_proc/log/die. See hack/README.md for what it
# changes on the host and how `down` puts it back.

NODE_BRIDGE=${K8SGW_NODE_BRIDGE:-k8sgw0}         # the pods' bridge; the node's address is its gateway
NODE_CIDR=${K8SGW_NODE_CIDR:-10.244.0.0/24}      # pod addresses
NODE_ADDR=${K8SGW_NODE_ADDR:-10.244.0.1}         # the bridge's address: API server, NodePorts
SERVICE_CIDR=10.96.0.0/16                        # kube-apiserver --service-cluster-ip-range
SERVICE_IP=10.96.0.1                             # the kubernetes Service
SERVICE_SINK=${K8SGW_NODE_SERVICE_SINK:-k8sgw-svc}  # a bridge without ports: SERVICE_CIDR routes to nowhere off this host
NODE_PORT_BASE=${K8SGW_NODE_PORT_BASE:-27250}    # kubelet, its healthz, kube-proxy healthz, metrics
NODE_NAME=k8sgw-node
PAUSE_IMAGE=localhost/k8sgw-pause:1
NODE_COMPONENTS=(containerd kubelet kube-scheduler kube-proxy)
# Sysctls that kubelet, kube-proxy and the bridge plugin set: saved at up, restored at down.
NODE_SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
	kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward
	net.ipv4.conf.all.forwarding net.ipv6.conf.all.forwarding net.ipv4.conf.all.route_localnet
	net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables net.netfilter.nf_conntrack_max)

NODE=$STATE/node

# node_check: refuse, saying why, where a node cannot run.
node_check() {
	[[ $(id -u) -eq 0 ]] || die "a node needs root (network namespaces, cgroups, iptables, mounts); run as root or without K8SGW_NODE"
	local c
	for c in cpu memory pids; do
		[[ -d /sys/fs/cgroup/$c || -f /sys/fs/cgroup/cgroup.controllers ]] ||
			die "a node needs cgroups: /sys/fs/cgroup/$c is missing (and no cgroup v2 at /sys/fs/cgroup)"
	done
	for c in containerd runc ctr iptables podman /usr/lib/cni/bridge /usr/lib/cni/host-local /usr/lib/cni/loopback; do
		command -v "$c" >/dev/null 2>&1 || [[ -x $c ]] ||
			die "a node needs $c: run hack/install-deps.sh (containerd runc containernetworking-plugins iptables podman)"
	done
	ip link add k8sgw-probe type bridge 2>/dev/null ||
		die "a node needs to create network interfaces (CAP_NET_ADMIN), and 'ip link add type bridge' failed"
	ip link del k8sgw-probe
}

node_bin() { # NAME: where a node component's binary is
	case $1 in
	containerd) command -v containerd ;;
	*) printf '%s' "$BIN/$1" ;;
	esac
}

# ---- host network: bridge and the service range's route ----

node_net_up() {
	if ! ip link show "$NODE_BRIDGE" >/dev/null 2>&1; then
		ip link add "$NODE_BRIDGE" type bridge
		ip addr add "$NODE_ADDR/${NODE_CIDR#*/}" dev "$NODE_BRIDGE"
	fi
	ip link set "$NODE_BRIDGE" up
	# Packets to a Service address that kube-proxy's rules do not rewrite end
	# here, never on the default route.
	if ! ip link show "$SERVICE_SINK" >/dev/null 2>&1; then
		ip link add "$SERVICE_SINK" type bridge
		ip link set "$SERVICE_SINK" up
		ip route add "$SERVICE_CIDR" dev "$SERVICE_SINK"
	fi
}

node_net_down() {
	ip link del "$SERVICE_SINK" 2>/dev/null || true
	ip link del "$NODE_BRIDGE" 2>/dev/null || true
}

# Host directories that containerd, the shims and libcni create: those that
# did not exist before are removed at down when empty.
NODE_HOST_DIRS=(/run/containerd/s /run/containerd /var/lib/cni/results /var/lib/cni
	/var/lib/kubelet/device-plugins /var/lib/kubelet)

node_save_sysctls() {
	[[ -f $NODE/sysctl.saved ]] && return 0
	local d
	for d in "${NODE_HOST_DIRS[@]}"; do
		[[ -e $d ]] || printf '%s\n' "$d"
	done >"$NODE/host-dirs.absent"
	local s f
	for s in "${NODE_SYSCTLS[@]}"; do
		f=/proc/sys/${s//.//}
		[[ -r $f ]] && printf '%s=%s\n' "$s" "$(<"$f")"
	done >"$NODE/sysctl.saved.tmp"
	mv -f "$NODE/sysctl.saved.tmp" "$NODE/sysctl.saved"
}

node_restore_sysctls() {
	[[ -f $NODE/sysctl.saved ]] || return 0
	local s v f
	while IFS='=' read -r s v; do
		f=/proc/sys/${s//.//}
		[[ -w $f && "$(<"$f")" != "$v" ]] || continue
		log "restoring $s=$v"
		printf '%s' "$v" >"$f" || log "WARNING: could not restore $s"
	done <"$NODE/sysctl.saved"
}

# ---- configuration files ----

node_write_configs() {
	mkdir -p "$NODE"/{containerd/certs.d,cni,cni-data,kubelet,kubelet-certs,pod-logs,volume-plugins,runc}
	cat >"$NODE/containerd/config.toml" <<EOF
version = 2
root = "$NODE/containerd/root"
state = "$NODE/containerd/state"
[grpc]
  address = "$NODE/containerd.sock"
[ttrpc]
  address = "$NODE/containerd-ttrpc.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$NODE/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  disable_apparmor = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$NODE/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$NODE/cni"
  # Registries by host (certs.d/HOST:PORT/hosts.toml), read at each pull: the
  # release test adds its loopback registry there (plain HTTP).
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$NODE/containerd/certs.d"
EOF
	cat >"$NODE/cni/10-k8sgw.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "k8sgw",
  "plugins": [{
    "type": "bridge",
    "bridge": "$NODE_BRIDGE",
    "isGateway": true,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "dataDir": "$NODE/cni-data",
      "ranges": [[{"subnet": "$NODE_CIDR", "gateway": "$NODE_ADDR"}]],
      "routes": [{"dst": "0.0.0.0/0"}]
    }
  }, {"type": "loopback"}]
}
EOF
	# Pods resolve nothing outside: their resolv.conf names their own loopback.
	printf 'nameserver 127.0.0.1\n' >"$NODE/resolv.conf"
	cat >"$NODE/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /k8sgw-node
cgroupsPerQOS: true
failSwapOn: false
maxOpenFiles: 20000
oomScoreAdj: 0
makeIPTablesUtilChains: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "1%", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
address: $NODE_ADDR
port: $NODE_PORT_BASE
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $((NODE_PORT_BASE + 1))
containerRuntimeEndpoint: unix://$NODE/containerd.sock
podLogsDir: $NODE/pod-logs
volumePluginDir: $NODE/volume-plugins
resolvConf: $NODE/resolv.conf
registerNode: true
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
serializeImagePulls: false
localStorageCapacityIsolation: false
# Pods see a changed ConfigMap within seconds (default 1m), as the chart's
# in-place reload test needs.
syncFrequency: 10s
EOF
}

# node_cgroups_up: kubelet's cgroupRoot in every v1 hierarchy (cpuset needs cpus and mems).
node_cgroups_up() {
	local h
	for h in /sys/fs/cgroup/*/; do
		[[ -f $h/cgroup.procs ]] || continue
		mkdir -p "$h/k8sgw-node"
		if [[ -f $h/cpuset.cpus ]]; then
			cat "$h/cpuset.cpus" >"$h/k8sgw-node/cpuset.cpus"
			cat "$h/cpuset.mems" >"$h/k8sgw-node/cpuset.mems"
		fi
	done
}

node_cgroups_down() {
	local h d
	for h in /sys/fs/cgroup/*/; do
		[[ -d $h/k8sgw-node ]] || continue
		# Deepest first; a cgroup still holding a process stays (and is reported).
		while read -r d; do
			rmdir "$d" 2>/dev/null || log "WARNING: cgroup $d still busy"
		done < <(find "$h/k8sgw-node" -depth -type d)
	done
}

# ---- images ----

ctr_k8s() { ctr --address "$NODE/containerd.sock" -n k8s.io "$@"; }

# podman on storage of its own under the cache.
node_podman() {
	local p=$CACHE/podman-overlay
	mkdir -p "$p"
	[[ -f $p/containers.conf ]] || printf '[containers]\ndefault_ulimits = []\n' >"$p/containers.conf"
	CONTAINERS_CONF=$p/containers.conf podman --root "$p/root" --runroot "$p/run" --storage-driver overlay \
		--cgroup-manager cgroupfs --events-backend none "$@"
}

# node_import_image NAME: from podman's storage into the node's containerd.
node_import_image() {
	local tar=$NODE/image.tar
	rm -f "$tar"
	node_podman save --format docker-archive -o "$tar" "$1" >&2
	ctr_k8s images import "$tar" >&2
	rm -f "$tar"
}

# The sandbox image: a static binary that waits for TERM, FROM scratch.
node_pause_image() {
	node_podman image exists "$PAUSE_IMAGE" && return 0
	local dir=$NODE/pause-build
	mkdir -p "$dir"
	cat >"$dir/main.go" <<'EOF'
// The pod sandbox: holds the pod's namespaces until it gets TERM or INT.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
EOF
	printf 'module k8sgw.local/pause\n\ngo 1.22\n' >"$dir/go.mod"
	(cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o pause .)
	printf 'FROM scratch\nCOPY pause /pause\nENTRYPOINT ["/pause"]\n' >"$dir/Containerfile"
	node_podman build -q --network=none -t "$PAUSE_IMAGE" -f "$dir/Containerfile" "$dir" >&2
}

# ---- processes ----

node_start() {
	node_check
	cmd_build "${NODE_BINARIES[@]}"
	setup_go
	mkdir -p "$NODE"
	node_save_sysctls
	node_write_configs
	node_cgroups_up

	proc_alive containerd || {
		log "starting containerd ($NODE/containerd.sock)"
		start_proc containerd --config "$NODE/containerd/config.toml"
	}
	local i
	for ((i = 0; i < 200; i++)); do
		ctr --address "$NODE/containerd.sock" version >/dev/null 2>&1 && break
		proc_alive containerd || { log_tail containerd; die "containerd exited"; }
		sleep 0.1
	done
	node_pause_image
	ctr_k8s images ls -q | grep -qx "$PAUSE_IMAGE" || node_import_image "$PAUSE_IMAGE"

	# The kubernetes Service's endpoint (v1.37 runs no endpoint reconciler
	# here: see --endpoint-reconciler-type), so that in-cluster clients reach it.
	kc apply -f - >/dev/null <<EOF
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes
  namespace: default
  labels: {kubernetes.io/service-name: kubernetes, endpointslice.kubernetes.io/managed-by: k8sgw-node}
addressType: IPv4
endpoints: [{addresses: ["$NODE_ADDR"], conditions: {ready: true}}]
ports: [{name: https, port: $APISERVER_PORT, protocol: TCP}]
EOF

	local kcfg=$STATE/kubeconfig
	proc_alive kube-scheduler || {
		log "starting kube-scheduler"
		start_proc kube-scheduler --kubeconfig="$kcfg" --authentication-kubeconfig="$kcfg" \
			--authorization-kubeconfig="$kcfg" --leader-elect=false --secure-port=0 --profiling=false
	}
	proc_alive kube-proxy || {
		log "starting kube-proxy"
		start_proc kube-proxy --kubeconfig="$kcfg" --hostname-override="$NODE_NAME" \
			--proxy-mode=iptables --cluster-cidr="$NODE_CIDR" --nodeport-addresses="$NODE_ADDR/32" \
			--conntrack-max-per-core=0 --conntrack-tcp-timeout-established=0 \
			--conntrack-tcp-timeout-close-wait=0 --iptables-localhost-nodeports=false \
			--healthz-bind-address="127.0.0.1:$((NODE_PORT_BASE + 2))" \
			--metrics-bind-address="127.0.0.1:$((NODE_PORT_BASE + 3))"
	}
	proc_alive kubelet || {
		log "starting kubelet"
		start_proc kubelet --config="$NODE/kubelet/config.yaml" --kubeconfig="$kcfg" \
			--root-dir="$NODE/kubelet-root" --cert-dir="$NODE/kubelet-certs" \
			--hostname-override="$NODE_NAME" --node-ip="$NODE_ADDR"
	}
	local start=$SECONDS
	while ((SECONDS - start < READY_TIMEOUT)); do
		proc_alive kubelet || { log_tail kubelet 60; die "kubelet exited"; }
		if [[ $(kc get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]; then
			log "node $NODE_NAME Ready after $((SECONDS - start))s"
			return 0
		fi
		sleep 0.5
	done
	log_tail kubelet 60
	die "node $NODE_NAME not Ready after ${READY_TIMEOUT}s"
}

# node_stop: stop the node and put the host back as it was.
node_stop() {
	[[ -d $NODE ]] || return 0
	stop_proc kubelet
	stop_proc kube-scheduler
	# Every pod's containers and sandboxes, through containerd.
	local t ids=()
	if proc_alive containerd; then
		mapfile -t ids < <(ctr_k8s containers ls -q 2>/dev/null)
		for t in $(ctr_k8s tasks ls -q 2>/dev/null); do
			ctr_k8s tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true
		done
		for t in $(ctr_k8s tasks ls -q 2>/dev/null); do
			ctr_k8s tasks delete -f "$t" >/dev/null 2>&1 || true
		done
		for t in $(ctr_k8s containers ls -q 2>/dev/null); do
			ctr_k8s containers delete "$t" >/dev/null 2>&1 || true
		done
	fi
	stop_proc containerd
	if [[ -x $BIN/kube-proxy ]] && proc_alive kube-proxy; then
		stop_proc kube-proxy
	fi
	"$BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
	local ipt
	for ipt in iptables ip6tables; do
		command -v "$ipt" >/dev/null 2>&1 || continue
		"$ipt" -D INPUT -j KUBE-FIREWALL 2>/dev/null || true
		"$ipt" -D OUTPUT -j KUBE-FIREWALL 2>/dev/null || true
		"$ipt" -F KUBE-FIREWALL 2>/dev/null || true
		"$ipt" -X KUBE-FIREWALL 2>/dev/null || true
	done
	command -v nft >/dev/null 2>&1 && {
		nft delete table ip kube-proxy 2>/dev/null || true
		nft delete table ip6 kube-proxy 2>/dev/null || true
	}
	# Mounts under the state dir (kubelet's root bind mount, volumes, netns,
	# container rootfs), deepest first.
	local m
	while read -r m; do
		umount -l "$m" 2>/dev/null || log "WARNING: could not unmount $m"
	done < <(awk -v p="$STATE/" 'index($5, p) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
	node_net_down
	node_cgroups_down
	rm -f /var/lib/kubelet/device-plugins/kubelet.sock
	# libcni's cached results of the pods (killed above, so never deleted by CNI).
	for t in "${ids[@]}"; do
		rm -f /var/lib/cni/results/*-"$t"-*
	done
	if [[ -f $NODE/host-dirs.absent ]]; then
		while read -r t; do
			rmdir "$t" 2>/dev/null || true
		done <"$NODE/host-dirs.absent"
	fi
	node_restore_sysctls
}

# ---- the project's image without a registry ----

# Stand-ins for the Dockerfile's base images, under the same names, when
# those cannot be pulled: a builder holding this host's Go and the module
# cache the build needs (GOPROXY=off), and a static base with the nonroot user.
GO_BUILDER_IMAGE=docker.io/library/golang:${K8SGW_GO_VERSION:-1.26}
NONROOT_IMAGE=gcr.io/distroless/static:nonroot

node_image_bases() {
	local repo=$1 dir=$CACHE/image-bases
	setup_go
	if ! node_podman image exists "$GO_BUILDER_IMAGE"; then
		log "building the stand-in $GO_BUILDER_IMAGE (host Go $(go env GOVERSION), the module cache of $repo/go.mod)"
		rm -rf "$dir/builder"
		mkdir -p "$dir/builder/rootfs"/{bin,tmp,lib64,usr/local,etc,root} "$dir/builder/rootfs/lib/x86_64-linux-gnu"
		chmod 1777 "$dir/builder/rootfs/tmp"
		cp -a "$(go env GOROOT)" "$dir/builder/rootfs/usr/local/go"
		# A shell for RUN lines (and the C library it needs).
		cp -L /bin/sh "$dir/builder/rootfs/bin/sh"
		local lib
		for lib in $(ldd /bin/sh | grep -o '/[^ ]*'); do
			mkdir -p "$dir/builder/rootfs$(dirname "$lib")"
			cp -L "$lib" "$dir/builder/rootfs$lib"
		done
		printf 'root:x:0:0:root:/root:/bin/sh\n' >"$dir/builder/rootfs/etc/passwd"
		# Only the modules the build needs, from the host's module cache (no network).
		local hostmods
		hostmods=$(go env GOMODCACHE)
		(cd "$repo" && GOMODCACHE="$dir/builder/rootfs/gomodcache" GOPROXY="file://$hostmods/cache/download" \
			GOFLAGS=-mod=mod GOSUMDB=off go mod download)
		(cd "$repo" && GOMODCACHE="$dir/builder/rootfs/gomodcache" GOPROXY="file://$hostmods/cache/download" \
			GOFLAGS=-mod=mod GOSUMDB=off go list -deps ./cmd/coredns >/dev/null)
		chmod -R u+w "$dir/builder/rootfs/gomodcache"
		cat >"$dir/builder/Containerfile" <<'EOT'
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/go/bin:/bin GOPATH=/go GOMODCACHE=/gomodcache GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local HOME=/root
EOT
		node_podman build -q --network=none -t "$GO_BUILDER_IMAGE" "$dir/builder" >&2
		rm -rf "$dir/builder"
	fi
	if ! node_podman image exists "$NONROOT_IMAGE"; then
		log "building the stand-in $NONROOT_IMAGE"
		rm -rf "$dir/nonroot"
		mkdir -p "$dir/nonroot/rootfs"/{etc/ssl/certs,tmp,home/nonroot}
		chmod 1777 "$dir/nonroot/rootfs/tmp"
		printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' \
			>"$dir/nonroot/rootfs/etc/passwd"
		printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$dir/nonroot/rootfs/etc/group"
		[[ ! -f /etc/ssl/certs/ca-certificates.crt ]] || cp /etc/ssl/certs/ca-certificates.crt "$dir/nonroot/rootfs/etc/ssl/certs/"
		printf 'FROM scratch\nCOPY rootfs/ /\nUSER 65532:65532\nWORKDIR /home/nonroot\n' >"$dir/nonroot/Containerfile"
		node_podman build -q --network=none -t "$NONROOT_IMAGE" "$dir/nonroot" >&2
		rm -rf "$dir/nonroot"
	fi
}
