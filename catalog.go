package gateway

import (
	"fmt"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/catalog"
)

// catalogOption is the catalog option: the block also serves an RFC 9432
// catalog zone that lists its zones, for secondaries that consume catalogs.
type catalogOption struct {
	name  string // the catalog zone, fully qualified, lower case
	group string // the group property of every member; "" for none
	coo   string // the catalog the members move to; "" for none
}

// parseCatalog reads `catalog ZONE [group GROUP] [coo CATALOG]`.
func parseCatalog(c *caddy.Controller, g *Gateway, args []string) error {
	const usage = "catalog ZONE [group GROUP] [coo CATALOG]"
	if len(args) == 0 || len(args)%2 == 0 {
		return argCountErr(c, usage, args)
	}
	o := &catalogOption{name: dns.CanonicalName(args[0])}
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
	g.catalogOpt = o
	return nil
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

// checkCatalog refuses a catalog zone that overlaps a zone of the block:
// the index would answer for it, or it for the index's names.
func (g *Gateway) checkCatalog() error {
	o := g.catalogOpt
	if o == nil {
		return nil
	}
	for _, z := range g.Zones {
		if dns.IsSubDomain(z, o.name) || dns.IsSubDomain(o.name, z) {
			return fmt.Errorf("catalog zone %s overlaps the zone %s of the block: give it a name of its own (such as catalog.invalid. in a server block of its own keys)", o.name, z)
		}
	}
	return nil
}

// buildCatalog builds the catalog zone, with a serial of at least serial
// (the time of the start) and above that of the catalog this block replaces:
// one member per zone of the block.
func (g *Gateway) buildCatalog(serial uint32) {
	o := g.catalogOpt
	if o == nil {
		return
	}
	serial = catalog.NextSerial(o.name, serial)
	members := make([]catalog.Member, 0, len(g.Zones))
	for _, z := range g.Zones {
		members = append(members, catalog.Member{Zone: z, Group: o.group, COO: o.coo})
	}
	g.catalog = catalog.New(catalog.Config{
		Name: o.name, Serial: serial, TTL: g.ttl,
		Refresh: soaRefresh, Retry: soaRetry, Expire: soaExpire,
		Members: members,
	})
}

// serveCatalogQuery answers a query for the catalog zone. Transfers are
// served by the transfer plugin (Transfer), as for the other zones.
func (g *Gateway) serveCatalogQuery(w dns.ResponseWriter, r *dns.Msg, state *request.Request, qname string) (int, error) {
	qtype := state.QType()
	switch {
	case moreThanOneOPT(r):
		return dns.RcodeFormatError, nil
	case qtype == dns.TypeAXFR || qtype == dns.TypeIXFR:
		return refuseTransfer(w, r, qname, g.catalog.Name())
	case state.QClass() != dns.ClassINET && state.QClass() != dns.ClassANY:
		return dns.RcodeRefused, nil
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	answer, ns, res := g.catalog.Lookup(qname, qtype)
	m.Answer = withQueryCase(answer, qname, r.Question[0].Name)
	m.Ns = ns
	if res == catalog.NameError {
		m.Rcode = dns.RcodeNameError
	}
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
}
