package gateway

import (
	"fmt"
	"strings"

	"github.com/coredns/caddy"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/catalog"
)

// catalogFeature is the catalog option: the block also serves an RFC 9432
// catalog zone of its zones (package catalog), for secondaries that consume
// catalogs.
type catalogFeature struct {
	name  string        // the catalog zone, fully qualified, lower case; "" without the option
	group string        // the group property of every member; "" for none
	coo   string        // the catalog the members move to; "" for none
	zone  *catalog.Zone // made by build
}

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

// config returns the catalog of zones: one member per zone.
func (f *catalogFeature) config(zones []string) catalog.Config {
	members := make([]catalog.Member, 0, len(zones))
	for _, z := range zones {
		members = append(members, catalog.Member{Zone: z, Group: f.group, COO: f.coo})
	}
	return catalog.Config{Name: f.name, Refresh: soaRefresh, Retry: soaRetry, Expire: soaExpire, Members: members}
}

// build builds the catalog zone, one member per zone: with the serial of the
// catalog it replaces when it holds the same (a reload that changes
// nothing), else with a serial of at least serial (the start) and above
// that one.
func (f *catalogFeature) build(zones []string, ttl, serial uint32) {
	if f.name == "" {
		return
	}
	cfg := f.config(zones)
	cfg.Serial, cfg.TTL = serial, ttl
	cfg.Serial = catalog.NextSerial(cfg)
	f.zone = catalog.New(cfg)
}

// serves reports whether r is a query of the catalog zone (its transfers
// are the transfer plugin's: Transfer).
func (f *catalogFeature) serves(r *dns.Msg, qname string) bool {
	return f.zone != nil && r.Opcode == dns.OpcodeQuery && dns.IsSubDomain(f.zone.Name(), qname)
}

// lookup answers a query of the catalog zone.
func (f *catalogFeature) lookup(qname string, qtype uint16) (answer, ns []dns.RR, nxdomain bool) {
	answer, ns, res := f.zone.Lookup(qname, qtype)
	return answer, ns, res == catalog.NameError
}
