package gateway

import (
	"fmt"
	"net/netip"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/source"
)

// Static nameserver addresses: `apex NAME ADDRESS...` (and secondary). A
// load balancer that reports only a hostname (EKS's NLB and CLB, for
// example) gives the nameserver name a CNAME, which an NS target must not be
// (RFC 2181 §10.3) and which no parent zone takes as glue. Addresses given
// in the Corefile instead (an NLB's Elastic IPs, say) answer for the name in
// each zone it lies in, as the plugin's own records, and are the glue to
// register at the parent.

// maxNameserverAddrs bounds the addresses of one name (an RRset that still
// fits a UDP answer with the NS records).
const maxNameserverAddrs = 16

// parseNameserverAddrs parses the addresses of an apex or secondary option.
func parseNameserverAddrs(args []string) ([]netip.Addr, error) {
	if len(args) > maxNameserverAddrs {
		return nil, fmt.Errorf("%d addresses, at most %d", len(args), maxNameserverAddrs)
	}
	var out []netip.Addr
	for _, a := range args {
		ip, err := netip.ParseAddr(a)
		if err != nil || ip.Zone() != "" {
			return nil, fmt.Errorf("%q is not an IP address", a)
		}
		out = append(out, ip.Unmap())
	}
	return out, nil
}

// staticNameserverKey is the object key of the static addresses in the index.
const staticNameserverKey = "k8s_gateway/nameservers"

// publishStaticNameservers puts the given addresses of apex and secondary
// into the index: A and AAAA records of each name in each forward zone.
func (g *Gateway) publishStaticNameservers() {
	var rrs []dns.RR
	for _, ns := range []struct {
		name  string
		addrs []netip.Addr
	}{{g.apex, g.apexAddrs}, {g.secondary, g.secondaryAddrs}} {
		if len(ns.addrs) == 0 {
			continue
		}
		names := map[string]bool{}
		for _, zone := range source.ForwardZones(g.Zones) {
			names[g.nameserverName(ns.name, zone)] = true
		}
		for name := range names {
			for _, ip := range ns.addrs {
				hdr := dns.RR_Header{Name: name, Class: dns.ClassINET, Ttl: g.ttl}
				if ip.Is4() {
					hdr.Rrtype = dns.TypeA
					rrs = append(rrs, &dns.A{Hdr: hdr, A: ip.AsSlice()})
				} else {
					hdr.Rrtype = dns.TypeAAAA
					rrs = append(rrs, &dns.AAAA{Hdr: hdr, AAAA: ip.AsSlice()})
				}
			}
		}
	}
	if len(rrs) > 0 {
		g.index.Update(staticNameserverKey, rrs) // outside every zone: dropped
	}
}

// nameserverNames returns the nameserver names of the block's zones.
func (g *Gateway) nameserverNames() []string {
	var out []string
	for _, z := range g.Zones {
		for _, rr := range g.nsRecords(z) {
			if ns, ok := rr.(*dns.NS); ok {
				out = append(out, dns.CanonicalName(ns.Ns))
			}
		}
	}
	return out
}
