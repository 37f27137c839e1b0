package gateway

import (
	"fmt"
	"strings"

	"github.com/coredns/caddy"
	"github.com/miekg/dns"
)

// parseCatalog reads `catalog ZONE [group GROUP] [coo CATALOG]`.
func parseCatalog(c *caddy.Controller, g *Gateway, _ string, args []string) error {
	const usage = "catalog ZONE [group GROUP] [coo CATALOG]"
	if len(args) == 0 || len(args)%2 == 0 {
		return argCountErr(c, usage, args)
	}
	o := catalogFeature{name: dns.CanonicalName(args[0])}
	if _, ok := dns.IsDomainName(o.name); !ok || o.name == "." {
		return c.Errf("catalog: invalid zone %q", args[0])
	}
	for i := 1; i < len(args); i += 2 {
		switch k, v := args[i], args[i+1]; k {
		case "group":
			if len(v) > 255 {
				return c.Errf("catalog: group %q is longer than 255 octets", v)
			}
			o.group = v
		case "coo":
			coo := dns.CanonicalName(v)
			if _, ok := dns.IsDomainName(coo); !ok || coo == o.name {
				return c.Errf("catalog: invalid coo catalog %q", v)
			}
			o.coo = coo
		default:
			return c.Errf("catalog: unknown argument %q; usage: %s", k, usage)
		}
	}
	if !coveredBy(o.name, c.ServerBlockKeys) {
		return c.Errf("catalog: zone %s is not a zone of the server block (%s): CoreDNS would not route its queries and transfers here", o.name, strings.Join(c.ServerBlockKeys, " "))
	}
	g.catalog = o
	return nil
}

// checkCatalog refuses a catalog zone that overlaps a zone of the block
// (the index would answer for it, or it for the index's names), or that
// could not be served (catalog.Config.Check: a name too long for its
// members' properties, say).
func checkCatalog(_ *caddy.Controller, g *Gateway, _ optionLines) (string, error) {
	if o := g.catalog; o.name != "" {
		for _, z := range g.Zones {
			if dns.IsSubDomain(z, o.name) || dns.IsSubDomain(o.name, z) {
				return "catalog", fmt.Errorf("catalog zone %s overlaps the zone %s of the block: give it a name of its own (such as catalog.invalid. in a server block of its own keys)", o.name, z)
			}
		}
		if err := o.config(g.Zones).Check(); err != nil {
			return "catalog", fmt.Errorf("catalog: %v", err)
		}
	}
	return "", nil
}
