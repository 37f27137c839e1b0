package source

import (
	"net"
	"strings"

	"github.com/miekg/dns"
)

// IsReverseZone reports whether zone is under in-addr.arpa. or ip6.arpa.
func IsReverseZone(zone string) bool {
	return dns.IsSubDomain("in-addr.arpa.", zone) || dns.IsSubDomain("ip6.arpa.", zone)
}

// ForwardZones returns the zones that are not reverse zones: the zones that
// objects publish names in.
func ForwardZones(zones []string) []string {
	var out []string
	for _, z := range zones {
		if !IsReverseZone(z) {
			out = append(out, z)
		}
	}
	return out
}

// WithPTR adds, for every A and AAAA record of a (non-wildcard) name, a PTR
// record from the address's reverse name back to the name. The index keeps
// only those inside a configured reverse zone.
func WithPTR(rrs []dns.RR) []dns.RR {
	var ptrs []dns.RR
	for _, rr := range rrs {
		var ip net.IP
		switch x := rr.(type) {
		case *dns.A:
			ip = x.A
		case *dns.AAAA:
			ip = x.AAAA
		default:
			continue
		}
		name := rr.Header().Name
		if strings.HasPrefix(name, "*.") || IsReverseZone(name) {
			continue // a wildcard, or an address published in a reverse zone
		}
		if rev, err := dns.ReverseAddr(ip.String()); err == nil {
			ptrs = append(ptrs, &dns.PTR{
				Hdr: dns.RR_Header{Name: rev, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: rr.Header().Ttl},
				Ptr: name,
			})
		}
	}
	if len(ptrs) == 0 {
		return rrs
	}
	return append(rrs[:len(rrs):len(rrs)], ptrs...)
}
