package gateway

import (
	"fmt"
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// cnameCases: CNAMEs followed inside the zone (RFC 1034 §4.3.2 step 3a).
var cnameCases = []test.Case{
	// CNAME: every qtype but CNAME, ANY, RRSIG and NSEC follows it inside the zone.
	{
		Qname: "alias.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs("alias.example.com. 300 IN CNAME www.example.com.", wwwA1, wwwA2),
	},
	{
		Qname: "alias.example.com.", Qtype: dns.TypeAAAA,
		Answer: testutil.RRs("alias.example.com. 300 IN CNAME www.example.com.", wwwAAAA),
	},
	{
		// The target exists without the type: NODATA after the CNAME.
		Qname: "alias.example.com.", Qtype: dns.TypeMX,
		Answer: testutil.RRs("alias.example.com. 300 IN CNAME www.example.com."),
		Ns:     testutil.RRs(soaCom),
	},
	{
		Qname: "alias.example.com.", Qtype: dns.TypeTXT,
		Answer: testutil.RRs("alias.example.com. 300 IN CNAME www.example.com."),
		Ns:     testutil.RRs(soaCom),
	},
	{Qname: "alias.example.com.", Qtype: dns.TypeCNAME, Answer: testutil.RRs("alias.example.com. 300 IN CNAME www.example.com.")},
	{Qname: "alias.example.com.", Qtype: dns.TypeANY, Answer: testutil.RRs("alias.example.com. 300 IN CNAME www.example.com.")},
	// RRSIG and NSEC would sit beside the CNAME (RFC 2181 §10.1, RFC 4035
	// §2.5): asked of its owner, which has none, NODATA.
	{Qname: "alias.example.com.", Qtype: dns.TypeRRSIG, Ns: testutil.RRs(soaCom)},
	{Qname: "alias.example.com.", Qtype: dns.TypeNSEC, Ns: testutil.RRs(soaCom)},
	{Qname: "c1.example.com.", Qtype: dns.TypeNSEC, Ns: testutil.RRs(soaCom)},
	{
		Qname: "c1.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs(
			"c1.example.com. 300 IN CNAME c2.example.com.",
			"c2.example.com. 300 IN CNAME v4.example.com.",
			"v4.example.com. 60 IN A 192.0.2.10",
		),
	},
	{
		Qname: "c1.example.com.", Qtype: dns.TypeAAAA,
		Answer: testutil.RRs(
			"c1.example.com. 300 IN CNAME c2.example.com.",
			"c2.example.com. 300 IN CNAME v4.example.com.",
		),
		Ns: testutil.RRs(soaCom),
	},
	{Qname: "c2.example.com.", Qtype: dns.TypeCNAME, Answer: testutil.RRs("c2.example.com. 300 IN CNAME v4.example.com.")},
	// Target outside the zone: the CNAME alone, NOERROR.
	{Qname: "ext.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("ext.example.com. 300 IN CNAME www.example.net.")},
	{Qname: "ext.example.com.", Qtype: dns.TypeMX, Answer: testutil.RRs("ext.example.com. 300 IN CNAME www.example.net.")},
	// In-zone target that does not exist: NXDOMAIN, CNAME in answer, SOA in authority.
	{
		Qname: "dangling.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError,
		Answer: testutil.RRs("dangling.example.com. 300 IN CNAME missing.example.com."),
		Ns:     testutil.RRs(soaCom),
	},
	{Qname: "dangling.example.com.", Qtype: dns.TypeCNAME, Answer: testutil.RRs("dangling.example.com. 300 IN CNAME missing.example.com.")},
	// Target an empty non-terminal: NODATA after the CNAME.
	{
		Qname: "toent.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs("toent.example.com. 300 IN CNAME b.c.example.com."),
		Ns:     testutil.RRs(soaCom),
	},
	// Target answered by a wildcard.
	{
		Qname: "towild.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs("towild.example.com. 300 IN CNAME x.w.example.com.", "x.w.example.com. 60 IN A 192.0.2.50"),
	},
	// A target in upper case is followed case-insensitively.
	{
		Qname: "upper.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs("upper.example.com. 300 IN CNAME WWW.Example.COM.", wwwA1, wwwA2),
	},
	// Chains: eight CNAMEs are followed, nine are not (see TestLookupServFail).
	{
		Qname: "l1.chain8.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs(
			"l1.chain8.example.com. 300 IN CNAME l2.chain8.example.com.",
			"l2.chain8.example.com. 300 IN CNAME l3.chain8.example.com.",
			"l3.chain8.example.com. 300 IN CNAME l4.chain8.example.com.",
			"l4.chain8.example.com. 300 IN CNAME l5.chain8.example.com.",
			"l5.chain8.example.com. 300 IN CNAME l6.chain8.example.com.",
			"l6.chain8.example.com. 300 IN CNAME l7.chain8.example.com.",
			"l7.chain8.example.com. 300 IN CNAME l8.chain8.example.com.",
			"l8.chain8.example.com. 300 IN CNAME l9.chain8.example.com.",
			"l9.chain8.example.com. 60 IN A 192.0.2.8",
		),
	},
	{Qname: "loop1.example.com.", Qtype: dns.TypeCNAME, Answer: testutil.RRs("loop1.example.com. 300 IN CNAME loop2.example.com.")},
}

// TestLookupCNAME: chains, targets outside the zone, dangling targets.
func TestLookupCNAME(t *testing.T) {
	g := lookupGateway(t)
	for _, tc := range cnameCases {
		qtCheck(t, g, tc)
	}
}

// TestLookupServFail: CNAME loops answer SERVFAIL, which ServeDNS returns
// without writing, as CoreDNS expects. A chain longer than maxChain is no
// loop: it is answered as far as maxChain goes, NOERROR, and the resolver
// follows the rest.
func TestLookupServFail(t *testing.T) {
	g := lookupGateway(t)
	for _, q := range []struct {
		name  string
		qtype uint16
	}{
		{"loop1.example.com.", dns.TypeA},
		{"loop2.example.com.", dns.TypeAAAA},
		{"self.example.com.", dns.TypeA},
		{"self.example.com.", dns.TypeMX},
	} {
		m := new(dns.Msg)
		m.SetQuestion(q.name, q.qtype)
		code, resp := qtServe(t, g, m)
		if code != dns.RcodeServerFailure || resp != nil {
			t.Errorf("%s %s: got %s and %v, want SERVFAIL returned and nothing written", q.name, dns.TypeToString[q.qtype], dns.RcodeToString[code], resp)
		}
	}
	var links []string
	for i := 1; i <= 9; i++ {
		links = append(links, fmt.Sprintf("l%d.chain9.example.com. 300 IN CNAME l%d.chain9.example.com.", i, i+1))
	}
	qtCheck(t, g, test.Case{Qname: "l1.chain9.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs(links...)})
	// The ninth link of chain9 is reachable from the second one.
	qtCheck(t, g, test.Case{
		Qname: "l2.chain9.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs(
			"l2.chain9.example.com. 300 IN CNAME l3.chain9.example.com.",
			"l3.chain9.example.com. 300 IN CNAME l4.chain9.example.com.",
			"l4.chain9.example.com. 300 IN CNAME l5.chain9.example.com.",
			"l5.chain9.example.com. 300 IN CNAME l6.chain9.example.com.",
			"l6.chain9.example.com. 300 IN CNAME l7.chain9.example.com.",
			"l7.chain9.example.com. 300 IN CNAME l8.chain9.example.com.",
			"l8.chain9.example.com. 300 IN CNAME l9.chain9.example.com.",
			"l9.chain9.example.com. 300 IN CNAME l10.chain9.example.com.",
			"l10.chain9.example.com. 60 IN A 192.0.2.9",
		),
	})
}
