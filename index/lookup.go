package index

import (
	"slices"

	"github.com/miekg/dns"
)

// Result is the kind of answer a lookup found.
type Result int

const (
	// Success is a positive answer.
	Success Result = iota
	// NameError means the name does not exist (NXDOMAIN).
	NameError
	// NoData means the name exists, but not with the type asked for.
	NoData
	// ServerFailure means the answer could not be found (a CNAME loop).
	ServerFailure
	// Delegation means the name is at or below a zone cut (NS records below
	// the apex): the answer is a referral.
	Delegation
)

// maxChain is the number of CNAME links followed inside a zone. A longer
// chain is answered as far as that, and the resolver follows the rest (RFC
// 1034 §3.6.2: a chain is no failure; Knot stops after 5 CNAMEs, BIND too
// has a bound).
const maxChain = 8

// Lookup answers qname and qtype from zone zi of the snapshot, following RFC
// 1034 §4.3.2 with RFC 4592 wildcards. It returns the answer, authority and
// additional sections. qname must be lower case and inside the zone. The
// records of the answer and additional sections are new, owned by the
// caller; those of the authority section (SOA, NS) are the snapshot's and
// must not be changed.
func (s *Snapshot) Lookup(zi int, qname string, qtype uint16) (answer, ns, extra []dns.RR, res Result) {
	return s.LookupFor(zi, qname, qtype, nil)
}

// LookupFor is Lookup for client c: at a steered name (see steer.go), the
// answer is the addresses of the target chosen for c. With a nil c, every
// address answers.
func (s *Snapshot) LookupFor(zi int, qname string, qtype uint16, c *Client) (answer, ns, extra []dns.RR, res Result) {
	zone := s.zones[zi].name
	if qtype == dns.TypeDS && qname == zone && s.parents[zi] >= 0 {
		// The DS of a nested zone is the parent's data (RFC 4035
		// §3.1.4.1), and the parent never has any: NODATA from the parent.
		return nil, s.zones[s.parents[zi]].soa, nil, NoData
	}
	for hops := 0; ; hops++ {
		if hops > 0 && owns(answer, qname) {
			// A loop: RFC 1034 §3.6.2 has it signalled as an error.
			return nil, nil, nil, ServerFailure
		}
		if hops > maxChain {
			return answer, nil, nil, Success
		}
		if s.cuts {
			if cut, at := s.cut(qname, zone); cut != nil && !(at == qname && qtype == dns.TypeDS) {
				nsrrs := cut.rrs(dns.TypeNS, at)
				return answer, nsrrs, s.addresses(nsrrs), Delegation
			}
		}
		n, found := s.find(qname, zone)
		if !found {
			return answer, s.zones[zi].soa, nil, NameError
		}
		if qname == zone {
			switch qtype {
			case dns.TypeSOA, dns.TypeANY:
				return append(answer, s.zones[zi].soa...), nil, nil, Success
			case dns.TypeNS:
				nsrrs := s.zones[zi].ns
				return append(answer, nsrrs...), nil, s.addresses(nsrrs), Success
			}
		}
		if followsCNAME(qtype) {
			if c := n.set(dns.TypeCNAME); c.count > 0 {
				// Synthesized from a wildcard or not, the CNAME is owned by
				// the name asked for.
				cname, ok := c.first(qname).(*dns.CNAME)
				if !ok {
					return answer, nil, nil, ServerFailure
				}
				if answer == nil {
					answer = make([]dns.RR, 0, 4) // room for the CNAME and what it leads to
				}
				answer = append(answer, cname)
				target := dns.CanonicalName(cname.Target)
				if s.Zone(target) != zi {
					return answer, nil, nil, Success
				}
				qname = target
				continue
			}
		}
		// With ANY, the first RRset stands for all of them (RFC 8482).
		rrs := n.steered(qtype, qname, c)
		if len(rrs) == 0 {
			return answer, s.zones[zi].soa, nil, NoData
		}
		if answer == nil {
			answer = rrs
		} else {
			answer = append(answer, rrs...)
		}
		return answer, nil, s.additional(rrs), Success
	}
}

// followsCNAME reports whether a question of type qtype at a CNAME is
// answered by following it (RFC 1034 §4.3.2 step 3a). Not for CNAME and ANY,
// which the CNAME answers itself, nor for RRSIG and NSEC: in a signed zone
// they sit beside the CNAME at its owner (RFC 2181 §10.1, RFC 4035 §2.5),
// so they are asked of the owner, which here has none (NODATA), as BIND and
// Knot answer.
func followsCNAME(qtype uint16) bool {
	switch qtype {
	case dns.TypeCNAME, dns.TypeANY, dns.TypeRRSIG, dns.TypeNSEC:
		return false
	}
	return true
}

// owns reports whether one of the CNAMEs of a chain is owned by name.
func owns(chain []dns.RR, name string) bool {
	for _, rr := range chain {
		if rr.Header().Name == name {
			return true
		}
	}
	return false
}

// find returns the node that answers for qname: the node of qname itself, or
// the wildcard that covers it; found is false when the name does not exist.
// Per RFC 4592 the source of synthesis is "*." under the closest encloser,
// the longest ancestor of qname that exists; an existing name or empty
// non-terminal is never answered from a wildcard.
func (s *Snapshot) find(qname, zone string) (n view, found bool) {
	if n, ok := s.names.get(qname, s.bit); ok {
		return n, true
	}
	for off, end := dns.NextLabel(qname, 0); !end; off, end = dns.NextLabel(qname, off) {
		ce := qname[off:]
		if len(ce) < len(zone) {
			break
		}
		if n, ok := s.names.get(ce, s.bit); ok {
			if n.wildcard() {
				return s.wildcard(ce)
			}
			return nil, false
		}
	}
	return nil, false
}

// wildcard returns the node of "*.<name>", without allocating for names of
// usual length.
func (s *Snapshot) wildcard(name string) (view, bool) {
	var buf [256]byte
	if len(name)+2 > len(buf) {
		return s.names.get("*."+name, s.bit)
	}
	b := append(append(buf[:0], '*', '.'), name...)
	return s.names.getBytes(b, s.bit)
}

// cut returns the highest node between the zone apex (exclusive) and qname
// (inclusive) that has NS records, and its name; nil when there is none.
func (s *Snapshot) cut(qname, zone string) (cut view, at string) {
	for name, off, end := qname, 0, false; len(name) > len(zone); {
		if n, ok := s.names.get(name, s.bit); ok && n.has(dns.TypeNS) {
			cut, at = n, name
		}
		if off, end = dns.NextLabel(qname, off); end {
			break
		}
		name = qname[off:]
	}
	return cut, at
}

// additional returns the in-zone addresses of the names that MX, SRV and NS
// records in rrs point at (RFC 1035 §3.3, RFC 2782).
func (s *Snapshot) additional(rrs []dns.RR) []dns.RR {
	switch rrs[0].Header().Rrtype {
	case dns.TypeMX, dns.TypeSRV, dns.TypeNS:
		return s.addresses(rrs)
	}
	return nil
}

// addresses returns the A and AAAA records of the targets of rrs, when those
// names are in one of the snapshot's zones.
func (s *Snapshot) addresses(rrs []dns.RR) []dns.RR {
	var extra []dns.RR
	var seen []string
	for _, rr := range rrs {
		var target string
		switch x := rr.(type) {
		case *dns.MX:
			target = x.Mx
		case *dns.SRV:
			target = x.Target
		case *dns.NS:
			target = x.Ns
		default:
			continue
		}
		target = dns.CanonicalName(target)
		if s.Zone(target) < 0 || slices.Contains(seen, target) {
			continue
		}
		seen = append(seen, target)
		if n, ok := s.names.get(target, s.bit); ok {
			extra = append(extra, n.rrs(dns.TypeA, target)...)
			extra = append(extra, n.rrs(dns.TypeAAAA, target)...)
		}
	}
	return extra
}

// ZoneOf returns the position in zones of the most specific zone that contains
// name, or -1. Labels compare case-insensitively (ASCII), as dns.IsSubDomain
// does, but without allocating: it runs on the query path. name and the zones
// must be fully qualified.
func ZoneOf(zones []string, name string) int {
	best := -1
	for i, z := range zones {
		if (best < 0 || len(z) > len(zones[best])) && inZone(name, z) {
			best = i
		}
	}
	return best
}

// inZone reports whether name is zone or a name below it, comparing labels
// case-insensitively (ASCII) as dns.IsSubDomain does. Both are fully qualified.
func inZone(name, zone string) bool {
	if zone == "." {
		return true
	}
	for off := 0; ; {
		switch rest := len(name) - off; {
		case rest == len(zone):
			return equalFoldASCII(name[off:], zone)
		case rest < len(zone):
			return false
		}
		var end bool
		if off, end = dns.NextLabel(name, off); end {
			return false
		}
	}
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
