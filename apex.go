package gateway

import (
	"net/netip"
	"strings"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/source"
)

// SOA timers. Secondaries learn of changes by NOTIFY; refresh and retry are
// the fallback when a NOTIFY is lost.
const (
	soaRefresh = 300
	soaRetry   = 60
	soaExpire  = 604800
)

// defaultApex is the nameserver name when none is configured, as in the original plugin.
const defaultApex = "dns1.kube-system"

// nameserverName returns the fully qualified name of a nameserver given as
// apex or secondary, in zone: an absolute name stays as it is, a relative one
// is taken under zone. A reverse zone has no names with addresses, so there a
// relative name is taken under the first forward zone, where the nameserver's
// Service gives it its addresses (parse rejects a relative name in a block
// without forward zones).
func (g *Gateway) nameserverName(name, zone string) string {
	name = strings.ToLower(name)
	if strings.HasSuffix(name, ".") {
		return name
	}
	if source.IsReverseZone(zone) {
		if fwd := source.ForwardZones(g.Zones); len(fwd) > 0 {
			zone = fwd[0]
		}
	}
	return name + "." + zone
}

// newSOA returns the SOA record of zone for serial. MNAME is the primary
// nameserver (apex), RNAME hostmaster.<zone>; the TTL and the negative-caching
// TTL (MINIMUM, RFC 2308) are the plugin's TTL.
func (g *Gateway) newSOA(zone string, serial uint32) *dns.SOA {
	return &dns.SOA{
		Hdr:     dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: g.ttl},
		Ns:      g.nameserverName(g.apex, zone),
		Mbox:    "hostmaster." + zone,
		Serial:  serial,
		Refresh: soaRefresh,
		Retry:   soaRetry,
		Expire:  soaExpire,
		Minttl:  g.ttl,
	}
}

// nsRecords returns the NS RRset of zone: the apex and, if set, the secondary.
func (g *Gateway) nsRecords(zone string) []dns.RR {
	rrs := []dns.RR{&dns.NS{
		Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: g.ttl},
		Ns:  g.nameserverName(g.apex, zone),
	}}
	if g.secondary != "" {
		rrs = append(rrs, &dns.NS{
			Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: g.ttl},
			Ns:  g.nameserverName(g.secondary, zone),
		})
	}
	return rrs[:len(rrs):len(rrs)]
}

// nameserverServices returns the Services ("namespace/name") whose addresses
// publish the nameserver names: a relative apex or secondary of exactly two
// labels, <name>.<namespace>, names the plugin's own Service, as in the
// original plugin. The index then answers the nameserver names and the glue
// from them whatever resource kinds are watched.
func (g *Gateway) nameserverServices() []string {
	var out []string
	for i, name := range []string{g.apex, g.secondary} {
		if name == "" || strings.HasSuffix(name, ".") || len([][]netip.Addr{g.apexAddrs, g.secondaryAddrs}[i]) > 0 {
			continue // absolute, or its addresses are given
		}
		parts := strings.Split(strings.ToLower(name), ".")
		if len(parts) == 2 {
			out = append(out, parts[1]+"/"+parts[0])
		}
	}
	return out
}
