package gateway

import (
	"sort"

	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"
)

// fitAdditional leaves out, last first, the additional records of an answer
// that does not fit the client's UDP buffer. CoreDNS's scrub, which makes
// every reply fit, sets TC for any record it leaves out; but the addresses
// of MX, SRV and NS targets are extra information, and RFC 2181 §9 wants TC
// only when a required RRset does not fit. The glue of a referral is
// required (RFC 9471): callers leave referrals to the scrub.
func fitAdditional(state *request.Request, m *dns.Msg) {
	if len(m.Extra) == 0 || state.Proto() != "udp" {
		return
	}
	budget := state.Size()
	if opt := state.Req.IsEdns0(); opt != nil {
		budget -= dns.Len(opt) // the scrub adds an OPT record, at most as long as the query's
	}
	// Measured uncompressed first, which costs no allocation; the scrub
	// compresses a reply that does not fit so.
	m.Compress = false
	if m.Len() <= budget {
		return
	}
	m.Compress = true
	// The length only grows with the records kept: the most that fit are
	// found by bisection, in O(log n) measurements of the reply rather than
	// one per record left out (quadratic in a large RRset's targets).
	extra := m.Extra
	n := sort.Search(len(extra), func(k int) bool {
		m.Extra = extra[:k+1]
		return m.Len() > budget
	})
	m.Extra = extra[:n]
}
