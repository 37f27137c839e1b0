package gateway

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/catalog"
)

func TestCatalogParse(t *testing.T) {
	tests := []struct {
		keys     []string
		corefile string
		err      string // "" for none
		want     catalogFeature
	}{
		{[]string{"example.com", "catalog.invalid"}, "k8s_gateway example.com {\n catalog catalog.invalid\n}", "",
			catalogFeature{name: "catalog.invalid."}},
		{[]string{"example.com", "catalog.invalid"}, "k8s_gateway example.com {\n catalog Catalog.Invalid. group blue coo next.invalid\n}", "",
			catalogFeature{name: "catalog.invalid.", group: "blue", coo: "next.invalid."}},
		{[]string{"."}, "k8s_gateway example.com {\n catalog catalog.invalid\n}", "",
			catalogFeature{name: "catalog.invalid."}},
		{[]string{"example.com"}, "k8s_gateway example.com {\n catalog catalog.invalid\n}", "not a zone of the server block", catalogFeature{}},
		{[]string{"example.com"}, "k8s_gateway example.com {\n catalog sub.example.com\n}", "overlaps the zone example.com.", catalogFeature{}},
		{[]string{"."}, "k8s_gateway example.com {\n catalog\n}", "catalog ZONE", catalogFeature{}},
		{[]string{"."}, "k8s_gateway example.com {\n catalog c.invalid group\n}", "catalog ZONE", catalogFeature{}},
		{[]string{"."}, "k8s_gateway example.com {\n catalog c.invalid colour blue\n}", `unknown argument "colour"`, catalogFeature{}},
		{[]string{"."}, "k8s_gateway example.com {\n catalog c.invalid coo c.invalid\n}", "invalid coo", catalogFeature{}},
		// A member's group property would be named past 255 octets.
		{[]string{"."}, "k8s_gateway example.com {\n\n catalog " + strings.Repeat("c.", 105) + "\n}", "Testfile:3 - Error during parsing: catalog: zone c.c.", catalogFeature{}},
	}
	for _, tc := range tests {
		c := caddy.NewTestController("dns", tc.corefile)
		c.ServerBlockKeys = tc.keys
		g, err := parse(c)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one with %q", tc.corefile, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.corefile, err)
			continue
		}
		if g.catalog != tc.want {
			t.Errorf("%q: catalog %+v, want %+v", tc.corefile, g.catalog, tc.want)
		}
	}
}

// catalogGateway is a ready Gateway for two zones with a catalog.
func catalogGateway(t *testing.T) *Gateway {
	t.Helper()
	g := xtGateway(t, []string{"example.com.", "example.org."}, nil)
	g.catalog = catalogFeature{name: "catalog.invalid.", group: "g1"}
	g.catalog.build(g.Zones, g.ttl, 42)
	return g
}

func TestCatalogServe(t *testing.T) {
	g := catalogGateway(t)
	idCom := catalog.MemberID("example.com.") + ".zones.catalog.invalid."
	tests := []struct {
		qname  string
		qtype  uint16
		rcode  int
		answer int
	}{
		{"catalog.invalid.", dns.TypeSOA, dns.RcodeSuccess, 1},
		{"version.catalog.invalid.", dns.TypeTXT, dns.RcodeSuccess, 1},
		{idCom, dns.TypePTR, dns.RcodeSuccess, 1},
		{"group." + idCom, dns.TypeTXT, dns.RcodeSuccess, 1},
		{"zones.catalog.invalid.", dns.TypePTR, dns.RcodeSuccess, 0},
		{"missing.catalog.invalid.", dns.TypeA, dns.RcodeNameError, 0},
	}
	for _, tc := range tests {
		r := new(dns.Msg)
		r.SetQuestion(tc.qname, tc.qtype)
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		if _, err := g.ServeDNS(context.Background(), rec, r); err != nil {
			t.Fatal(err)
		}
		m := rec.Msg
		if m == nil {
			t.Fatalf("%s: no reply", tc.qname)
		}
		if m.Rcode != tc.rcode || len(m.Answer) != tc.answer || !m.Authoritative {
			t.Errorf("%s %s: rcode %d, %d answers, aa %v; want %d, %d, aa", tc.qname, dns.TypeToString[tc.qtype], m.Rcode, len(m.Answer), m.Authoritative, tc.rcode, tc.answer)
		}
		if tc.answer == 0 && (len(m.Ns) != 1 || m.Ns[0].Header().Rrtype != dns.TypeSOA) {
			t.Errorf("%s: authority %v, want the catalog's SOA", tc.qname, m.Ns)
		}
	}
	// Transfers reaching the plugin: the catalog's own is the transfer
	// plugin's (REFUSED here); below its apex there is no zone (NOTAUTH).
	for qname, want := range map[string]int{"catalog.invalid.": dns.RcodeRefused, "zones.catalog.invalid.": dns.RcodeNotAuth} {
		for _, qtype := range []uint16{dns.TypeAXFR, dns.TypeIXFR} {
			r := new(dns.Msg).SetQuestion(qname, qtype)
			rec := dnstest.NewRecorder(&test.ResponseWriter{})
			code, _ := g.ServeDNS(context.Background(), rec, r)
			if written := rec.Msg != nil && rec.Msg.Rcode == want; code != want || written != (want == dns.RcodeNotAuth) {
				t.Errorf("%s %s: %s (written: %v), want %s", qname, dns.TypeToString[qtype], dns.RcodeToString[code], rec.Msg, dns.RcodeToString[want])
			}
		}
	}
}

func TestCatalogTransfer(t *testing.T) {
	g := catalogGateway(t)
	rrs := xtTransfer(t, g, "catalog.invalid.", 0)
	var ptrs []string
	for _, rr := range rrs {
		if p, ok := rr.(*dns.PTR); ok {
			ptrs = append(ptrs, p.Ptr)
		}
	}
	if len(rrs) < 4 || rrs[0].Header().Rrtype != dns.TypeSOA || rrs[len(rrs)-1].Header().Rrtype != dns.TypeSOA {
		t.Fatalf("transfer %v: not framed by the SOA", rrs)
	}
	if strings.Join(ptrs, " ") != "example.com. example.org." {
		t.Errorf("members %v, want both zones", ptrs)
	}
	if got := xtTransfer(t, g, "catalog.invalid.", g.catalog.zone.SOA().Serial); len(got) != 1 {
		t.Errorf("IXFR from the current serial: %d records, want the SOA alone", len(got))
	}
	if _, err := g.Transfer("other.invalid.", 0); err == nil {
		t.Error("transfer of a zone not served: no error")
	}
}

// TestCatalogRequestChecks: a query of the catalog is checked as one of the
// zones: two OPT records or a malformed ECS option get FORMERR, a class
// other than IN and ANY REFUSED; an UPDATE is not the catalog's.
func TestCatalogRequestChecks(t *testing.T) {
	g := catalogGateway(t)
	twoOPT := withOPTs("catalog.invalid.", 2)
	twoOPT.Question[0].Qtype = dns.TypeSOA
	if code, m := qtServe(t, g, twoOPT); m == nil || m.Rcode != dns.RcodeFormatError || len(m.Extra) != 0 || code != dns.RcodeSuccess {
		t.Errorf("two OPT records: %s, %v; want FORMERR written, without OPT", dns.RcodeToString[code], m)
	}
	ecs := new(dns.Msg).SetQuestion("catalog.invalid.", dns.TypeSOA)
	ecs.SetEdns0(1232, false)
	ecs.IsEdns0().Option = append(ecs.IsEdns0().Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, SourceScope: 8, Address: net.IPv4(192, 0, 2, 0)})
	if code, m := qtServe(t, g, ecs); m == nil || m.Rcode != dns.RcodeFormatError || code != dns.RcodeSuccess {
		t.Errorf("ECS with a scope: %s, %v; want FORMERR written", dns.RcodeToString[code], m)
	}
	chaos := new(dns.Msg).SetQuestion("catalog.invalid.", dns.TypeSOA)
	chaos.Question[0].Qclass = dns.ClassCHAOS
	if code, m := qtServe(t, g, chaos); code != dns.RcodeRefused || m != nil {
		t.Errorf("class CH: %s, %v; want REFUSED", dns.RcodeToString[code], m)
	}
	next := &lookupNext{}
	g.Next = next
	update := new(dns.Msg).SetUpdate("catalog.invalid.")
	if qtServe(t, g, update); next.calls != 1 {
		t.Error("an UPDATE of the catalog: not passed to the next plugin")
	}
}
