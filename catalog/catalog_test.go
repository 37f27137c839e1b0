package catalog

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func testZone() *Zone {
	return New(Config{
		Name: "Catalog.Example.", Serial: 7, TTL: 0, Refresh: 300, Retry: 60, Expire: 604800,
		Members: []Member{
			{Zone: "b.example.com."},
			{Zone: "A.example.com.", Group: "internal"},
			{Zone: "b.example.com."}, // twice: listed once
			{Zone: "0.0.10.in-addr.arpa.", COO: "new-catalog.example."},
		},
	})
}

func TestMemberIDStable(t *testing.T) {
	a, b := MemberID("Example.COM."), MemberID("example.com.")
	if a != b {
		t.Errorf("IDs differ by case: %s %s", a, b)
	}
	if len(a) != 32 {
		t.Errorf("ID %q: want 32 hex digits", a)
	}
	if MemberID("example.org.") == a {
		t.Error("two zones share an ID")
	}
	if _, ok := dns.IsDomainName(a + ".zones.catalog."); !ok {
		t.Errorf("ID %q is not a label", a)
	}
}

func TestRecords(t *testing.T) {
	z := testZone()
	if z.Name() != "catalog.example." {
		t.Errorf("name %q", z.Name())
	}
	if soa := z.SOA(); soa.Serial != 7 || soa.Ns != "invalid." || soa.Hdr.Name != "catalog.example." {
		t.Errorf("SOA %v", soa)
	}
	var got []string
	for _, rr := range z.Records() {
		got = append(got, rr.String())
	}
	zones := ".zones.catalog.example."
	want := []string{
		"catalog.example.\t0\tIN\tNS\tinvalid.",
		"version.catalog.example.\t0\tIN\tTXT\t\"2\"",
		MemberID("0.0.10.in-addr.arpa.") + zones + "\t0\tIN\tPTR\t0.0.10.in-addr.arpa.",
		"coo." + MemberID("0.0.10.in-addr.arpa.") + zones + "\t0\tIN\tPTR\tnew-catalog.example.",
		MemberID("a.example.com.") + zones + "\t0\tIN\tPTR\ta.example.com.",
		"group." + MemberID("a.example.com.") + zones + "\t0\tIN\tTXT\t\"internal\"",
		MemberID("b.example.com.") + zones + "\t0\tIN\tPTR\tb.example.com.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLookup(t *testing.T) {
	z := testZone()
	id := MemberID("a.example.com.") + ".zones.catalog.example."
	tests := []struct {
		qname   string
		qtype   uint16
		res     Result
		answers int
	}{
		{"catalog.example.", dns.TypeSOA, Success, 1},
		{"CATALOG.example.", dns.TypeNS, Success, 1},
		{"catalog.example.", dns.TypeA, NoData, 0},
		{"catalog.example.", dns.TypeANY, Success, 2},
		{"version.catalog.example.", dns.TypeTXT, Success, 1},
		{"version.catalog.example.", dns.TypePTR, NoData, 0},
		{id, dns.TypePTR, Success, 1},
		{"group." + id, dns.TypeTXT, Success, 1},
		{"zones.catalog.example.", dns.TypePTR, NoData, 0}, // empty non-terminal
		{"zones.catalog.example.", dns.TypeA, NoData, 0},
		{"nope.catalog.example.", dns.TypeA, NameError, 0},
		{"x.zones.catalog.example.", dns.TypePTR, NameError, 0},
		{"coo." + id, dns.TypePTR, NameError, 0},
	}
	for _, tc := range tests {
		answer, ns, res := z.Lookup(tc.qname, tc.qtype)
		if res != tc.res || len(answer) != tc.answers {
			t.Errorf("%s %s: result %d with %d answers, want %d with %d", tc.qname, dns.TypeToString[tc.qtype], res, len(answer), tc.res, tc.answers)
		}
		if res != Success && (len(ns) != 1 || ns[0].Header().Rrtype != dns.TypeSOA) {
			t.Errorf("%s %s: authority %v, want the SOA", tc.qname, dns.TypeToString[tc.qtype], ns)
		}
	}
}

func TestEmptyCatalog(t *testing.T) {
	z := New(Config{Name: "catalog.example."})
	if len(z.Records()) != 2 {
		t.Errorf("records %v: want NS and version only", z.Records())
	}
	if _, _, res := z.Lookup("zones.catalog.example.", dns.TypePTR); res != NameError {
		t.Errorf("zones. of an empty catalog: %d, want NXDOMAIN", res)
	}
}
