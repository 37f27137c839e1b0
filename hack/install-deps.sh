#!/usr/bin/env bash
# Installs the Debian packages that the tests and the demo use, when missing.
# Go (1.26) must already be installed; everything else is built from the Go
# module proxy by hack/cluster.sh.
set -euo pipefail

declare -A want=(
	[dig]=bind9-dnsutils
	[openssl]=openssl
	[make]=make
	[git]=git
	[curl]=curl
	# Zone transfer and DNSSEC end-to-end tests: real secondaries and a validating resolver.
	[named]=bind9
	[named-checkzone]=bind9-utils
	[dnssec-keygen]=bind9-utils
	# The CDS rollover test: the parent-side agent (dnssec-cds, nsupdate).
	[dnssec-cds]=bind9-utils
	[nsupdate]=bind9-dnsutils
	[knotd]=knot
	# DNS over TLS in the node stage (kdig +tls).
	[kdig]=knot-dnsutils
	[unbound]=unbound
	# The bare-metal stage puts the parent zone's address on lo (ip addr).
	[ip]=iproute2
	# make bench: the load generator, and taskset to pin servers and load to CPUs.
	[dnsperf]=dnsperf
	[taskset]=util-linux
	# The node of make e2e-node (hack/node.sh): container runtime, pod network, Service rules, image builds.
	[containerd]=containerd
	[runc]=runc
	[/usr/lib/cni/bridge]=containernetworking-plugins
	[iptables]=iptables
	[podman]=podman
	# The chart's alert rules: promtool check rules / test rules (Debian's prometheus package).
	[promtool]=prometheus
	# make release's test (make e2e-node): a real OCI registry on loopback (the distribution registry 2.8).
	[docker-registry]=docker-registry
)
missing=()
for cmd in "${!want[@]}"; do
	# named, knotd and unbound live in /usr/sbin, which is not on every user's PATH.
	if ! command -v "$cmd" >/dev/null 2>&1 && [[ ! -x /usr/sbin/$cmd ]]; then
		pkg=${want[$cmd]}
		[[ " ${missing[*]} " == *" $pkg "* ]] || missing+=("$pkg")
	fi
done
if ((${#missing[@]} == 0)); then
	echo "install-deps: all present"
	exit 0
fi
sudo=""
if [[ $(id -u) -ne 0 ]]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "install-deps: missing Debian packages; as root, run: apt-get install ${missing[*]}" >&2
		exit 1
	fi
	sudo=sudo
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
