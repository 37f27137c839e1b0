// Command coredns is CoreDNS with the k8s_gateway plugin compiled in, and the
// stock plugins a user of it needs (but not the cloud DNS providers or the
// kubernetes, k8s_external and etcd plugins, which bring in large SDKs).
package main

import (
	"slices"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/acl"
	_ "github.com/coredns/coredns/plugin/any"
	_ "github.com/coredns/coredns/plugin/auto"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/bufsize"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/cancel"
	_ "github.com/coredns/coredns/plugin/chaos"
	_ "github.com/coredns/coredns/plugin/debug"
	_ "github.com/coredns/coredns/plugin/dns64"
	_ "github.com/coredns/coredns/plugin/dnssec"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/file"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/geoip"
	_ "github.com/coredns/coredns/plugin/header"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/local"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metadata"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/minimal"
	_ "github.com/coredns/coredns/plugin/multisocket"
	_ "github.com/coredns/coredns/plugin/nsid"
	_ "github.com/coredns/coredns/plugin/pprof"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
	_ "github.com/coredns/coredns/plugin/rewrite"
	_ "github.com/coredns/coredns/plugin/root"
	_ "github.com/coredns/coredns/plugin/secondary"
	_ "github.com/coredns/coredns/plugin/sign"
	_ "github.com/coredns/coredns/plugin/template"
	_ "github.com/coredns/coredns/plugin/timeouts"
	_ "github.com/coredns/coredns/plugin/tls"
	_ "github.com/coredns/coredns/plugin/transfer"
	_ "github.com/coredns/coredns/plugin/tsig"
	_ "github.com/coredns/coredns/plugin/view"
	_ "github.com/coredns/coredns/plugin/whoami"

	gateway "github.com/seed-e581d630/k8s_gateway"
)

// excluded are stock directives whose plugins this binary leaves out.
var excluded = []string{
	"proxyproto", "quic", "grpc_server", "https", "https3",
	"trace", "shed", "siit", "autopath", "dynupdate", "route53", "azure",
	"clouddns", "k8s_external", "etcd", "grpc", "erratic", "on", "nomad",
}

func init() {
	// k8s_gateway takes the place of kubernetes in the plugin chain.
	var directives []string
	for _, d := range dnsserver.Directives {
		switch {
		case d == "kubernetes":
			directives = append(directives, gateway.PluginName)
		case !slices.Contains(excluded, d):
			directives = append(directives, d)
		}
	}
	dnsserver.Directives = directives
}

func main() {
	caddy.AppVersion = coremain.CoreVersion + "+k8s_gateway-" + gateway.Version
	coremain.Run()
}
