package gateway

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// caseCases: the question keeps its case (checked by qtCheck), and so do the
// answers' owners that are the query name (RFC 4343 §4.1); every other
// name is as published.
var caseCases = []test.Case{
	{Qname: "WwW.ExAmPlE.CoM.", Qtype: dns.TypeA, Answer: testutil.RRs("WwW.ExAmPlE.CoM. 60 IN A 192.0.2.1", "WwW.ExAmPlE.CoM. 60 IN A 192.0.2.2")},
	{Qname: "X.W.Example.COM.", Qtype: dns.TypeA, Answer: testutil.RRs("X.W.Example.COM. 60 IN A 192.0.2.50")},
	{Qname: "ALIAS.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("ALIAS.example.com. 300 IN CNAME www.example.com.", wwwA1, wwwA2)},
	{Qname: "MISSING.Example.Com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "EXAMPLE.COM.", Qtype: dns.TypeSOA, Answer: testutil.RRs("EXAMPLE.COM. 60 IN SOA dns1.kube-system.example.com. hostmaster.example.com. 0 300 60 604800 60")},
}

// TestLookupCase: queries in mixed case.
func TestLookupCase(t *testing.T) {
	g := lookupGateway(t)
	for _, tc := range caseCases {
		qtCheck(t, g, tc)
	}
}
