package gateway

import (
	"errors"
	"strconv"
	"strings"

	"github.com/coredns/caddy"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/persist"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// blockOption is one row of the table of a k8s_gateway block's options:
// how it parses into the Gateway's values. c is at the option's line, for
// the errors' position.
type blockOption struct {
	// parse reads a one-line option: its name and arguments.
	parse func(c *caddy.Controller, g *Gateway, opt string, args []string) error
	// block reads an option with a block of its own (cluster, updates), c
	// at its name.
	block func(c *caddy.Controller, g *Gateway) error
}

// blockOptionTable holds every option of a k8s_gateway block but those a
// cluster block may set too (clusterOptionTable), by name. Each is
// documented in the README's Syntax (TestDocsOptions).
var blockOptionTable = map[string]blockOption{
	"ttl":              {parse: parseTTL},
	"apex":             {parse: parseNameserver},
	"secondary":        {parse: parseNameserver},
	"parent":           {parse: parseParent},
	"cds":              {parse: parseCDS},
	"catalog":          {parse: parseCatalog},
	"cluster_zones":    {parse: parseClusterZones},
	"fallthrough":      {parse: parseFallthrough},
	"clusterapi":       {parse: parseClusterAPI},
	"ownership":        {parse: parseOwnership},
	"tenant_quota":     {parse: parseTenantQuota},
	"include":          {parse: parseAddressRange},
	"exclude":          {parse: parseAddressRange},
	"tls_reload":       {parse: parseTLSReload},
	"apiserver_qps":    {parse: parseAPIServerQPS},
	"apiserver_burst":  {parse: parseAPIServerBurst},
	"default_location": {parse: parseDefaultLocation},
	"persist":          {parse: parsePersist},
	"cluster":          {block: parseCluster},
	"updates":          {block: parseUpdates},
}

// parseOption applies one option line of the block, c at its name: a row
// of blockOptionTable, or of clusterOptionTable.
func parseOption(c *caddy.Controller, g *Gateway) error {
	opt := c.Val()
	row, ok := blockOptionTable[opt]
	switch {
	case ok && row.block != nil:
		return row.block(c, g)
	case ok:
		return row.parse(c, g, opt, c.RemainingArgs())
	}
	err := setClusterOption(&g.clusterOptions, opt, c.RemainingArgs())
	if errors.Is(err, errUnknownOption) {
		return c.Errf("unknown property %q", opt)
	}
	if err != nil {
		return c.Err(err.Error())
	}
	return nil
}

// The checks of options together run once the block is read, in order;
// each returns the option at fault ("" for the zones of the directive),
// whose line the error names (at: where the block's options are).
var blockChecks = []func(c *caddy.Controller, g *Gateway, at optionLines) (option string, err error){
	checkConflicts, // setup_pairs.go
	func(_ *caddy.Controller, g *Gateway, _ optionLines) (string, error) {
		return "cluster_zones", g.addClusterZones()
	},
	func(_ *caddy.Controller, g *Gateway, _ optionLines) (string, error) { return g.checkZones() },
	checkParent, // parent.go
	checkClaims, // setup_pairs.go
	checkCatalog,
	recordKinds, // setup_owners.go
}

func parseTTL(c *caddy.Controller, g *Gateway, _ string, args []string) error {
	if len(args) != 1 {
		return argCountErr(c, "ttl TTL", args)
	}
	ttl, err := strconv.Atoi(args[0])
	if err != nil || ttl < 0 || ttl > maxTTL {
		return c.Errf("ttl must be an integer from 0 to %d, got %q", maxTTL, args[0])
	}
	g.ttl = uint32(ttl)
	return nil
}

// parseNameserver reads apex and secondary: `apex NAME [ADDRESS...]`.
func parseNameserver(c *caddy.Controller, g *Gateway, opt string, args []string) error {
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
	return nil
}

func parseFallthrough(_ *caddy.Controller, g *Gateway, _ string, args []string) error {
	g.Fall.SetZonesFromArgs(args)
	return nil
}

func parseClusterAPI(_ *caddy.Controller, g *Gateway, _ string, args []string) error {
	g.clusterAPI = &clusterAPIConfig{namespaces: args}
	return nil
}

func parseOwnership(c *caddy.Controller, g *Gateway, _ string, args []string) error {
	if len(args) != 1 {
		return argCountErr(c, "ownership union|first|delegated", args)
	}
	p, ok := index.ParsePolicy(args[0])
	if !ok {
		return c.Errf("unknown ownership policy %q; supported: union, first, delegated", args[0])
	}
	g.ownership = p
	return nil
}

// parseTenantQuota reads tenant_quota RECORDS: the records each namespace
// may publish, 0 for any number.
func parseTenantQuota(c *caddy.Controller, g *Gateway, _ string, args []string) error {
	if len(args) != 1 {
		return argCountErr(c, "tenant_quota RECORDS", args)
	}
	n, err := strconv.ParseUint(args[0], 10, 31)
	if err != nil {
		return c.Errf("tenant_quota: %q is not a number of records (0 for no quota)", args[0])
	}
	g.tenantQuota = int(n)
	return nil
}

// parseAddressRange reads include and exclude.
func parseAddressRange(c *caddy.Controller, g *Gateway, opt string, args []string) error {
	if err := g.addresses.AddRanges(opt, args); err != nil {
		return c.Err(err.Error())
	}
	return nil
}

func parseTLSReload(c *caddy.Controller, g *Gateway, _ string, args []string) error {
	if len(args) != 2 {
		return argCountErr(c, "tls_reload CERT KEY", args)
	}
	g.tlsReload = []string{args[0], args[1]}
	return nil
}

func parseAPIServerQPS(c *caddy.Controller, g *Gateway, _ string, args []string) error {
	if len(args) != 1 {
		return argCountErr(c, "apiserver_qps QPS", args)
	}
	qps, err := strconv.ParseFloat(args[0], 32)
	if err != nil || qps <= 0 || qps > 10000 {
		return c.Errf("apiserver_qps must be a number above 0, at most 10000, got %q", args[0])
	}
	g.apiLimits.QPS = float32(qps)
	return nil
}

func parseAPIServerBurst(c *caddy.Controller, g *Gateway, _ string, args []string) error {
	if len(args) != 1 {
		return argCountErr(c, "apiserver_burst BURST", args)
	}
	burst, err := strconv.Atoi(args[0])
	if err != nil || burst < 1 || burst > 100000 {
		return c.Errf("apiserver_burst must be an integer from 1 to 100000, got %q", args[0])
	}
	g.apiLimits.Burst = burst
	return nil
}

func parseDefaultLocation(c *caddy.Controller, g *Gateway, opt string, args []string) error {
	l, err := parseLocationArgs(opt, args)
	if err != nil {
		return c.Err(err.Error())
	}
	g.defaultLocation = l
	return nil
}

func parsePersist(c *caddy.Controller, g *Gateway, _ string, args []string) error {
	if len(args) != 1 {
		return argCountErr(c, "persist DIR", args)
	}
	if err := persist.CheckDir(args[0]); err != nil {
		return c.Errf("persist: %v", err)
	}
	g.persist.dir = args[0]
	return nil
}
