package gateway

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestLookupDelegation: NS records below the apex are zone cuts. Names at and
// below a cut get a referral (no AA, NS in authority, glue in additional); DS
// at the cut is the parent's, answered here.
func TestLookupDelegation(t *testing.T) {
	g, _ := qtGateway(t, []string{"example.com."}, nil, map[string][]string{
		"DNSEndpoint/ns/sub": {
			"sub.example.com. 60 IN NS ns1.sub.example.com.",
			"sub.example.com. 60 IN NS ns.example.net.",
			"ns1.sub.example.com. 60 IN A 192.0.2.77",
			"ns1.sub.example.com. 60 IN AAAA 2001:db8::77",
		},
		"DNSEndpoint/ns/deeper": {"deeper.sub.example.com. 60 IN NS ns.example.org."},
		"DNSEndpoint/ns/ab":     {"a.b.example.com. 60 IN NS ns.example.net."},
		"Ingress/ns/web":        {"www.example.com. 60 IN A 192.0.2.1"},
		"Ingress/ns/tosub":      {"tosub.example.com. 300 IN CNAME www.sub.example.com."},
		"Ingress/ns/wild":       {"*.example.com. 60 IN A 192.0.2.9"},
	})
	subNS := testutil.RRs("sub.example.com. 60 IN NS ns1.sub.example.com.", "sub.example.com. 60 IN NS ns.example.net.")
	subGlue := testutil.RRs("ns1.sub.example.com. 60 IN A 192.0.2.77", "ns1.sub.example.com. 60 IN AAAA 2001:db8::77")
	abNS := testutil.RRs("a.b.example.com. 60 IN NS ns.example.net.")
	for _, c := range []struct {
		tc test.Case
		aa bool
	}{
		{test.Case{Qname: "www.sub.example.com.", Qtype: dns.TypeA, Ns: subNS, Extra: subGlue}, false},
		{test.Case{Qname: "sub.example.com.", Qtype: dns.TypeNS, Ns: subNS, Extra: subGlue}, false},
		{test.Case{Qname: "sub.example.com.", Qtype: dns.TypeA, Ns: subNS, Extra: subGlue}, false},
		{test.Case{Qname: "sub.example.com.", Qtype: dns.TypeANY, Ns: subNS, Extra: subGlue}, false},
		{test.Case{Qname: "ns1.sub.example.com.", Qtype: dns.TypeA, Ns: subNS, Extra: subGlue}, false},
		// The highest cut wins; a wildcard above the cut does not answer below it.
		{test.Case{Qname: "x.deeper.sub.example.com.", Qtype: dns.TypeA, Ns: subNS, Extra: subGlue}, false},
		{test.Case{Qname: "x.sub.example.com.", Qtype: dns.TypeDS, Ns: subNS, Extra: subGlue}, false},
		{test.Case{Qname: "c.a.b.example.com.", Qtype: dns.TypeTXT, Ns: abNS}, false},
		// DS at the cut: the parent's data; there is none, so NODATA.
		{test.Case{Qname: "sub.example.com.", Qtype: dns.TypeDS, Ns: testutil.RRs(soaCom)}, true},
		{test.Case{Qname: "a.b.example.com.", Qtype: dns.TypeDS, Ns: testutil.RRs(soaCom)}, true},
		// Above the cuts: the zone as usual.
		{test.Case{Qname: "b.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)}, true},
		{test.Case{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("www.example.com. 60 IN A 192.0.2.1")}, true},
		{test.Case{Qname: "x.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("x.example.com. 60 IN A 192.0.2.9")}, true},
		{test.Case{Qname: "example.com.", Qtype: dns.TypeNS, Answer: testutil.RRs("example.com. 60 IN NS dns1.kube-system.example.com.")}, true},
		// A CNAME into a delegation: the CNAME (authoritative), then the referral.
		{test.Case{
			Qname: "tosub.example.com.", Qtype: dns.TypeA,
			Answer: testutil.RRs("tosub.example.com. 300 IN CNAME www.sub.example.com."),
			Ns:     subNS, Extra: subGlue,
		}, true},
	} {
		qtCheckAA(t, g, c.tc, c.aa)
	}
	// Without cuts, names below the former ones are answered from the zone.
	g.index.Update("DNSEndpoint/ns/sub", nil)
	g.index.Update("DNSEndpoint/ns/deeper", nil)
	qtCheckAA(t, g, test.Case{Qname: "c.a.b.example.com.", Qtype: dns.TypeTXT, Ns: abNS}, false)
	g.index.Update("DNSEndpoint/ns/ab", nil)
	qtCheck(t, g, test.Case{Qname: "www.sub.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("www.sub.example.com. 60 IN A 192.0.2.9")})
}
