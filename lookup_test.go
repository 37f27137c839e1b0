package gateway

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// lookupObjects is the example.com. zone of the lookup tests, as Kubernetes
// objects would publish it.
var lookupObjects = map[string][]string{
	"Ingress/default/web": {
		"www.example.com. 60 IN A 192.0.2.1",
		"www.example.com. 60 IN A 192.0.2.2",
		"www.example.com. 60 IN AAAA 2001:db8::1",
	},
	"Service/default/v4":   {"v4.example.com. 60 IN A 192.0.2.10"},
	"Service/default/v6":   {"v6.example.com. 60 IN AAAA 2001:db8::10"},
	"Service/default/apex": {"example.com. 60 IN A 192.0.2.100"},
	// The nameservers: the apex (both families) and the secondary.
	"Service/kube-system/dns1": {
		"dns1.kube-system.example.com. 60 IN A 192.0.2.53",
		"dns1.kube-system.example.com. 60 IN AAAA 2001:db8::53",
	},
	"Service/kube-system/dns2": {"dns2.kube-system.example.com. 60 IN A 192.0.2.54"},
	// CNAMEs.
	"Ingress/default/alias": {"alias.example.com. 300 IN CNAME www.example.com."},
	"Ingress/default/chain": {
		"c1.example.com. 300 IN CNAME c2.example.com.",
		"c2.example.com. 300 IN CNAME v4.example.com.",
	},
	"Ingress/default/ext":      {"ext.example.com. 300 IN CNAME www.example.net."},
	"Ingress/default/dangling": {"dangling.example.com. 300 IN CNAME missing.example.com."},
	"Ingress/default/loop": {
		"loop1.example.com. 300 IN CNAME loop2.example.com.",
		"loop2.example.com. 300 IN CNAME loop1.example.com.",
	},
	"Ingress/default/self":   {"self.example.com. 300 IN CNAME self.example.com."},
	"Ingress/default/toent":  {"toent.example.com. 300 IN CNAME b.c.example.com."},
	"Ingress/default/towild": {"towild.example.com. 300 IN CNAME x.w.example.com."},
	"Ingress/default/upper":  {"upper.example.com. 300 IN CNAME WWW.Example.COM."},
	// An empty non-terminal chain: c.example.com. and b.c.example.com.
	"Ingress/default/deep": {"a.b.c.example.com. 60 IN A 192.0.2.20"},
	// Wildcards: *.w with an existing name a.b.w below it (so b.w is an ENT).
	"Ingress/default/wild": {
		"*.w.example.com. 60 IN A 192.0.2.50",
		"a.b.w.example.com. 60 IN A 192.0.2.51",
	},
	"Ingress/default/wildcname":     {"*.wc.example.com. 300 IN CNAME www.example.com."},
	"Ingress/default/wildext":       {"*.we.example.com. 300 IN CNAME www.example.net."},
	"Ingress/default/wilddangling":  {"*.wd.example.com. 300 IN CNAME missing.example.com."},
	"Ingress/default/wildunderapex": {"host.wa.example.com. 60 IN A 192.0.2.60"},
	// An empty non-terminal wildcard: "*.e" exists only because of "a.*.e".
	"Ingress/default/entwild": {"a.*.e.example.com. 60 IN A 192.0.2.70"},
	// Other types.
	"Ingress/default/txt":  {`txt.example.com. 60 IN TXT "hello"`},
	"Service/default/mail": {"mail.example.com. 60 IN MX 10 v4.example.com.", "mail.example.com. 60 IN MX 20 mx.example.net."},
	"Service/default/srv":  {"_http._tcp.svc.example.com. 60 IN SRV 0 100 80 www.example.com."},
}

func init() {
	// chain8: eight CNAMEs in a row, then an address: answered.
	// chain9: nine CNAMEs in a row: longer than maxChain, answered as far
	// as maxChain goes.
	for _, n := range []int{8, 9} {
		var rrs []string
		for i := 1; i <= n; i++ {
			rrs = append(rrs, fmt.Sprintf("l%d.chain%d.example.com. 300 IN CNAME l%d.chain%d.example.com.", i, n, i+1, n))
		}
		rrs = append(rrs, fmt.Sprintf("l%d.chain%d.example.com. 60 IN A 192.0.2.%d", n+1, n, n))
		lookupObjects[fmt.Sprintf("Ingress/default/chain%d", n)] = rrs
	}
}

func lookupGateway(t testing.TB) *Gateway {
	g, _ := qtGateway(t, []string{"example.com."}, func(g *Gateway) { g.secondary = "dns2.kube-system" }, lookupObjects)
	return g
}

var (
	soaCom = qtSOA("example.com.")

	wwwA1   = "www.example.com. 60 IN A 192.0.2.1"
	wwwA2   = "www.example.com. 60 IN A 192.0.2.2"
	wwwAAAA = "www.example.com. 60 IN AAAA 2001:db8::1"
)

// The lookup tests run tables of cases on the zone above (lookupGateway),
// one file per behaviour as CoreDNS's plugin/file does: RFC 1034 §4.3.2,
// RFC 2308, RFC 4592 and RFC 8482. Every case names its rcode and all three
// sections in full.
//
// lookupCases are positive answers: AA, minimal responses (no NS in
// authority).
var lookupCases = []test.Case{
	{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs(wwwA1, wwwA2)},
	{Qname: "www.example.com.", Qtype: dns.TypeAAAA, Answer: testutil.RRs(wwwAAAA)},
	{Qname: "v6.example.com.", Qtype: dns.TypeAAAA, Answer: testutil.RRs("v6.example.com. 60 IN AAAA 2001:db8::10")},
	{Qname: "a.b.c.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("a.b.c.example.com. 60 IN A 192.0.2.20")},
	{Qname: "txt.example.com.", Qtype: dns.TypeTXT, Answer: testutil.RRs(`txt.example.com. 60 IN TXT "hello"`)},
	// MX and SRV: in-zone targets' addresses in additional, out-of-zone none.
	{
		Qname: "mail.example.com.", Qtype: dns.TypeMX,
		Answer: testutil.RRs("mail.example.com. 60 IN MX 10 v4.example.com.", "mail.example.com. 60 IN MX 20 mx.example.net."),
		Extra:  testutil.RRs("v4.example.com. 60 IN A 192.0.2.10"),
	},
	{
		Qname: "_http._tcp.svc.example.com.", Qtype: dns.TypeSRV,
		Answer: testutil.RRs("_http._tcp.svc.example.com. 60 IN SRV 0 100 80 www.example.com."),
		Extra:  testutil.RRs(wwwA1, wwwA2, wwwAAAA),
	},
}

func TestLookup(t *testing.T) {
	g := lookupGateway(t)
	for _, tc := range lookupCases {
		qtCheck(t, g, tc)
	}
}

// TestLookupSerialFollowsData: the SOA served changes its serial when data
// changes, and the served data changes with it.
func TestLookupSerialFollowsData(t *testing.T) {
	g, clk := qtGateway(t, []string{"example.com."}, nil, map[string][]string{
		"Service/default/www": {"www.example.com. 60 IN A 192.0.2.1"},
	})
	serialOf := func() uint32 {
		_, resp := qtServe(t, g, new(dns.Msg).SetQuestion("example.com.", dns.TypeSOA))
		return resp.Answer[0].(*dns.SOA).Serial
	}
	s1 := serialOf()
	if want := g.index.Snapshot().Serial(0); s1 != want {
		t.Fatalf("served serial %d, index serial %d", s1, want)
	}
	if want := uint32(clk.Now().Unix()); s1 != want {
		t.Fatalf("serial %d, want the clock %d", s1, want)
	}

	clk.Add(5 * time.Second)
	g.index.Update("Service/default/www", testutil.RRs("www.example.com. 60 IN A 192.0.2.2"))
	s2 := serialOf()
	if s2 != s1+5 {
		t.Errorf("serial after a change %d, want %d", s2, s1+5)
	}
	qtCheck(t, g, test.Case{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("www.example.com. 60 IN A 192.0.2.2")})

	// An update that changes nothing keeps the serial.
	clk.Add(5 * time.Second)
	g.index.Update("Service/default/www", testutil.RRs("www.example.com. 60 IN A 192.0.2.2"))
	g.index.Update("Service/default/other", nil)
	if s3 := serialOf(); s3 != s2 {
		t.Errorf("serial after a no-op update %d, want %d", s3, s2)
	}

	// Removing the object: NXDOMAIN, new serial.
	clk.Add(time.Second)
	g.index.Update("Service/default/www", nil)
	if s4 := serialOf(); s4 != s2+6 {
		t.Errorf("serial after a removal %d, want %d", s4, s2+6)
	}
	qtCheck(t, g, test.Case{Qname: "www.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)})
}

// TestLookupRecorderCompat keeps the recorder-based style of CoreDNS's own
// plugin tests working against this plugin (tc.Msg, SortAndCheck).
func TestLookupRecorderCompat(t *testing.T) {
	g := lookupGateway(t)
	tc := test.Case{Qname: "alias.example.com.", Qtype: dns.TypeA,
		Answer: []dns.RR{
			test.CNAME("alias.example.com. 300 IN CNAME www.example.com."),
			test.A(wwwA1), test.A(wwwA2),
		}}
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if _, err := g.ServeDNS(context.Background(), rec, tc.Msg()); err != nil {
		t.Fatal(err)
	}
	if err := test.SortAndCheck(rec.Msg, tc); err != nil {
		t.Error(err)
	}
	if err := test.CNAMEOrder(rec.Msg); err != nil {
		t.Error(err)
	}
}

// TestIndexMergeServes: the merge rules as a client sees them.
func TestIndexMergeServes(t *testing.T) {
	g, clk := qtGateway(t, []string{"example.com."}, nil, map[string][]string{
		"Ingress/ns/a": {"www.example.com. 300 IN A 192.0.2.2", "lb.example.com. 60 IN CNAME www.example.net."},
		"Ingress/ns/b": {"www.example.com. 60 IN A 192.0.2.1", "lb.example.com. 60 IN AAAA 2001:db8::1"},
	})
	m := new(dns.Msg).SetQuestion("www.example.com.", dns.TypeA)
	_, resp := qtServe(t, g, m)
	if got := qtStrings(resp.Answer); !slices.Equal(got, []string{
		"www.example.com.\t60\tIN\tA\t192.0.2.1", "www.example.com.\t60\tIN\tA\t192.0.2.2",
	}) {
		t.Errorf("www: %q", got)
	}
	// The answer is in the index's order, not sorted by the test.
	if resp.Answer[0].(*dns.A).A.String() != "192.0.2.1" {
		t.Errorf("answer order: %v", resp.Answer)
	}
	_, resp = qtServe(t, g, new(dns.Msg).SetQuestion("lb.example.com.", dns.TypeA))
	if len(resp.Answer) != 0 || len(resp.Ns) != 1 || resp.Rcode != dns.RcodeSuccess {
		t.Errorf("lb A (CNAME dropped for the AAAA): %v", resp)
	}
	clk.Add(time.Second)
	g.index.Update("Ingress/ns/b", nil)
	_, resp = qtServe(t, g, new(dns.Msg).SetQuestion("lb.example.com.", dns.TypeA))
	if len(resp.Answer) != 1 || resp.Answer[0].Header().Rrtype != dns.TypeCNAME {
		t.Errorf("lb A after the AAAA left: %v", resp)
	}
}
