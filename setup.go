package gateway

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/transfer"
	"github.com/miekg/dns"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
	"github.com/seed-e581d630/k8s_gateway/internal/plog"
	"github.com/seed-e581d630/k8s_gateway/watch"
)

// log is the plugin's logger: every line carries plugin/k8s_gateway:.
var log = plog.Log

const (
	defaultTTL = 60
	maxTTL     = 3600
)

func init() {
	plugin.Register(metrics.Plugin, setup)
	// client-go's log lines go through the plugin's logger. Set before any
	// informer runs: klog's logger is not safe to replace under a reader.
	watch.RouteKlog()
}

func setup(c *caddy.Controller) error {
	g, err := parse(c)
	if err != nil {
		return plugin.Error(metrics.Plugin, err)
	}
	cfg := dnsserver.GetConfig(c)
	g.listener = listenerOf(cfg.Transport, cfg.ListenHosts, cfg.Port)
	g.buildIndex()
	g.publishStaticNameservers()
	for _, step := range []func(*caddy.Controller, *Gateway) error{setupUpdates, setupTLSReload, setupReaders} {
		if err := step(c, g); err != nil {
			return plugin.Error(metrics.Plugin, err)
		}
	}

	// The first start of the process must not wait for the API server:
	// CoreDNS listens only once every OnStartup has returned, and a server
	// that answers SERVFAIL is better than one that does not answer. On a
	// reload the old instance keeps answering meanwhile, so waiting for the
	// sync there saves a moment of SERVFAIL.
	c.OnFirstStartup(func() error {
		g.noStartupWait = true
		return nil
	})
	c.OnStartup(func() error {
		g.view = dnsserver.GetConfig(c).ViewName // known once every block is set up
		// With the transfer plugin in the server block, changes send NOTIFY.
		if t, ok := dnsserver.GetConfig(c).Handler("transfer").(*transfer.Transfer); ok {
			g.xfer.notifier.Use(t)
		}
		if err := g.cds.start(dnsserver.GetConfig(c).Handler("dnssec"), g.Zones, g.ttl); err != nil {
			return plugin.Error(metrics.Plugin, err)
		}
		// The first publication after the sync sends NOTIFY (see Index.Flush).
		return g.start()
	})
	c.OnShutdown(func() error {
		g.stop()
		g.index.Close()
		g.release() // the indexes are closed: they gave their objects back
		return nil
	})
	// A malformed IXFR request of the plugin's zones gets FORMERR (RFC 1995
	// §3), not the transfer plugin's SERVFAIL: the transfer plugin, set up
	// before the plugin, answers it first (transfer.go).
	guardTransfers(dnsserver.GetConfig(c), g.transfers)
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		g.Next = next
		return g
	})
	return nil
}

// kubeconfigAPI returns the API client of a kubeconfig and context.
func (g *Gateway) kubeconfigAPI(kubeconfig, context string) (watch.API, error) {
	cfg, err := g.restConfig(kubeconfig, context)
	if err != nil {
		return nil, err
	}
	return watch.NewRestAPI(cfg)
}

// restConfig returns the client configuration of a kubeconfig and context,
// with the block's limits (apiserver_qps, apiserver_burst).
func (g *Gateway) restConfig(kubeconfig, context string) (*rest.Config, error) {
	cfg, err := watch.RestConfig(kubeconfig, context)
	if err != nil {
		return nil, err
	}
	g.apiLimits.Apply(cfg)
	return cfg, nil
}

// parse reads one k8s_gateway block. Errors name the Corefile line.
func parse(c *caddy.Controller) (*Gateway, error) {
	g := newGateway()
	c.Next() // the directive
	args := c.RemainingArgs()
	// OriginsFromArgsOrServerBlock silently drops arguments that are not zones.
	for _, a := range args {
		if len(plugin.Host(a).NormalizeExact()) == 0 {
			return nil, c.Errf("invalid zone %q", a)
		}
	}
	for _, z := range plugin.OriginsFromArgsOrServerBlock(args, c.ServerBlockKeys) {
		z = strings.ToLower(z)
		if _, ok := dns.IsDomainName(z); !ok {
			return nil, c.Errf("invalid zone %q", z)
		}
		if !slices.Contains(g.Zones, z) {
			g.Zones = append(g.Zones, z)
		}
	}
	if len(g.Zones) == 0 {
		return nil, c.Errf("no zone: give zones as arguments or in the server block")
	}
	file, line := c.File(), c.Line()
	lines := map[string]int{} // option → the line it is on
	if c.NextBlock() {
		for {
			lines[canonicalOption(c.Val())] = c.Line()
			if err := parseOption(c, g); err != nil {
				return nil, err
			}
			if !c.NextBlock() {
				break
			}
		}
	}
	for _, check := range blockChecks {
		opt, err := check(c, g, optionLines{file, lines})
		if err == nil {
			continue
		}
		if l, ok := lines[opt]; ok {
			line = l
		}
		// As caddy's Errf would say it, but naming the line at fault.
		return nil, fmt.Errorf("%s:%d - Error during parsing: %v", file, line, err)
	}
	if c.Next() {
		return nil, c.Errf("only one k8s_gateway directive per server block is allowed, found a second at %q", c.Val())
	}
	return g, nil
}

// coveredBy reports whether name is at or below one of the server block's keys.
func coveredBy(name string, keys []string) bool {
	for _, k := range keys {
		for _, z := range normalizedKeys(k) {
			if dns.IsSubDomain(z, name) {
				return true
			}
		}
	}
	return false
}

// normalizedKeys returns the zones of a server block key ("dns://z:53").
func normalizedKeys(key string) []string {
	var zones []string
	for _, z := range plugin.Host(key).NormalizeExact() {
		zones = append(zones, dns.CanonicalName(z))
	}
	return zones
}

// argCountErr reports a wrong number of arguments. Unlike c.ArgErr, which names
// the last token read, it names the option and how it is used.
func argCountErr(c *caddy.Controller, usage string, args []string) error {
	return c.Err(usageErr(usage, args).Error())
}

// checkKubeconfig makes sure the file is a readable kubeconfig and has the
// context (its current-context when context is empty).
func checkKubeconfig(path, context string) error {
	data, err := os.ReadFile(path) // the error names the file
	if err != nil {
		return err
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	// What client-go would reject later without naming the file ("no
	// configuration has been provided, try setting KUBERNETES_MASTER ...").
	name := context
	if name == "" {
		name = cfg.CurrentContext
	}
	switch {
	case name == "" && len(cfg.Clusters) == 0 && len(cfg.Contexts) == 0 && len(cfg.AuthInfos) == 0:
		return fmt.Errorf("%s is empty: no clusters, users or contexts", path)
	case name == "":
		return fmt.Errorf("%s has no current-context: name one, kubeconfig FILE CONTEXT", path)
	}
	if _, ok := cfg.Contexts[name]; !ok {
		if context == "" {
			return fmt.Errorf("current-context %q not found in %s", name, path)
		}
		return fmt.Errorf("context %q not found in %s", context, path)
	}
	return nil
}

// listenerOf names the listener of a server block's configuration.
func listenerOf(transport string, hosts []string, port string) string {
	return transport + "://" + strings.Join(hosts, ",") + ":" + port
}
