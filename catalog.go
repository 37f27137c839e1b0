package gateway

import (
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
