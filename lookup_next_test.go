package gateway

import (
	"context"
	"fmt"
	"testing"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// lookupNext is a next plugin that records that it was called and answers REFUSED with a marker.
type lookupNext struct{ calls int }

func (n *lookupNext) Name() string { return "next" }
func (n *lookupNext) ServeDNS(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	n.calls++
	m := new(dns.Msg)
	m.SetRcode(r, dns.RcodeRefused)
	m.Extra = testutil.RRs(`next.marker. 0 IN TXT "next"`)
	w.WriteMsg(m)
	return dns.RcodeRefused, nil
}

// TestLookupNextPlugin: names outside the zones go to the next plugin; with
// fallthrough so do NXDOMAIN answers, and only those.
func TestLookupNextPlugin(t *testing.T) {
	for _, fallthrough_ := range []bool{false, true} {
		t.Run(fmt.Sprintf("fall=%v", fallthrough_), func(t *testing.T) {
			g := lookupGateway(t)
			next := &lookupNext{}
			g.Next = next
			if fallthrough_ {
				g.Fall.SetZonesFromArgs(nil)
			}
			toNext := func(name string, qtype uint16) {
				t.Helper()
				before := next.calls
				code, resp := qtServe(t, g, new(dns.Msg).SetQuestion(name, qtype))
				if next.calls != before+1 || code != dns.RcodeRefused || resp == nil || len(resp.Extra) != 1 {
					t.Errorf("%s %s: not passed to the next plugin (code %s, resp %v)", name, dns.TypeToString[qtype], dns.RcodeToString[code], resp)
				}
			}
			toNext("www.example.net.", dns.TypeA)
			toNext("example.org.", dns.TypeSOA)
			toNext("com.", dns.TypeNS)
			toNext(".", dns.TypeNS)
			toNext("badexample.com.", dns.TypeA)
			if fallthrough_ {
				toNext("missing.example.com.", dns.TypeA)
				toNext("x.b.w.example.com.", dns.TypeAAAA)
				toNext("missing.example.com.", dns.TypeMX)
			} else {
				qtCheck(t, g, test.Case{Qname: "missing.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)})
			}
			// NODATA, positive answers and NXDOMAIN after a CNAME are answered here.
			before := next.calls
			qtCheck(t, g, test.Case{Qname: "v6.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)})
			qtCheck(t, g, test.Case{Qname: "b.c.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)})
			qtCheck(t, g, test.Case{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs(wwwA1, wwwA2)})
			qtCheck(t, g, test.Case{
				Qname: "dangling.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError,
				Answer: testutil.RRs("dangling.example.com. 300 IN CNAME missing.example.com."),
				Ns:     testutil.RRs(soaCom),
			})
			if next.calls != before {
				t.Errorf("next plugin called %d times for answers of the zone", next.calls-before)
			}
		})
	}
	// Without a next plugin, an outside name is SERVFAIL (plugin.NextOrFailure).
	g := lookupGateway(t)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if code, err := g.ServeDNS(context.Background(), rec, new(dns.Msg).SetQuestion("www.example.net.", dns.TypeA)); code != dns.RcodeServerFailure || err == nil || rec.Msg != nil {
		t.Errorf("outside name without next: got %s, %v, %v", dns.RcodeToString[code], err, rec.Msg)
	}
}

// TestLookupRefusals: requests that are not plain queries of the zone's class,
// and queries before the informers have synced, get an error code returned
// for the server to write.
func TestLookupRefusals(t *testing.T) {
	g := lookupGateway(t)
	query := func(name string, qtype uint16) *dns.Msg { return new(dns.Msg).SetQuestion(name, qtype) }
	withClass := func(m *dns.Msg, class uint16) *dns.Msg { m.Question[0].Qclass = class; return m }
	withOpcode := func(m *dns.Msg, op int) *dns.Msg { m.Opcode = op; return m }
	for _, c := range []struct {
		desc string
		m    *dns.Msg
		want int
	}{
		{"AXFR", query("example.com.", dns.TypeAXFR), dns.RcodeRefused},
		{"IXFR", query("example.com.", dns.TypeIXFR), dns.RcodeRefused},
		{"AXFR in upper case", query("EXAMPLE.com.", dns.TypeAXFR), dns.RcodeRefused},
		{"class CH", withClass(query("www.example.com.", dns.TypeA), dns.ClassCHAOS), dns.RcodeRefused},
		{"class HS", withClass(query("www.example.com.", dns.TypeTXT), dns.ClassHESIOD), dns.RcodeRefused},
		{"opcode UPDATE", withOpcode(query("example.com.", dns.TypeSOA), dns.OpcodeUpdate), dns.RcodeNotImplemented},
		{"opcode STATUS", withOpcode(query("www.example.com.", dns.TypeA), dns.OpcodeStatus), dns.RcodeNotImplemented},
	} {
		code, resp := qtServe(t, g, c.m)
		if code != c.want || resp != nil {
			t.Errorf("%s: got %s and %v, want %s returned and nothing written", c.desc, dns.RcodeToString[code], resp, dns.RcodeToString[c.want])
		}
	}

	// Below the apex there is no zone to transfer: NOTAUTH, written by the
	// plugin (RFC 5936 §2.2.1).
	for _, m := range []*dns.Msg{query("www.example.com.", dns.TypeAXFR), query("a.b.example.com.", dns.TypeIXFR)} {
		if code, resp := qtServe(t, g, m); code != dns.RcodeNotAuth || resp == nil || resp.Rcode != dns.RcodeNotAuth || resp.Authoritative {
			t.Errorf("%s: got %s and %v, want NOTAUTH written", m.Question[0].String(), dns.RcodeToString[code], resp)
		}
	}

	// Class ANY is answered like IN.
	m := withClass(query("www.example.com.", dns.TypeA), dns.ClassANY)
	if code, resp := qtServe(t, g, m); code != dns.RcodeSuccess || resp == nil || len(resp.Answer) != 2 {
		t.Errorf("class ANY: got %s, %v", dns.RcodeToString[code], resp)
	}

	// Not ready: SERVFAIL returned, nothing written, for every kind of answer.
	g.ready.Store(false)
	for _, q := range []struct {
		name  string
		qtype uint16
	}{{"www.example.com.", dns.TypeA}, {"missing.example.com.", dns.TypeA}, {"example.com.", dns.TypeSOA}, {"example.com.", dns.TypeNS}} {
		code, resp := qtServe(t, g, query(q.name, q.qtype))
		if code != dns.RcodeServerFailure || resp != nil {
			t.Errorf("not ready, %s: got %s and %v, want SERVFAIL returned and nothing written", q.name, dns.RcodeToString[code], resp)
		}
	}
	g.ready.Store(true)
	qtCheck(t, g, test.Case{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs(wwwA1, wwwA2)})
}
