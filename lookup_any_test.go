package gateway

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// anyCases: ANY (RFC 8482): one RRset, never the whole name.
var anyCases = []test.Case{
	// ANY (RFC 8482): one RRset, never the whole name.
	{Qname: "www.example.com.", Qtype: dns.TypeANY, Answer: testutil.RRs(wwwA1, wwwA2)},
	{Qname: "v6.example.com.", Qtype: dns.TypeANY, Answer: testutil.RRs("v6.example.com. 60 IN AAAA 2001:db8::10")},
	{Qname: "c.example.com.", Qtype: dns.TypeANY, Ns: testutil.RRs(soaCom)},
	{Qname: "w.example.com.", Qtype: dns.TypeANY, Ns: testutil.RRs(soaCom)},
}

// TestLookupANY: a minimal answer to ANY.
func TestLookupANY(t *testing.T) {
	g := lookupGateway(t)
	for _, tc := range anyCases {
		qtCheck(t, g, tc)
	}
}
