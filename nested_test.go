package gateway

import (
	"slices"
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestNestedZones: zones example.com. and a.b.example.com. in one block
// behave as a parent and a child zone on one authoritative server: the
// parent has the empty non-terminal b.example.com. above the child, its
// wildcard never covers names at or below the child's apex, DS at the cut is
// answered from the parent (RFC 4035 §3.1.4.1), and the parent's AXFR holds
// the delegation with the glue below the cut.
func TestNestedZones(t *testing.T) {
	zones := []string{"example.com.", "a.b.example.com."}
	g, _ := qtGateway(t, zones, func(g *Gateway) { g.secondary = "ns2.example.com." }, map[string][]string{
		"Nameserver/kube-system/dns1": {
			"dns1.kube-system.example.com. 60 IN A 192.0.2.53",
			"dns1.kube-system.a.b.example.com. 60 IN A 192.0.2.53",
			"dns1.kube-system.a.b.example.com. 60 IN AAAA 2001:db8::53",
		},
		"Ingress/default/ns2":  {"ns2.example.com. 60 IN A 192.0.2.54"},
		"Ingress/default/wild": {"*.example.com. 60 IN A 192.0.2.9"},
		"Ingress/default/web":  {"www.a.b.example.com. 60 IN A 192.0.2.2"},
	})
	soaCom, soaChild := qtSOA("example.com."), qtSOA("a.b.example.com.")
	for _, tc := range []test.Case{
		// The empty non-terminal between the apexes: NODATA, not NXDOMAIN (RFC 8020).
		{Qname: "b.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
		// Below it, the parent's wildcard does not apply: b.example.com. exists.
		{Qname: "x.b.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
		// Names at and below the child's apex are the child's.
		{Qname: "a.b.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaChild)},
		{Qname: "missing.a.b.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaChild)},
		{Qname: "www.a.b.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("www.a.b.example.com. 60 IN A 192.0.2.2")},
		// Elsewhere the wildcard still applies.
		{Qname: "c.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("c.example.com. 60 IN A 192.0.2.9")},
		// DS at the cut: the parent's answer, NODATA with the parent's SOA.
		{Qname: "a.b.example.com.", Qtype: dns.TypeDS, Ns: testutil.RRs(soaCom)},
		// DS at the top zone's apex: no parent here, the zone's own NODATA.
		{Qname: "example.com.", Qtype: dns.TypeDS, Ns: testutil.RRs(soaCom)},
		{
			Qname: "a.b.example.com.", Qtype: dns.TypeNS,
			Answer: testutil.RRs("a.b.example.com. 60 IN NS dns1.kube-system.a.b.example.com.", "a.b.example.com. 60 IN NS ns2.example.com."),
			Extra:  testutil.RRs("dns1.kube-system.a.b.example.com. 60 IN A 192.0.2.53", "dns1.kube-system.a.b.example.com. 60 IN AAAA 2001:db8::53", "ns2.example.com. 60 IN A 192.0.2.54"),
		},
	} {
		qtCheck(t, g, tc)
	}

	axfr := xtStrings(xtTransfer(t, g, "example.com.", 0))
	for _, want := range []string{
		"a.b.example.com.\t60\tIN\tNS\tdns1.kube-system.a.b.example.com.",
		"a.b.example.com.\t60\tIN\tNS\tns2.example.com.",
		// Glue for the nameserver below the cut; ns2.example.com. is the parent's own data.
		"dns1.kube-system.a.b.example.com.\t60\tIN\tA\t192.0.2.53",
		"dns1.kube-system.a.b.example.com.\t60\tIN\tAAAA\t2001:db8::53",
		"ns2.example.com.\t60\tIN\tA\t192.0.2.54",
	} {
		if !slices.Contains(axfr, want) {
			t.Errorf("the parent's AXFR lacks %q:\n%q", want, axfr)
		}
	}
	if slices.Contains(axfr, "www.a.b.example.com.\t60\tIN\tA\t192.0.2.2") {
		t.Errorf("the parent's AXFR holds the child's data:\n%q", axfr)
	}
	if child := xtStrings(xtTransfer(t, g, "a.b.example.com.", 0)); !slices.Contains(child, "www.a.b.example.com.\t60\tIN\tA\t192.0.2.2") {
		t.Errorf("the child's AXFR lacks its data:\n%q", child)
	}
}
