//go:build e2e

package e2e

import (
	"slices"

	"github.com/miekg/dns"
)

// The allowances about how a request is asked rather than what it asks:
// EDNS options, versions and sizes, classes, and transfers outside TCP.
// They run before the answer allowances (differential_rules_test.go). Each
// has a kind: diffRFC when the RFCs allow both answers, diffUpstream when
// ours is CoreDNS's or miekg/dns's (decided before the plugin runs, out of
// its reach), diffReference when Knot's answer is its own quirk.

// The kinds of allowance.
const (
	diffRFC       = "rfc"
	diffUpstream  = "upstream"
	diffReference = "knot"
)

var requestAllowances = []allowance{
	{
		// RFC 6891 §6.2.5: a payload below 512 is read as 512. Knot
		// answers a payload of exactly 1 with FORMERR (without OPT); its
		// answer to 512 is the one compared.
		name: "knot-payload-1", kind: diffReference,
		apply: func(c *diffCase) bool {
			if !c.q.flags.edns || c.q.flags.size != 1 || c.knot.Rcode != dns.RcodeFormatError || c.knot.IsEdns0() != nil {
				return false
			}
			return c.askKnot(knotQuery(c.q))
		},
	},
	{
		// RFC 6895 §3.1 reserves TYPE 0 and names no answer to it. Knot
		// says NOTIMP; the plugin answers it as a type without data, as
		// BIND does: compared with Knot's answer to an unassigned type.
		name: "qtype-0", kind: diffRFC,
		apply: func(c *diffCase) bool {
			if c.q.qtype != 0 || !emptyReply(c.knot, dns.RcodeNotImplemented) {
				return false
			}
			q := knotQuery(c.q)
			q.qtype = 65534
			return c.askKnot(q)
		},
	},
	{
		// RFC 1035 §4.2.1 holds UDP messages to 512 octets; EDNS raises
		// the limit for the replies the requestor can take. CoreDNS's
		// server reads a UDP query into 512 octets and answers a longer one
		// FORMERR (without OPT, with the query's AD) before any plugin
		// runs; Knot and BIND read the whole datagram.
		name: "udp-query-over-512", kind: diffUpstream,
		apply: func(c *diffCase) bool {
			b, err := c.q.msg().Pack()
			if c.q.flags.tcp || err != nil || len(b) <= 512 || !emptyReply(c.plugin, dns.RcodeFormatError) || c.plugin.IsEdns0() != nil {
				return false
			}
			forgiveAs(c.knot, c.plugin)
			c.knot.Extra = nil
			c.plugin.AuthenticatedData, c.plugin.Zero = c.knot.AuthenticatedData, c.knot.Zero
			return true
		},
	},
	{
		// RFC 5936 §2.2.1: a transfer without error has AA set; the
		// plugin (CoreDNS's transfer plugin) and BIND set it, Knot does
		// not (for IXFR either).
		name: "knot-transfer-aa", kind: diffReference,
		apply: func(c *diffCase) bool {
			if c.q.qtype != dns.TypeAXFR && c.q.qtype != dns.TypeIXFR || c.plugin.Rcode != dns.RcodeSuccess || c.knot.Rcode != dns.RcodeSuccess ||
				!c.plugin.Authoritative || c.knot.Authoritative {
				return false
			}
			c.knot.Authoritative = true
			return true
		},
	},
	{
		// RFC 5001 §2.1: a server may give its NSID when asked; Knot does
		// (its host name), the plugin's server has no nsid plugin.
		name: "nsid", kind: diffRFC,
		apply: func(c *diffCase) bool {
			if !slices.ContainsFunc(c.q.flags.opts, func(o dns.EDNS0) bool { return o.Option() == dns.EDNS0NSID }) {
				return false
			}
			if !dropOption(c.knot, dns.EDNS0NSID) || hasOption(c.plugin, dns.EDNS0NSID) {
				return false
			}
			sameRoom(c.knot, c.plugin)
			return true
		},
	},
	{
		// RFC 7871 §7.2.1: a server that implements ECS echoes FAMILY,
		// SOURCE PREFIX-LENGTH and ADDRESS, with a SCOPE (0: the answer is
		// the same for every client), as BIND does; Knot, without its
		// geoip module, ignores the option (RFC 6891 §6.1.2).
		name: "ecs-echo", kind: diffRFC,
		apply: func(c *diffCase) bool {
			data, ok := firstECS(c.q)
			if !ok || ecsOf(data) != ecsGood || !dropEcho(c.plugin, data) || hasOption(c.knot, dns.EDNS0SUBNET) {
				return false
			}
			sameRoom(c.plugin, c.knot)
			return true
		},
	},
	{
		// RFC 7871 §6: SCOPE PREFIX-LENGTH is 0 in queries, and no
		// ADDRESS bit beyond SOURCE PREFIX-LENGTH is set: else FORMERR, as
		// BIND answers. Knot ignores the option. (Names outside the zones
		// are REFUSED before any check.)
		name: "ecs-formerr", kind: diffRFC,
		apply: func(c *diffCase) bool {
			data, ok := firstECS(c.q)
			if !ok || ecsOf(data) != ecsBad || !emptyReply(c.plugin, dns.RcodeFormatError) || c.plugin.IsEdns0() == nil {
				return false
			}
			forgiveAs(c.knot, c.plugin)
			return true
		},
	},
	{
		// An ECS option that miekg/dns cannot decode (an unknown family, a
		// prefix longer than the family's) fails the whole message, which
		// CoreDNS's server answers FORMERR without OPT, and with the
		// query's AD and Z bits, before any plugin runs. FORMERR is right
		// (RFC 7871 §6), the rest is not (RFC 6891 §7: the OPT; RFC 6840
		// §5.7: AD): BIND's FORMERR has the OPT and neither bit. Knot
		// ignores the option (or says FORMERR too, with OPT).
		name: "ecs-undecodable", kind: diffUpstream,
		apply: func(c *diffCase) bool {
			if !slices.ContainsFunc(c.q.flags.opts, func(o dns.EDNS0) bool {
				return o.Option() == dns.EDNS0SUBNET && ecsOf(o.(*dns.EDNS0_LOCAL).Data) == ecsUndecodable
			}) || !emptyReply(c.plugin, dns.RcodeFormatError) || c.plugin.IsEdns0() != nil {
				return false
			}
			forgiveAs(c.knot, c.plugin)
			c.knot.Extra = nil
			c.plugin.AuthenticatedData, c.plugin.Zero = c.knot.AuthenticatedData, c.knot.Zero
			return true
		},
	},
	{
		// RFC 7871 §6: an ADDRESS of too few or too many octets for its
		// prefix should be FORMERR, as BIND answers; miekg/dns decodes it
		// into an address of the family's length, so the plugin never sees
		// the count: it answers, echoing the option with the octets the
		// prefix needs. Knot ignores the option.
		name: "ecs-octets", kind: diffUpstream,
		apply: func(c *diffCase) bool {
			data, ok := firstECS(c.q)
			if !ok || ecsOf(data) != ecsOctets || !dropEcho(c.plugin, nil) || hasOption(c.knot, dns.EDNS0SUBNET) {
				return false
			}
			sameRoom(c.plugin, c.knot)
			return true
		},
	},
	{
		// RFC 3225 §3: the DO bit of the query is copied into the reply.
		// CoreDNS's server answers an EDNS version it does not know with
		// BADVERS before any plugin runs, and without DO; Knot copies it.
		name: "badvers-do", kind: diffUpstream,
		apply: func(c *diffCase) bool {
			po, ko := c.plugin.IsEdns0(), c.knot.IsEdns0()
			if c.q.flags.version == 0 || !c.q.flags.do || c.plugin.Rcode != dns.RcodeBadVers || po == nil || ko == nil || po.Do() || !ko.Do() {
				return false
			}
			po.SetDo()
			return true
		},
	},
	{
		// RFC 6891 §6.1.3: an unknown EDNS version is BADVERS. CoreDNS's
		// server refuses a class other than IN first; Knot checks the
		// version first.
		name: "class-before-version", kind: diffUpstream,
		apply: func(c *diffCase) bool {
			if c.q.flags.version == 0 || c.q.qclass == dns.ClassINET || !emptyReply(c.plugin, dns.RcodeRefused) || !emptyReply(c.knot, dns.RcodeBadVers) {
				return false
			}
			c.knot.Rcode = dns.RcodeRefused
			return true
		},
	},
	{
		// RFC 1035 §3.2.5: QCLASS * asks for any class. CoreDNS's server
		// refuses every class but IN before any plugin runs (README);
		// Knot answers from its IN zone (a referral REFUSED with TC), BIND
		// says FORMERR. No RFC requires an answer.
		name: "class-any", kind: diffRFC,
		apply: func(c *diffCase) bool {
			if c.q.qclass != dns.ClassANY || !emptyReply(c.plugin, dns.RcodeRefused) || emptyReply(c.knot, dns.RcodeRefused) && !c.knot.Truncated {
				return false
			}
			forgiveAs(c.knot, c.plugin)
			return true
		},
	},
	{
		// A class the zone is not in (CH, HS, NONE, unassigned): CoreDNS's
		// server refuses it before any plugin runs (README), as Knot and
		// BIND do for names they serve no data for in it; they answer
		// their own CHAOS names (version.bind) and say NOTIMP or NOTAUTH to
		// a transfer in it. No RFC prescribes one answer.
		name: "class-not-in", kind: diffRFC,
		apply: func(c *diffCase) bool {
			if c.q.qclass == dns.ClassINET || c.q.qclass == dns.ClassANY || !emptyReply(c.plugin, dns.RcodeRefused) || emptyReply(c.knot, dns.RcodeRefused) {
				return false
			}
			forgiveAs(c.knot, c.plugin)
			return true
		},
	},
	{
		// RFC 5936 §2.2.1: a transfer of a zone the server does not serve
		// should be NOTAUTH, as BIND and Knot answer; CoreDNS's server
		// refuses every name outside its zones before any plugin runs.
		name: "transfer-outside", kind: diffUpstream,
		apply: func(c *diffCase) bool {
			if c.q.qtype != dns.TypeAXFR && c.q.qtype != dns.TypeIXFR || !c.q.flags.tcp || c.zone != "" ||
				!emptyReply(c.plugin, dns.RcodeRefused) || !emptyReply(c.knot, dns.RcodeNotAuth) {
				return false
			}
			forgiveAs(c.knot, c.plugin)
			return true
		},
	},
	{
		// RFC 5936 §4.2: AXFR over UDP is not defined. CoreDNS's transfer
		// plugin refuses it; Knot says NOTIMP.
		name: "axfr-udp", kind: diffRFC,
		apply: func(c *diffCase) bool {
			if c.q.qtype != dns.TypeAXFR || c.q.flags.tcp || !emptyReply(c.plugin, dns.RcodeRefused) || c.knot.Rcode == dns.RcodeRefused {
				return false
			}
			forgiveAs(c.knot, c.plugin)
			return true
		},
	},
	{
		// RFC 1995 §3: an IXFR query carries the client's SOA; without it
		// BIND and Knot say FORMERR (NOTAUTH below an apex). CoreDNS's
		// transfer plugin answers SERVFAIL before the plugin can see it.
		name: "ixfr-without-soa", kind: diffUpstream,
		apply: func(c *diffCase) bool {
			if c.q.qtype != dns.TypeIXFR || c.q.ixfrSOA || !c.q.flags.tcp || !emptyReply(c.plugin, dns.RcodeServerFailure) ||
				c.knot.Rcode != dns.RcodeFormatError && c.knot.Rcode != dns.RcodeNotAuth {
				return false
			}
			forgiveAs(c.knot, c.plugin)
			return true
		},
	},
	{
		// RFC 1995 §2: an IXFR over UDP gets the answer when it fits, else
		// the single SOA (Knot, BIND; FORMERR without the client's SOA).
		// CoreDNS's transfer plugin refuses every transfer but over TCP,
		// before the plugin can answer.
		name: "ixfr-udp", kind: diffUpstream,
		apply: func(c *diffCase) bool {
			if c.q.qtype != dns.TypeIXFR || c.q.flags.tcp || !emptyReply(c.plugin, dns.RcodeRefused) || c.knot.Rcode == dns.RcodeRefused {
				return false
			}
			forgiveAs(c.knot, c.plugin)
			return true
		},
	},
}

// knotQuery is q as Knot is asked it again: a payload of 1 as 512 (see
// knot-payload-1).
func knotQuery(q diffQuery) diffQuery {
	if q.flags.edns && q.flags.size == 1 {
		q.flags.size = 512
	}
	return q
}

// emptyReply reports whether m has rcode and no records.
func emptyReply(m *dns.Msg, rcode int) bool {
	return m.Rcode == rcode && len(m.Answer)+len(m.Ns)+len(withoutOPT(m.Extra)) == 0
}

// sameRoom gives small the additional records of big when an option only
// one of them carries (an ECS echo, an NSID) took the room of some: neither
// truncated, the same answer and authority, and small's additional records
// a part of big's (RFC 2181 §9: they are extra information).
func sameRoom(small, big *dns.Msg) {
	if small.Truncated || big.Truncated || !sameRecords(small.Answer, big.Answer) || !sameRecords(small.Ns, big.Ns) {
		return
	}
	have := renderSection(big.Extra, false)
	for _, rr := range withoutOPT(small.Extra) {
		if !slices.Contains(have, canonicalRR(rr, false)) {
			return
		}
	}
	small.Extra = append(withoutOPT(big.Extra), onlyOPT(small.Extra)...)
}

// forgiveAs makes m the reply want is, as far as rcode, AA, TC and records
// go (the EDNS of each stays its own).
func forgiveAs(m, want *dns.Msg) {
	m.Rcode, m.Authoritative, m.Truncated, m.Answer, m.Ns = want.Rcode, want.Authoritative, want.Truncated, nil, nil
	m.Extra = onlyOPT(m.Extra)
}

func hasOption(m *dns.Msg, code uint16) bool {
	o := m.IsEdns0()
	return o != nil && slices.ContainsFunc(o.Option, func(e dns.EDNS0) bool { return e.Option() == code })
}

// dropOption removes the options of code from m's OPT; it reports whether
// there were any.
func dropOption(m *dns.Msg, code uint16) bool {
	o := m.IsEdns0()
	if o == nil {
		return false
	}
	n := len(o.Option)
	o.Option = slices.DeleteFunc(o.Option, func(e dns.EDNS0) bool { return e.Option() == code })
	return len(o.Option) != n
}
