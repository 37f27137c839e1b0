package gateway

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestLookupTwoZones: two zones in one Gateway are independent: own SOA, own
// NS, own names and wildcards.
func TestLookupTwoZones(t *testing.T) {
	g, _ := qtGateway(t, []string{"example.com.", "example.org."}, nil, map[string][]string{
		"Ingress/default/web": {
			"www.example.com. 60 IN A 192.0.2.1",
			"www.example.org. 60 IN A 198.51.100.1",
		},
		"Ingress/default/wild":  {"*.example.org. 60 IN A 198.51.100.2"},
		"Ingress/default/cross": {"cross.example.com. 300 IN CNAME www.example.org."},
		"Service/kube-system/dns1": {
			"dns1.kube-system.example.com. 60 IN A 192.0.2.53",
			"dns1.kube-system.example.org. 60 IN A 198.51.100.53",
		},
	})
	soaOrg := qtSOA("example.org.")
	for _, tc := range []test.Case{
		{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("www.example.com. 60 IN A 192.0.2.1")},
		{Qname: "www.example.org.", Qtype: dns.TypeA, Answer: testutil.RRs("www.example.org. 60 IN A 198.51.100.1")},
		{Qname: "www.example.org.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soaOrg)},
		{Qname: "missing.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
		// The wildcard of example.org. answers there only.
		{Qname: "missing.example.org.", Qtype: dns.TypeA, Answer: testutil.RRs("missing.example.org. 60 IN A 198.51.100.2")},
		{Qname: "example.com.", Qtype: dns.TypeSOA, Answer: testutil.RRs(soaCom)},
		{Qname: "example.org.", Qtype: dns.TypeSOA, Answer: testutil.RRs(soaOrg)},
		{Qname: "example.org.", Qtype: dns.TypeA, Ns: testutil.RRs(soaOrg)},
		{
			Qname: "example.org.", Qtype: dns.TypeNS,
			Answer: testutil.RRs("example.org. 60 IN NS dns1.kube-system.example.org."),
			Extra:  testutil.RRs("dns1.kube-system.example.org. 60 IN A 198.51.100.53"),
		},
		{
			Qname: "example.com.", Qtype: dns.TypeNS,
			Answer: testutil.RRs("example.com. 60 IN NS dns1.kube-system.example.com."),
			Extra:  testutil.RRs("dns1.kube-system.example.com. 60 IN A 192.0.2.53"),
		},
		// A CNAME into the other zone is not followed (the resolver does that).
		{Qname: "cross.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("cross.example.com. 300 IN CNAME www.example.org.")},
	} {
		qtCheck(t, g, tc)
	}
}

// TestLookupNestedZones: sub.example.com. is its own zone inside example.com.
func TestLookupNestedZones(t *testing.T) {
	g, _ := qtGateway(t, []string{"example.com.", "sub.example.com."}, nil, map[string][]string{
		"Ingress/default/web": {
			"www.example.com. 60 IN A 192.0.2.1",
			"www.sub.example.com. 60 IN A 192.0.2.2",
			"a.b.sub.example.com. 60 IN A 192.0.2.3",
		},
		"Ingress/default/wild": {"*.example.com. 60 IN A 192.0.2.9"},
		"Ingress/default/down": {"down.example.com. 300 IN CNAME www.sub.example.com."},
	})
	soaSub := qtSOA("sub.example.com.")
	for _, tc := range []test.Case{
		{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("www.example.com. 60 IN A 192.0.2.1")},
		{Qname: "www.sub.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("www.sub.example.com. 60 IN A 192.0.2.2")},
		{Qname: "www.sub.example.com.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soaSub)},
		{Qname: "b.sub.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaSub)},
		// The parent's wildcard does not reach into the child zone.
		{Qname: "missing.sub.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaSub)},
		{Qname: "missing.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("missing.example.com. 60 IN A 192.0.2.9")},
		{Qname: "sub.example.com.", Qtype: dns.TypeSOA, Answer: testutil.RRs(soaSub)},
		{Qname: "sub.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaSub)},
		{Qname: "sub.example.com.", Qtype: dns.TypeNS, Answer: testutil.RRs("sub.example.com. 60 IN NS dns1.kube-system.sub.example.com.")},
		{Qname: "example.com.", Qtype: dns.TypeSOA, Answer: testutil.RRs(soaCom)},
		{Qname: "down.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("down.example.com. 300 IN CNAME www.sub.example.com.")},
	} {
		qtCheck(t, g, tc)
	}
}
