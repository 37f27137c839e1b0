package gateway

import (
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"
)

// withOPTs returns a query for name/A carrying n OPT records.
func withOPTs(name string, n int) *dns.Msg {
	m := new(dns.Msg).SetQuestion(name, dns.TypeA)
	for range n {
		o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		o.SetUDPSize(1232)
		m.Extra = append(m.Extra, o)
	}
	return m
}

// TestLookupTwoOPT: a query with more than one OPT record gets FORMERR (RFC
// 6891 §6.1.1) with the question echoed and no OPT, as Knot and BIND answer;
// one OPT or none is answered as usual.
func TestLookupTwoOPT(t *testing.T) {
	g := lookupGateway(t)
	for _, n := range []int{2, 3} {
		m := withOPTs("www.example.com.", n)
		m.RecursionDesired = true
		code, resp := qtServe(t, g, m)
		if resp == nil {
			t.Fatalf("%d OPT records: nothing written (returned %s)", n, dns.RcodeToString[code])
		}
		if !plugin.ClientWrite(code) {
			t.Errorf("%d OPT records: returned %s after writing: CoreDNS would write a second reply", n, dns.RcodeToString[code])
		}
		if resp.Rcode != dns.RcodeFormatError || resp.Authoritative || !resp.Response || !resp.RecursionDesired ||
			len(resp.Answer)+len(resp.Ns)+len(resp.Extra) != 0 || resp.Id != m.Id {
			t.Errorf("%d OPT records: want FORMERR, no AA, RD echoed, empty sections, got\n%v", n, resp)
		}
		if len(resp.Question) != 1 || resp.Question[0] != m.Question[0] {
			t.Errorf("%d OPT records: question %v, want %v", n, resp.Question, m.Question)
		}
	}
	for _, n := range []int{0, 1} {
		code, resp := qtServe(t, g, withOPTs("www.example.com.", n))
		if code != dns.RcodeSuccess || resp == nil || resp.Rcode != dns.RcodeSuccess || len(resp.Answer) != 2 {
			t.Errorf("%d OPT records: got %s, %v; want the two A records", n, dns.RcodeToString[code], resp)
		}
	}
	// A name outside the zones is the next plugin's, OPT records and all.
	next := &lookupNext{}
	g.Next = next
	if _, _ = qtServe(t, g, withOPTs("www.example.net.", 2)); next.calls != 1 {
		t.Errorf("outside the zones: not passed to the next plugin")
	}
}
