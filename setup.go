package gateway

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/transfer"
	"github.com/miekg/dns"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/seed-e581d630/k8s_gateway/fleet"
	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
	"github.com/seed-e581d630/k8s_gateway/internal/plog"
	"github.com/seed-e581d630/k8s_gateway/persist"
	"github.com/seed-e581d630/k8s_gateway/source"
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
	g.buildIndex()
	g.publishStaticNameservers()
	if err := g.setupUpdates(c); err != nil {
		return plugin.Error(metrics.Plugin, err)
	}
	if err := g.setupTLSReload(c); err != nil {
		return plugin.Error(metrics.Plugin, err)
	}
	if err := g.addClusters(g.kubeconfigAPI); err != nil {
		return plugin.Error(metrics.Plugin, err)
	}
	if g.clusterAPI != nil {
		cfg, err := g.restConfig(g.kubeconfig, g.kubecontext)
		if err != nil {
			return plugin.Error(metrics.Plugin, fmt.Errorf("clusterapi: %w", err))
		}
		mgmt, err := watch.NewRestAPI(cfg)
		if err != nil {
			return plugin.Error(metrics.Plugin, fmt.Errorf("clusterapi: %w", err))
		}
		g.discovery = g.newDiscovery(mgmt.Dynamic, mgmt.ServedResources, func(kubeconfig []byte) (watch.API, error) {
			return fleet.KubeconfigBytesAPI(kubeconfig, g.apiLimits)
		})
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
			g.notifier.Use(t)
		}
		if err := g.startCDS(dnsserver.GetConfig(c).Handler("dnssec")); err != nil {
			return plugin.Error(metrics.Plugin, err)
		}
		// The first publication after the sync sends NOTIFY (see Index.Flush).
		return g.start()
	})
	c.OnShutdown(func() error {
		g.stop()
		g.index.Close()
		g.releaseShared() // the indexes are closed: they gave their objects back
		return nil
	})
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
			lines[c.Val()] = c.Line()
			if err := parseOption(c, g); err != nil {
				return nil, err
			}
			if !c.NextBlock() {
				break
			}
		}
	}
	opt, err := "cluster_zones", g.addClusterZones()
	if err == nil {
		opt, err = g.checkZones()
	}
	if err == nil {
		opt, err = "persist", claimPersist(c, g)
	}
	if err == nil {
		opt, err = g.checkClusters()
	}
	if err == nil {
		opt, err = "catalog", g.checkCatalog()
	}
	if err != nil {
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

func parseOption(c *caddy.Controller, g *Gateway) error {
	opt := c.Val()
	switch opt {
	case "cluster":
		return parseCluster(c, g)
	case "updates":
		return parseUpdates(c, g)
	}
	args := c.RemainingArgs()
	switch opt {
	case "ttl":
		if len(args) != 1 {
			return argCountErr(c, "ttl TTL", args)
		}
		ttl, err := strconv.Atoi(args[0])
		if err != nil || ttl < 0 || ttl > maxTTL {
			return c.Errf("ttl must be an integer from 0 to %d, got %q", maxTTL, args[0])
		}
		g.ttl = uint32(ttl)
	case "apex", "secondary":
		if len(args) == 0 {
			return argCountErr(c, opt+" NAME [ADDRESS...]", args)
		}
		name := strings.ToLower(args[0])
		if _, err := source.CanonicalName(name, false); err != nil {
			return c.Errf("invalid %s name %q: %v", opt, args[0], err)
		}
		addrs, err := parseNameserverAddrs(args[1:])
		if err != nil {
			return c.Errf("%s %s: %v", opt, args[0], err)
		}
		if opt == "apex" {
			g.apex, g.apexAddrs = name, addrs
		} else {
			g.secondary, g.secondaryAddrs = name, addrs
		}
	case "parent":
		return parseParent(c, g, args)
	case "cds":
		return parseCDS(c, g, args)
	case "catalog":
		return parseCatalog(c, g, args)
	case "cluster_zones":
		return parseClusterZones(c, g, args)
	case "fallthrough":
		g.Fall.SetZonesFromArgs(args)
	case "clusterapi":
		g.clusterAPI = &clusterAPIConfig{namespaces: args}
	case "ownership":
		if len(args) != 1 {
			return argCountErr(c, "ownership union|first|delegated", args)
		}
		p, ok := index.ParsePolicy(args[0])
		if !ok {
			return c.Errf("unknown ownership policy %q; supported: union, first, delegated", args[0])
		}
		g.ownership = p
	case "include", "exclude":
		if err := g.addresses.AddRanges(opt, args); err != nil {
			return c.Err(err.Error())
		}
	case "tls_reload":
		if len(args) != 2 {
			return argCountErr(c, "tls_reload CERT KEY", args)
		}
		g.tlsReload = []string{args[0], args[1]}
	case "apiserver_qps":
		if len(args) != 1 {
			return argCountErr(c, "apiserver_qps QPS", args)
		}
		qps, err := strconv.ParseFloat(args[0], 32)
		if err != nil || qps <= 0 || qps > 10000 {
			return c.Errf("apiserver_qps must be a number above 0, at most 10000, got %q", args[0])
		}
		g.apiLimits.QPS = float32(qps)
	case "apiserver_burst":
		if len(args) != 1 {
			return argCountErr(c, "apiserver_burst BURST", args)
		}
		burst, err := strconv.Atoi(args[0])
		if err != nil || burst < 1 || burst > 100000 {
			return c.Errf("apiserver_burst must be an integer from 1 to 100000, got %q", args[0])
		}
		g.apiLimits.Burst = burst
	case "default_location":
		l, err := parseLocationArgs(opt, args)
		if err != nil {
			return c.Err(err.Error())
		}
		g.defaultLocation = l
	case "persist":
		if len(args) != 1 {
			return argCountErr(c, "persist DIR", args)
		}
		if err := persist.CheckDir(args[0]); err != nil {
			return c.Errf("persist: %v", err)
		}
		g.persistDir, g.persistLine = args[0], c.Line()
	default:
		err := setClusterOption(&g.clusterOptions, opt, args)
		if errors.Is(err, errUnknownOption) {
			return c.Errf("unknown property %q", opt)
		}
		if err != nil {
			return c.Err(err.Error())
		}
	}
	return nil
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
