package gateway

import (
	"sort"

	"github.com/coredns/coredns/plugin/pkg/edns"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"
)

// fitAdditional leaves out, last first, the additional records of an answer
// that does not fit the client's UDP buffer. CoreDNS's scrub, which makes
// every reply fit, sets TC for any record it leaves out; but the addresses
// of MX, SRV and NS targets are extra information, and RFC 2181 §9 wants TC
// only when a required RRset does not fit. The glue of a referral is
// required (RFC 9471): callers leave referrals to the scrub. A reply with
// its OPT record (an ECS echo) is measured with it; to one without, the
// scrub adds the query's with only the options CoreDNS supports.
func fitAdditional(state *request.Request, m *dns.Msg) {
	if len(m.Extra) == 0 || state.Proto() != "udp" {
		return
	}
	budget := state.Size()
	opt := state.Req.IsEdns0()
	if opt != nil && m.IsEdns0() == nil {
		budget -= dns.Len(opt) // at most as long as the query's
	}
	// Measured uncompressed first, which costs no allocation; the scrub
	// compresses a reply that does not fit so.
	m.Compress = false
	if m.Len() <= budget {
		return
	}
	if opt != nil && m.IsEdns0() == nil {
		budget = state.Size() - replyOPTLen(opt)
	}
	m.Compress = true
	// The length only grows with the records kept: the most that fit are
	// found by bisection, in O(log n) measurements of the reply rather than
	// one per record left out (quadratic in a large RRset's targets). The
	// echo's OPT record, last, stays.
	extra, keep := m.Extra, func(rrs []dns.RR) []dns.RR { return rrs }
	if last := len(extra) - 1; extra[last].Header().Rrtype == dns.TypeOPT {
		opt := extra[last]
		extra, keep = extra[:last], func(rrs []dns.RR) []dns.RR { return append(rrs, opt) }
	}
	n := sort.Search(len(extra), func(k int) bool {
		m.Extra = keep(extra[: k+1 : k+1]) // a copy: the OPT must not overwrite an address
		return m.Len() > budget
	})
	m.Extra = keep(extra[:n:n])
}

// replyOPTLen is the length of the OPT record the scrub gives a reply
// without one: the query's, with only the options CoreDNS supports (a
// client's cookie or padding is not echoed, and takes no room).
func replyOPTLen(opt *dns.OPT) int {
	n := dns.Len(&dns.OPT{Hdr: opt.Hdr})
	for _, o := range opt.Option {
		if edns.SupportedOption(o.Option()) {
			n += dns.Len(&dns.OPT{Hdr: opt.Hdr, Option: []dns.EDNS0{o}}) - dns.Len(&dns.OPT{Hdr: opt.Hdr})
		}
	}
	return n
}
