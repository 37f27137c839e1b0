//go:build e2e

package e2e

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// allowance is a difference between the plugin and Knot that the comparison
// of TestDifferential forgives: because an RFC allows both answers, or for
// the reason its kind names (differential_request_rules_test.go). apply
// checks that the difference is the allowed one and, if so, removes it from
// the copies in c (only what the rule names) and reports true.
type allowance struct {
	name  string
	kind  string
	apply func(c *diffCase) bool
}

// allowances are the differences forgiven, in the order they are applied;
// every other difference fails the test.
var allowances = slices.Concat(requestAllowances, answerAllowances)

// answerAllowances are the differences in what the answers hold.
var answerAllowances = []allowance{
	{
		// RFC 8482 §4.2: a server answers ANY with one RRset of its choice.
		// At the apex the plugin gives the SOA, Knot the NS RRset (with its
		// glue). Forgiven when each answer is one complete RRset of the
		// zone at the query name, and the rest of the replies agree.
		name: "any-at-apex", kind: diffRFC,
		apply: func(c *diffCase) bool {
			p, k := c.plugin, c.knot
			if c.q.qtype != dns.TypeANY || !strings.EqualFold(c.q.name, c.zone) || p.Truncated || k.Truncated {
				return false
			}
			if sameRecords(p.Answer, k.Answer) || !oneZoneRRset(c.q.name, p.Answer, c.rrsets) || !oneZoneRRset(c.q.name, k.Answer, c.rrsets) {
				return false
			}
			p.Answer, p.Extra = nil, withoutAddresses(p.Extra)
			k.Answer, k.Extra = nil, withoutAddresses(k.Extra)
			return true
		},
	},
	{
		// RFC 2181 §9: a reply that does not fit is truncated (TC) and the
		// client asks again over TCP; "the partial RRSet that would not
		// completely fit may be left in the response". CoreDNS keeps the
		// records that fit, in its order; Knot keeps none of an answer
		// that does not fit, and its own choice of glue in a referral.
		// Forgiven when both set TC and every record each kept is in its
		// own reply over TCP (which the tcp flag set compares in full).
		name: "truncated", kind: diffRFC,
		apply: func(c *diffCase) bool {
			if !c.plugin.Truncated || !c.knot.Truncated || !c.full() {
				return false
			}
			if !partOf(c.plugin, c.pluginFull) || !partOf(c.knot, c.knotFull) {
				return false
			}
			if sameRecords(c.plugin.Answer, c.knot.Answer) && sameRecords(c.plugin.Ns, c.knot.Ns) && sameRecords(c.plugin.Extra, c.knot.Extra) {
				return false
			}
			for _, m := range []*dns.Msg{c.plugin, c.knot} {
				m.Answer, m.Ns, m.Extra = nil, nil, onlyOPT(m.Extra)
			}
			return true
		},
	},
	{
		// RFC 2181 §9: TC when a required RRset does not fit. Knot keeps
		// more room than the client's buffer asks (a referral whose glue
		// the plugin and BIND fit in 790 octets, Knot truncates).
		// Forgiven when the plugin's reply is complete (its sections equal
		// its reply over TCP) and Knot's records are a part of its own
		// over TCP.
		name: "knot-truncates-early", kind: diffReference,
		apply: func(c *diffCase) bool {
			p, k := c.plugin, c.knot
			if p.Truncated || !k.Truncated || !c.full() || !partOf(k, c.knotFull) ||
				!sameRecords(p.Answer, c.pluginFull.Answer) || !sameRecords(p.Ns, c.pluginFull.Ns) || !sameRecords(withoutOPT(p.Extra), withoutOPT(c.pluginFull.Extra)) {
				return false
			}
			k.Truncated, k.Answer, k.Ns, k.Extra = false, p.Answer, p.Ns, append(withoutOPT(p.Extra), onlyOPT(k.Extra)...)
			return true
		},
	},
	{
		// RFC 4343 §3: names compare without regard to case. Knot writes
		// every name of a reply that shares a suffix with the query name
		// as a compression pointer into the question, so that suffix takes
		// the query's spelling (a referral asked as DELEG.zone has
		// "DELEG.zone. NS ns.DELEG.zone."); the plugin keeps the names'
		// own case. Forgiven: the case of names, except the owners of
		// answer records owned by the query name, which both give the
		// query's spelling (RFC 4343 §4.1) and are compared as they are.
		name: "knot-compression-case", kind: diffRFC,
		apply: func(c *diffCase) bool {
			if c.q.name == strings.ToLower(c.q.name) {
				return false
			}
			changed := false
			keep := c.q.name
			if c.q.qtype == dns.TypeAXFR || c.q.qtype == dns.TypeIXFR {
				keep = "" // a transfer's records are the zone's, not answers to the name
			}
			for _, m := range []*dns.Msg{c.plugin, c.knot} {
				changed = lowerNames(m.Answer, keep) || changed
				changed = lowerNames(m.Ns, "") || changed
				changed = lowerNames(m.Extra, "") || changed
			}
			return changed
		},
	},
	{
		// RFC 1034 §4.3.2 step 3a follows a CNAME chain inside the zone
		// without a bound; a server may stop and leave the rest to the
		// resolver, which restarts at the last target. Knot stops after
		// 5 CNAMEs, the plugin after 9 (README: 8 links followed).
		// Forgiven when Knot's answer is CNAMEs alone, NOERROR, with
		// nothing else, and the plugin's chain starts with them: the
		// plugin's reply is then compared as far as Knot's goes.
		name: "cname-chain-cut", kind: diffRFC,
		apply: func(c *diffCase) bool {
			p, k := c.plugin, c.knot
			n := len(k.Answer)
			if k.Rcode != dns.RcodeSuccess || n == 0 || len(k.Ns) != 0 || len(withoutOPT(k.Extra)) != 0 || len(p.Answer) <= n {
				return false
			}
			if !strings.EqualFold(k.Answer[0].Header().Name, c.q.name) || !isChain(k.Answer) || loops(k.Answer) {
				return false
			}
			for i, rr := range k.Answer {
				if canonicalRR(rr, false) != canonicalRR(p.Answer[i], false) {
					return false
				}
			}
			p.Rcode, p.Answer, p.Ns, p.Extra = dns.RcodeSuccess, p.Answer[:n], nil, onlyOPT(p.Extra)
			return true
		},
	},
	{
		// RFC 1034 §4.3.2 step 3a restarts at a CNAME's target; when the
		// target is in a child zone of the same server, Knot looks it up
		// in the parent and adds the child's delegation (a referral) to
		// the authority section, BIND and the plugin give the CNAME
		// alone. Forgiven when the answers agree and Knot's authority is
		// the NS RRset of a zone of the server that holds the last target.
		name: "cname-into-child-zone", kind: diffRFC,
		apply: func(c *diffCase) bool {
			p, k := c.plugin, c.knot
			if c.peers == nil || len(p.Ns) != 0 || len(k.Ns) == 0 || !isChain(k.Answer) || !sameRecords(p.Answer, k.Answer) {
				return false
			}
			target := k.Answer[len(k.Answer)-1].(*dns.CNAME).Target
			cut := k.Ns[0].Header().Name
			if c.peers.zoneOf(target) != dns.CanonicalName(cut) || !oneZoneRRset(cut, k.Ns, c.rrsets) {
				return false
			}
			k.Ns, k.Extra = nil, append(withoutOPT(p.Extra), onlyOPT(k.Extra)...)
			return true
		},
	},
	{
		// RFC 1034 §4.3.2 step 6 adds "other RRs which may be useful";
		// the plugin gives the addresses of MX, SRV and NS targets in any
		// of its zones (RFC 2181 §5.4.1: authoritative data), BIND and
		// Knot only those of the zone answering.
		name: "additional-from-other-zone", kind: diffRFC,
		apply: func(c *diffCase) bool {
			if c.peers == nil || len(c.peers.zones) < 2 || c.plugin.Truncated {
				return false
			}
			other := func(rr dns.RR) bool {
				t := rr.Header().Rrtype
				z := c.peers.zoneOf(rr.Header().Name)
				return (t == dns.TypeA || t == dns.TypeAAAA) && z != "" && z != c.zone
			}
			n := len(c.plugin.Extra)
			c.plugin.Extra = slices.DeleteFunc(slices.Clone(c.plugin.Extra), other)
			// Knot's too, when an allowance gave it the plugin's (sameRoom).
			c.knot.Extra = slices.DeleteFunc(slices.Clone(c.knot.Extra), other)
			return len(c.plugin.Extra) != n
		},
	},
	{
		// RFC 1034 §3.6.2: "CNAME chains should be followed and CNAME
		// loops signalled as an error". The plugin answers a loop with
		// SERVFAIL; Knot gives the CNAMEs up to the first repeated name
		// and leaves the loop to the resolver. Forgiven when the plugin's
		// reply is an empty SERVFAIL and Knot's answer is such a loop.
		name: "cname-loop", kind: diffRFC,
		apply: func(c *diffCase) bool {
			p, k := c.plugin, c.knot
			if p.Rcode != dns.RcodeServerFailure || len(p.Answer)+len(p.Ns)+len(withoutOPT(p.Extra)) != 0 ||
				k.Rcode != dns.RcodeSuccess || len(k.Ns) != 0 || !loops(k.Answer) {
				return false
			}
			p.Rcode, p.Authoritative, p.Answer = k.Rcode, k.Authoritative, k.Answer
			return true
		},
	},
	{
		// RFC 8914 §4.21: Knot adds Extended DNS Error 20 (Not
		// Authoritative) to a REFUSED reply; CoreDNS sends no EDE.
		name: "ede-not-authoritative", kind: diffRFC,
		apply: func(c *diffCase) bool {
			opt := c.knot.IsEdns0()
			if c.knot.Rcode != dns.RcodeRefused || opt == nil {
				return false
			}
			n := len(opt.Option)
			opt.Option = slices.DeleteFunc(opt.Option, func(o dns.EDNS0) bool {
				ede, ok := o.(*dns.EDNS0_EDE)
				return ok && ede.InfoCode == dns.ExtendedErrorCodeNotAuthoritative
			})
			return len(opt.Option) != n
		},
	},
	{
		// RFC 4035 §3.1.6: the CD bit of the query is copied into the
		// reply. CoreDNS does (miekg/dns SetReply); Knot does not.
		name: "cd-copied", kind: diffReference,
		apply: func(c *diffCase) bool {
			if !c.q.flags.cd || !c.plugin.CheckingDisabled || c.knot.CheckingDisabled {
				return false
			}
			c.plugin.CheckingDisabled = false
			return true
		},
	},
}

// isChain reports whether rrs are CNAMEs, each owned by the previous one's
// target.
func isChain(rrs []dns.RR) bool {
	for i, rr := range rrs {
		c, ok := rr.(*dns.CNAME)
		if !ok || i > 0 && !strings.EqualFold(c.Hdr.Name, rrs[i-1].(*dns.CNAME).Target) {
			return false
		}
	}
	return len(rrs) > 0
}

// loops reports whether rrs is a CNAME chain whose last target is the owner
// of one of its records.
func loops(rrs []dns.RR) bool {
	if !isChain(rrs) {
		return false
	}
	last := rrs[len(rrs)-1].(*dns.CNAME).Target
	return slices.ContainsFunc(rrs, func(rr dns.RR) bool { return strings.EqualFold(rr.Header().Name, last) })
}

// partOf reports whether every record of each section of m is in the same
// section of full.
func partOf(m, full *dns.Msg) bool {
	for _, s := range [][2][]dns.RR{{m.Answer, full.Answer}, {m.Ns, full.Ns}, {withoutOPT(m.Extra), withoutOPT(full.Extra)}} {
		all := renderSection(s[1], false)
		for _, rr := range s[0] {
			if !slices.Contains(all, canonicalRR(rr, false)) {
				return false
			}
		}
	}
	return true
}

// lowerNames lower-cases the domain names of rrs, in place: owners (but
// those spelled exactly as keepOwner) and the names in the data of NS,
// CNAME, MX, SRV, PTR and SOA records. It reports whether it changed any.
func lowerNames(rrs []dns.RR, keepOwner string) bool {
	changed := false
	lower := func(s *string) {
		if l := strings.ToLower(*s); l != *s {
			*s, changed = l, true
		}
	}
	for _, rr := range rrs {
		if h := rr.Header(); h.Name != keepOwner {
			lower(&h.Name)
		}
		switch x := rr.(type) {
		case *dns.NS:
			lower(&x.Ns)
		case *dns.CNAME:
			lower(&x.Target)
		case *dns.MX:
			lower(&x.Mx)
		case *dns.SRV:
			lower(&x.Target)
		case *dns.PTR:
			lower(&x.Ptr)
		case *dns.SOA:
			lower(&x.Ns)
			lower(&x.Mbox)
		}
	}
	return changed
}

// oneZoneRRset reports whether rrs is exactly one RRset that the zone holds
// at name.
func oneZoneRRset(name string, rrs []dns.RR, rrsets zoneRRsets) bool {
	if len(rrs) == 0 {
		return false
	}
	var got []string
	for _, rr := range rrs {
		if !strings.EqualFold(rr.Header().Name, name) || rr.Header().Rrtype != rrs[0].Header().Rrtype {
			return false
		}
		got = append(got, canonicalRR(rr, true))
	}
	slices.Sort(got)
	return slices.Equal(got, rrsets[rrsetKey(name, rrs[0].Header().Rrtype)])
}

// withoutOPT drops the EDNS pseudo-record.
func withoutOPT(rrs []dns.RR) []dns.RR {
	return slices.DeleteFunc(slices.Clone(rrs), func(rr dns.RR) bool { return rr.Header().Rrtype == dns.TypeOPT })
}

// onlyOPT keeps the EDNS pseudo-record alone.
func onlyOPT(rrs []dns.RR) []dns.RR {
	return slices.DeleteFunc(slices.Clone(rrs), func(rr dns.RR) bool { return rr.Header().Rrtype != dns.TypeOPT })
}

// withoutAddresses drops the A and AAAA records (glue of an NS answer).
func withoutAddresses(rrs []dns.RR) []dns.RR {
	return slices.DeleteFunc(slices.Clone(rrs), func(rr dns.RR) bool {
		t := rr.Header().Rrtype
		return t == dns.TypeA || t == dns.TypeAAAA
	})
}

func sameRecords(a, b []dns.RR) bool {
	return slices.Equal(renderSection(a, false), renderSection(b, false))
}
