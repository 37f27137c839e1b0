package gateway

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestNameserverNames: a relative apex or secondary is taken under each
// forward zone; in a reverse zone it means the name in the first forward
// zone, which has the addresses; an absolute name stays as it is.
func TestNameserverNames(t *testing.T) {
	tests := []struct {
		zones     []string
		apex      string
		secondary string
		zone      string
		want      []string // MNAME, then the NS names
	}{
		{zones: []string{"example.com."}, apex: "dns1.kube-system", zone: "example.com.", want: []string{"dns1.kube-system.example.com."}},
		{zones: []string{"example.com.", "example.org."}, apex: "ns1", secondary: "ns2", zone: "example.org.", want: []string{"ns1.example.org.", "ns2.example.org."}},
		{zones: []string{"example.com.", "2.0.192.in-addr.arpa."}, apex: "dns1.kube-system", zone: "2.0.192.in-addr.arpa.", want: []string{"dns1.kube-system.example.com."}},
		{zones: []string{"8.b.d.0.1.0.0.2.ip6.arpa.", "example.org.", "example.com."}, apex: "ns1", secondary: "ns2.example.net.", zone: "8.b.d.0.1.0.0.2.ip6.arpa.", want: []string{"ns1.example.org.", "ns2.example.net."}},
		{zones: []string{"2.0.192.in-addr.arpa."}, apex: "NS1.Example.NET.", zone: "2.0.192.in-addr.arpa.", want: []string{"ns1.example.net."}},
	}
	for _, tc := range tests {
		g := newGateway()
		g.Zones, g.apex, g.secondary = tc.zones, tc.apex, tc.secondary
		got := []string{g.newSOA(tc.zone, 1).Ns}
		for i, rr := range g.nsRecords(tc.zone) {
			if i == 0 && rr.(*dns.NS).Ns != got[0] {
				t.Errorf("%s: MNAME %s, first NS %s", tc.zone, got[0], rr.(*dns.NS).Ns)
			}
			if i > 0 {
				got = append(got, rr.(*dns.NS).Ns)
			}
		}
		if len(got) != len(tc.want) || got[0] != tc.want[0] || len(got) > 1 && got[1] != tc.want[1] {
			t.Errorf("zones %v apex %q secondary %q: %s has %q, want %q", tc.zones, tc.apex, tc.secondary, tc.zone, got, tc.want)
		}
	}
}

// TestLookupReverseZoneNameservers: the NS and SOA of a reverse zone name the
// nameserver in the first forward zone, with its addresses as glue.
func TestLookupReverseZoneNameservers(t *testing.T) {
	g, _ := qtGateway(t, []string{"example.com.", "2.0.192.in-addr.arpa."}, nil, map[string][]string{
		"Nameserver/kube-system/dns1": {
			"dns1.kube-system.example.com. 60 IN A 192.0.2.53",
			"53.2.0.192.in-addr.arpa. 60 IN PTR dns1.kube-system.example.com.",
		},
	})
	rev := "2.0.192.in-addr.arpa."
	soa := rev + " 60 IN SOA dns1.kube-system.example.com. hostmaster." + rev + " 0 300 60 604800 60"
	for _, tc := range []test.Case{
		{
			Qname: rev, Qtype: dns.TypeNS,
			Answer: testutil.RRs(rev + " 60 IN NS dns1.kube-system.example.com."),
			Extra:  testutil.RRs("dns1.kube-system.example.com. 60 IN A 192.0.2.53"),
		},
		{Qname: rev, Qtype: dns.TypeSOA, Answer: testutil.RRs(soa)},
		{Qname: "53." + rev, Qtype: dns.TypePTR, Answer: testutil.RRs("53.2.0.192.in-addr.arpa. 60 IN PTR dns1.kube-system.example.com.")},
		{Qname: "54." + rev, Qtype: dns.TypePTR, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soa)},
		{Qname: "dns1.kube-system.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("dns1.kube-system.example.com. 60 IN A 192.0.2.53")},
	} {
		qtCheck(t, g, tc)
	}
}
