package gateway

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// wildcardCases: synthesis from wildcards (RFC 4592).
var wildcardCases = []test.Case{
	// Wildcards (RFC 4592).
	{Qname: "x.w.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("x.w.example.com. 60 IN A 192.0.2.50")},
	{Qname: "y.x.w.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("y.x.w.example.com. 60 IN A 192.0.2.50")},
	{Qname: "z.y.x.w.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("z.y.x.w.example.com. 60 IN A 192.0.2.50")},
	{Qname: "x.w.example.com.", Qtype: dns.TypeANY, Answer: testutil.RRs("x.w.example.com. 60 IN A 192.0.2.50")},
	// The wildcard without the type asked: NODATA.
	{Qname: "x.w.example.com.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soaCom)},
	{Qname: "x.w.example.com.", Qtype: dns.TypeTXT, Ns: testutil.RRs(soaCom)},
	{Qname: "x.w.example.com.", Qtype: dns.TypeCNAME, Ns: testutil.RRs(soaCom)},
	// Never the parent of the wildcard: an empty non-terminal.
	{Qname: "w.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	// The wildcard owner asked literally.
	{Qname: "*.w.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("*.w.example.com. 60 IN A 192.0.2.50")},
	// Existing names and ENTs below block it.
	{Qname: "a.b.w.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("a.b.w.example.com. 60 IN A 192.0.2.51")},
	{Qname: "a.b.w.example.com.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soaCom)},
	{Qname: "b.w.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "x.b.w.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "x.a.b.w.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	// Below the wildcard owner itself: its closest encloser is "*.w", which has no wildcard child.
	{Qname: "x.*.w.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	// A wildcard elsewhere does not leak into siblings or into names above it.
	{Qname: "x.wa.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "x.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	// A wildcard CNAME synthesizes a CNAME owned by the query name.
	{
		Qname: "x.wc.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs("x.wc.example.com. 300 IN CNAME www.example.com.", wwwA1, wwwA2),
	},
	{
		Qname: "y.x.wc.example.com.", Qtype: dns.TypeAAAA,
		Answer: testutil.RRs("y.x.wc.example.com. 300 IN CNAME www.example.com.", wwwAAAA),
	},
	{Qname: "x.wc.example.com.", Qtype: dns.TypeCNAME, Answer: testutil.RRs("x.wc.example.com. 300 IN CNAME www.example.com.")},
	{Qname: "x.wc.example.com.", Qtype: dns.TypeANY, Answer: testutil.RRs("x.wc.example.com. 300 IN CNAME www.example.com.")},
	// RRSIG and NSEC are not followed through a CNAME, synthesized or not.
	{Qname: "x.wc.example.com.", Qtype: dns.TypeRRSIG, Ns: testutil.RRs(soaCom)},
	{
		Qname: "x.wc.example.com.", Qtype: dns.TypeMX,
		Answer: testutil.RRs("x.wc.example.com. 300 IN CNAME www.example.com."),
		Ns:     testutil.RRs(soaCom),
	},
	{Qname: "x.we.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("x.we.example.com. 300 IN CNAME www.example.net.")},
	{
		Qname: "x.wd.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError,
		Answer: testutil.RRs("x.wd.example.com. 300 IN CNAME missing.example.com."),
		Ns:     testutil.RRs(soaCom),
	},
	{Qname: "wc.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	// An empty non-terminal wildcard synthesizes NODATA (RFC 4592 §2.2.2).
	{Qname: "q.e.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "a.q.e.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "*.e.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "a.*.e.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("a.*.e.example.com. 60 IN A 192.0.2.70")},
	{Qname: "b.*.e.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
}

// TestLookupWildcard: what a wildcard answers, and where it does not.
func TestLookupWildcard(t *testing.T) {
	g := lookupGateway(t)
	for _, tc := range wildcardCases {
		qtCheck(t, g, tc)
	}
}
