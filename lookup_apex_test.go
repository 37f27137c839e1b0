package gateway

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// apexCases: the zone apex: SOA, the configured NS with glue, data of its own.
var apexCases = []test.Case{
	// Apex.
	{Qname: "example.com.", Qtype: dns.TypeSOA, Answer: testutil.RRs(soaCom)},
	{
		Qname: "example.com.", Qtype: dns.TypeNS,
		Answer: testutil.RRs(
			"example.com. 60 IN NS dns1.kube-system.example.com.",
			"example.com. 60 IN NS dns2.kube-system.example.com.",
		),
		Extra: testutil.RRs(
			"dns1.kube-system.example.com. 60 IN A 192.0.2.53",
			"dns1.kube-system.example.com. 60 IN AAAA 2001:db8::53",
			"dns2.kube-system.example.com. 60 IN A 192.0.2.54",
		),
	},
	{Qname: "example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("example.com. 60 IN A 192.0.2.100")},
	{Qname: "example.com.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soaCom)},
	{Qname: "example.com.", Qtype: dns.TypeMX, Ns: testutil.RRs(soaCom)},
	{Qname: "example.com.", Qtype: dns.TypeCNAME, Ns: testutil.RRs(soaCom)},
	{Qname: "example.com.", Qtype: dns.TypeANY, Answer: testutil.RRs(soaCom)},
	// The nameserver names are ordinary names.
	{
		Qname: "dns1.kube-system.example.com.", Qtype: dns.TypeAAAA,
		Answer: testutil.RRs("dns1.kube-system.example.com. 60 IN AAAA 2001:db8::53"),
	},
}

// TestLookupApex: the apex answers as a zone file's would.
func TestLookupApex(t *testing.T) {
	g := lookupGateway(t)
	for _, tc := range apexCases {
		qtCheck(t, g, tc)
	}
}

// TestLookupApexNameservers: glue for in-zone nameserver names only; an
// absolute nameserver name outside every zone gets none.
func TestLookupApexNameservers(t *testing.T) {
	g, _ := qtGateway(t, []string{"example.com."}, func(g *Gateway) {
		g.apex = "ns1.example.com."
		g.secondary = "ns.example.net."
		g.ttl = 30
	}, map[string][]string{
		"Service/default/ns1": {"ns1.example.com. 30 IN A 192.0.2.53", "ns1.example.com. 30 IN AAAA 2001:db8::53"},
		"Service/default/www": {"www.example.com. 30 IN A 192.0.2.1"},
		// NS records an object publishes at the apex do not replace the configured ones.
		"DNSEndpoint/default/apexns": {"example.com. 30 IN NS evil.example.net."},
	})
	soa := "example.com. 30 IN SOA ns1.example.com. hostmaster.example.com. 0 300 60 604800 30"
	for _, tc := range []test.Case{
		{
			Qname: "example.com.", Qtype: dns.TypeNS,
			Answer: testutil.RRs("example.com. 30 IN NS ns1.example.com.", "example.com. 30 IN NS ns.example.net."),
			Extra:  testutil.RRs("ns1.example.com. 30 IN A 192.0.2.53", "ns1.example.com. 30 IN AAAA 2001:db8::53"),
		},
		{Qname: "example.com.", Qtype: dns.TypeSOA, Answer: testutil.RRs(soa)},
		{Qname: "missing.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soa)},
		{Qname: "www.example.com.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soa)},
	} {
		qtCheck(t, g, tc)
	}

	// Without any published nameserver address: NS without glue.
	g, _ = qtGateway(t, []string{"example.com."}, nil, nil)
	qtCheck(t, g, test.Case{
		Qname: "example.com.", Qtype: dns.TypeNS,
		Answer: testutil.RRs("example.com. 60 IN NS dns1.kube-system.example.com."),
	})
	qtCheck(t, g, test.Case{Qname: "example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)})
}
