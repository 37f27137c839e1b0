package index

import (
	"fmt"
	"slices"
	"testing"

	"github.com/miekg/dns"
)

// newLookupIndex returns a flushed index for example.com. whose apex NS
// records are ns1 and ns2, with addresses for ns1 (both families) and ns2.
func newLookupIndex(t *testing.T) *Index {
	t.Helper()
	clk := &qtClock{}
	ix := New(Config{
		Zones: []string{"example.com."},
		SOA:   indexSOA,
		NS: func(zone string) []dns.RR {
			return qtRRs("example.com. 60 IN NS ns1.example.com.", "example.com. 60 IN NS ns2.example.com.")
		},
		Now: clk.now,
	})
	t.Cleanup(ix.Close)
	for key, rrs := range map[string][]string{
		"web":      {"www.example.com. 60 IN A 192.0.2.1", "www.example.com. 60 IN A 192.0.2.2"},
		"ns":       {"ns1.example.com. 60 IN A 192.0.2.53", "ns1.example.com. 60 IN AAAA 2001:db8::53", "ns2.example.com. 60 IN A 192.0.2.54"},
		"deep":     {"a.b.c.example.com. 60 IN A 192.0.2.20"},
		"loop":     {"loop1.example.com. 300 IN CNAME loop2.example.com.", "loop2.example.com. 300 IN CNAME loop1.example.com."},
		"dangling": {"dangling.example.com. 300 IN CNAME missing.example.com."},
		"wild":     {"*.w.example.com. 60 IN A 192.0.2.50"},
		"sub":      {"sub.example.com. 60 IN NS ns.example.net."},
		"wildloop": {"*.lw.example.com. 60 IN CNAME x.lw.example.com."},
		"long":     longChain(maxChain + 2),
	} {
		ix.Update(key, qtRRs(rrs...))
	}
	ix.Flush()
	return ix
}

// longChain returns a chain of n CNAMEs, l1.long → l2.long → ..., that ends
// at an address.
func longChain(n int) []string {
	var rrs []string
	for i := 1; i <= n; i++ {
		rrs = append(rrs, fmt.Sprintf("l%d.long.example.com. 60 IN CNAME l%d.long.example.com.", i, i+1))
	}
	return append(rrs, fmt.Sprintf("l%d.long.example.com. 60 IN A 192.0.2.99", n+1))
}

// TestLookup checks the Result kinds, and that the sections Lookup returns
// never alias the snapshot in a way a caller could corrupt. The answers
// themselves are checked through ServeDNS in the plugin's tests.
func TestLookup(t *testing.T) {
	s := newLookupIndex(t).Snapshot()
	for _, c := range []struct {
		name  string
		qtype uint16
		want  Result
	}{
		{"www.example.com.", dns.TypeA, Success},
		{"missing.example.com.", dns.TypeA, NameError},
		{"b.c.example.com.", dns.TypeA, NoData},
		{"loop1.example.com.", dns.TypeA, ServerFailure},
		{"dangling.example.com.", dns.TypeA, NameError},
		{"x.w.example.com.", dns.TypeA, Success},
		{"x.w.example.com.", dns.TypeAAAA, NoData},
		{"x.sub.example.com.", dns.TypeA, Delegation},
		{"sub.example.com.", dns.TypeDS, NoData},
		{"a.lw.example.com.", dns.TypeA, ServerFailure}, // a loop through a wildcard
		{"l1.long.example.com.", dns.TypeA, Success},
		// RRSIG and NSEC belong to the CNAME's owner: not followed.
		{"dangling.example.com.", dns.TypeRRSIG, NoData},
		{"dangling.example.com.", dns.TypeNSEC, NoData},
		{"loop1.example.com.", dns.TypeNSEC, NoData},
		{"a.lw.example.com.", dns.TypeRRSIG, NoData},
		{"dangling.example.com.", dns.TypeDS, NameError},
	} {
		if _, _, _, res := s.Lookup(0, c.name, c.qtype); res != c.want {
			t.Errorf("%s %s: result %d, want %d", c.name, dns.TypeToString[c.qtype], res, c.want)
		}
	}
	// A chain longer than maxChain is answered as far as it goes, the rest
	// being the resolver's.
	if answer, ns, _, _ := s.Lookup(0, "l1.long.example.com.", dns.TypeA); len(answer) != maxChain+1 || len(ns) != 0 ||
		answer[maxChain].(*dns.CNAME).Target != fmt.Sprintf("l%d.long.example.com.", maxChain+2) {
		t.Errorf("a chain of %d CNAMEs: answer %v, authority %v; want the first %d CNAMEs alone", maxChain+2, answer, ns, maxChain+1)
	}
	// Appending to an answer must not write into the snapshot.
	answer, _, _, _ := s.Lookup(0, "www.example.com.", dns.TypeA)
	_ = append(answer, qtRR("www.example.com. 60 IN A 192.0.2.99"))
	again, _, _, _ := s.Lookup(0, "www.example.com.", dns.TypeA)
	if len(again) != 2 || cap(again) != 2 {
		t.Errorf("answer len %d cap %d after an append by a caller", len(again), cap(again))
	}
	_ = append(s.SOA(0), qtRR("www.example.com. 60 IN A 192.0.2.99"))
	if soa := s.SOA(0); len(soa) != 1 || cap(soa) != 1 {
		t.Errorf("SOA section len %d cap %d", len(soa), cap(soa))
	}
	ns, _, extra, _ := s.Lookup(0, "example.com.", dns.TypeNS)
	_ = append(ns, qtRR("example.com. 60 IN NS x.example.com."))
	if ns2, _, _, _ := s.Lookup(0, "example.com.", dns.TypeNS); len(ns2) != 2 || len(extra) != 3 {
		t.Errorf("NS answer %v, extra %v", ns2, extra)
	}
}

// refZoneOf is ZoneOf written with dns.IsSubDomain, which allocates.
func refZoneOf(zones []string, name string) int {
	best := -1
	for i, z := range zones {
		if dns.IsSubDomain(z, name) && (best < 0 || len(z) > len(zones[best])) {
			best = i
		}
	}
	return best
}

// TestZoneOf: the query path's allocation-free ZoneOf agrees with
// dns.IsSubDomain on label boundaries, escapes, case and nesting.
func TestZoneOf(t *testing.T) {
	zoneSets := [][]string{
		{"example.com."},
		{"example.com.", "sub.example.com.", "example.org."},
		{"sub.example.com.", "example.com."},
		{"."},
		{"com.", "example.com."},
		{"a\\.b.example.com.", "example.com."},
	}
	names := []string{
		"example.com.", "www.example.com.", "WWW.EXAMPLE.COM.", "Example.Com.", "badexample.com.", "xexample.com.",
		"sub.example.com.", "a.sub.example.com.", "asub.example.com.", "a.b.sub.example.com.", "example.org.",
		"com.", ".", "example.net.", "www.example.net.", "a\\.example.com.", "a\\\\.example.com.", "x.a\\.b.example.com.",
		"a.b.example.com.", "\\.example.com.", "example\\.com.", "com\\.", "*.example.com.", "example.com.example.com.",
		"\\065.example.com.", "a.\\046.example.com.",
	}
	for _, zones := range zoneSets {
		for _, name := range names {
			if got, want := ZoneOf(zones, name), refZoneOf(zones, name); got != want {
				t.Errorf("zones %q, name %q: ZoneOf %d, dns.IsSubDomain says %d", zones, name, got, want)
			}
		}
	}
	for _, c := range []struct {
		name string
		want int
	}{
		{"example.com.", 0},
		{"www.example.com.", 0},
		{"sub.example.com.", 1}, // the most specific zone
		{"a.sub.example.com.", 1},
		{"*.sub.example.com.", 1},
		{"asub.example.com.", 0},
		{"www.example.org.", 2},
		{"example.net.", -1},
		{"com.", -1},
		{"notexample.com.", -1},
	} {
		if got := ZoneOf(zoneSets[1], c.name); got != c.want {
			t.Errorf("ZoneOf(%q) = %d, want %d", c.name, got, c.want)
		}
	}
	if got := ZoneOf([]string{"sub.example.com.", "example.com."}, "a.sub.example.com."); got != 0 {
		t.Errorf("ZoneOf depends on the order of zones: got %d, want 0", got)
	}
	if n := testing.AllocsPerRun(100, func() { ZoneOf(zoneSets[1], "a.b.sub.example.com.") }); n != 0 {
		t.Errorf("ZoneOf allocates %v times", n)
	}
}

// TestSnapshotRecords: Records holds exactly the data of the names whose
// most specific zone is the one asked for, in canonical order.
func TestSnapshotRecords(t *testing.T) {
	ix, _ := newTestIndex(t, "example.com.", "sub.example.com.", "example.org.")
	ix.Update("a", qtRRs(
		"www.example.com. 60 IN A 192.0.2.1",
		"b.a.example.com. 60 IN TXT \"x\"",
		"a.example.com. 60 IN A 192.0.2.2",
		"x.sub.example.com. 60 IN A 192.0.2.3",
		"example.org. 60 IN A 192.0.2.4",
		"*.example.org. 60 IN A 192.0.2.5",
	))
	ix.Flush()
	s := ix.Snapshot()
	for zi, want := range [][]string{
		// The nested zone sub.example.com. is a delegation of its parent.
		{"a.example.com.\t60\tIN\tA\t192.0.2.2", "b.a.example.com.\t60\tIN\tTXT\t\"x\"", "sub.example.com.\t60\tIN\tNS\tns.sub.example.com.", "www.example.com.\t60\tIN\tA\t192.0.2.1"},
		{"x.sub.example.com.\t60\tIN\tA\t192.0.2.3"},
		{"example.org.\t60\tIN\tA\t192.0.2.4", "*.example.org.\t60\tIN\tA\t192.0.2.5"},
	} {
		var got []string
		for _, rr := range s.Records(zi) {
			got = append(got, rr.String())
		}
		if !slices.Equal(got, want) {
			t.Errorf("zone %s: %q, want %q", s.Zones()[zi], got, want)
		}
	}
}
