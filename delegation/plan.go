package delegation

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// registryLabel is the label under the parent zone below which the records
// the plugin wrote into the parent are listed.
const registryLabel = "_k8s-gateway-delegation"

// zoneCut is the delegation of one zone: its nameservers and the addresses of
// those below the zone cut (the glue).
type zoneCut struct {
	zone        string // fully qualified
	nameservers []string
	glue        map[string][]netip.Addr // nameserver name → its addresses
	ttl         uint32
}

// records returns the NS and glue records of w, in a stable order. Glue is
// given only for nameserver names at or below the zone (RFC 9471: glue for
// names below the cut is required, and the parent holds no other).
func (w zoneCut) records() []dns.RR {
	zone := dns.CanonicalName(w.zone)
	var out []dns.RR
	for _, ns := range w.nameservers {
		out = append(out, &dns.NS{Hdr: hdr(zone, dns.TypeNS, w.ttl), Ns: dns.CanonicalName(ns)})
	}
	for name, addrs := range w.glue {
		name = dns.CanonicalName(name)
		if !dns.IsSubDomain(zone, name) {
			continue
		}
		for _, a := range addrs {
			if a.Is4() {
				out = append(out, &dns.A{Hdr: hdr(name, dns.TypeA, w.ttl), A: a.AsSlice()})
			} else if a.Is6() && !a.Is4In6() {
				out = append(out, &dns.AAAA{Hdr: hdr(name, dns.TypeAAAA, w.ttl), AAAA: a.AsSlice()})
			}
		}
	}
	return sortRRs(out)
}

func hdr(name string, t uint16, ttl uint32) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: t, Class: dns.ClassINET, Ttl: ttl}
}

// key is the identity of a record in a plan: owner, type and data, without
// the TTL (RFC 2136 §3.4.2.4 compares records without it).
func key(rr dns.RR) string {
	c := dns.Copy(rr)
	c.Header().Ttl = 0
	// DNS compares names in ASCII (RFC 4343); String escapes every other
	// octet (\DDD), so lower-casing it lowers ASCII only.
	return strings.ToLower(c.String())
}

func sortRRs(rrs []dns.RR) []dns.RR {
	slices.SortFunc(rrs, func(a, b dns.RR) int { return strings.Compare(key(a), key(b)) })
	return slices.CompactFunc(rrs, func(a, b dns.RR) bool { return key(a) == key(b) })
}

// plan returns the records to add and those to remove, so that the parent
// holds want, given the records owned (written before, as the registry
// lists them): a record is removed only when it is owned and not wanted.
func plan(want, owned []dns.RR) (add, remove []dns.RR) {
	wanted := map[string]bool{}
	for _, rr := range want {
		wanted[key(rr)] = true
	}
	have := map[string]bool{}
	for _, rr := range owned {
		have[key(rr)] = true
		if !wanted[key(rr)] {
			remove = append(remove, rr)
		}
	}
	for _, rr := range want {
		if !have[key(rr)] {
			add = append(add, rr)
		}
	}
	return add, remove
}

// registryName returns the owner of the registry TXT of zone in parent:
// <zone relative to parent>._k8s-gateway-delegation.<parent>. It must not be
// below the zone cut, where the parent would answer with a referral.
func registryName(zone, parent string) string {
	zone, parent = dns.CanonicalName(zone), dns.CanonicalName(parent)
	if parent == "." {
		return zone + registryLabel + "."
	}
	return strings.TrimSuffix(zone, "."+parent) + "." + registryLabel + "." + parent
}

// longestAddress is the longest address in presentation form (IPv6).
const longestAddress = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"

// CheckZones reports why the delegation of one of zones, whose NS RRsets
// ns returns, could not be kept in its parent: the root has none, and the
// name of its registry (registryName, longest below the root) and each of
// its records in the registry (one TXT string each, at most 255 octets)
// must fit, and decode again as themselves. Only the zones the parent
// option delegates are checked (not reverse zones, nor zones nested in
// another of zones).
func CheckZones(zones []string, ns func(zone string) []dns.RR) error {
	for _, zone := range zones {
		zone = dns.CanonicalName(zone)
		if !delegated(zones, zone) {
			continue
		}
		if zone == "." {
			return fmt.Errorf("the root zone has no parent")
		}
		if reg := registryName(zone, "."); len(reg) > 254 {
			return fmt.Errorf("zone %s: the name of its registry in the parent, %s, would be longer than 255 octets", zone, reg)
		}
		var longest []dns.RR
		for _, rr := range ns(zone) {
			n, ok := rr.(*dns.NS)
			if !ok {
				continue
			}
			longest = append(longest, &dns.NS{Hdr: hdr(zone, dns.TypeNS, 0), Ns: dns.CanonicalName(n.Ns)})
			if dns.IsSubDomain(zone, dns.CanonicalName(n.Ns)) {
				longest = append(longest, &dns.AAAA{Hdr: hdr(dns.CanonicalName(n.Ns), dns.TypeAAAA, 0), AAAA: netip.MustParseAddr(longestAddress).AsSlice()})
			}
		}
		enc := encodeRegistry(longest)
		for i, s := range enc {
			if len(s) > 255 {
				return fmt.Errorf("zone %s: its record %s %s in the registry of the parent would be longer than 255 octets", zone, longest[i].Header().Name, dns.TypeToString[longest[i].Header().Rrtype])
			}
		}
		// Each record must decode as itself, not merely decode: else every
		// sync would remove what the registry lists and write it again.
		if back, want := decodeRegistry(zone, enc), sortRRs(longest); !slices.EqualFunc(back, want, func(a, b dns.RR) bool { return key(a) == key(b) }) {
			return fmt.Errorf("zone %s: a nameserver name of its delegation cannot be listed in the registry of the parent (a space in it, or an escaped last dot?)", zone)
		}
	}
	return nil
}

// encodeRegistry returns the TXT strings that list rrs: one record per
// string, in presentation form without the TTL.
func encodeRegistry(rrs []dns.RR) []string {
	out := make([]string, 0, len(rrs))
	for _, rr := range rrs {
		h := rr.Header()
		// The owner as presented, escaped (a tab in it is \009), as the data is.
		owner, _, _ := strings.Cut(h.String(), "\t")
		out = append(out, owner+" "+dns.TypeToString[h.Rrtype]+" "+strings.TrimPrefix(rr.String(), h.String()))
	}
	return out
}

// decodeRegistry parses the strings of a registry TXT. Strings that do not
// parse, or that name a record the package never writes (another type, or
// an owner outside zone), are ignored: a registry an attacker edited cannot
// make the plugin delete anything but NS and glue of its own zone.
func decodeRegistry(zone string, txt []string) []dns.RR {
	zone = dns.CanonicalName(zone)
	var out []dns.RR
	buf := make([]byte, 1024) // an NS or an address record: two names at most
	for _, s := range txt {
		f := strings.Fields(s)
		if len(f) != 3 {
			continue
		}
		rr, err := dns.NewRR(f[0] + " 0 IN " + f[1] + " " + f[2])
		if err != nil || rr == nil {
			continue
		}
		h := rr.Header()
		switch {
		case h.Rrtype == dns.TypeNS && dns.CanonicalName(h.Name) == zone:
		case (h.Rrtype == dns.TypeA || h.Rrtype == dns.TypeAAAA) && dns.IsSubDomain(zone, dns.CanonicalName(h.Name)):
		default:
			continue
		}
		// A record that does not pack (an NS target whose last dot is
		// escaped, say) would fail every update that removes it.
		if _, err := dns.PackRR(rr, buf, 0, nil, false); err != nil {
			continue
		}
		out = append(out, rr)
	}
	return sortRRs(out)
}
