package gateway

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// entCases: empty non-terminals exist without data (RFC 4592 §2.2.2): NODATA.
var entCases = []test.Case{
	// Empty non-terminals, every type.
	{Qname: "c.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "b.c.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "b.c.example.com.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soaCom)},
	{Qname: "b.c.example.com.", Qtype: dns.TypeCNAME, Ns: testutil.RRs(soaCom)},
	{Qname: "b.c.example.com.", Qtype: dns.TypeTXT, Ns: testutil.RRs(soaCom)},
	{Qname: "b.c.example.com.", Qtype: dns.TypeANY, Ns: testutil.RRs(soaCom)},
	{Qname: "kube-system.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "_tcp.svc.example.com.", Qtype: dns.TypeSRV, Ns: testutil.RRs(soaCom)},
}

// TestLookupEmptyNonTerminal: every type asked at an ENT is NODATA.
func TestLookupEmptyNonTerminal(t *testing.T) {
	g := lookupGateway(t)
	for _, tc := range entCases {
		qtCheck(t, g, tc)
	}
}
