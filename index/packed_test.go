package index

import (
	"testing"

	"github.com/miekg/dns"
)

// TestPackedRoundTrip: every record a source makes comes back from the arena
// as it went in, owned by the name it is read for, and a node keeps its
// sets in order with its wildcard flag.
func TestPackedRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name string
		rrs  []string
	}{
		{"one A", []string{"a.example.com. 60 IN A 192.0.2.1"}},
		{"A set", []string{"a.example.com. 60 IN A 192.0.2.1", "a.example.com. 60 IN A 192.0.2.2"}},
		{"one AAAA", []string{"a.example.com. 30 IN AAAA 2001:db8::1"}},
		{"IPv4-mapped AAAA", []string{"a.example.com. 30 IN AAAA ::ffff:192.0.2.1"}},
		{"CNAME", []string{"a.example.com. 300 IN CNAME Target.Example.NET."}},
		{"MX", []string{"a.example.com. 60 IN MX 10 mail.example.com."}},
		{"SRV", []string{"_http._tcp.a.example.com. 60 IN SRV 0 10 80 web.example.com."}},
		{"NS", []string{"a.example.com. 60 IN NS ns1.example.com."}},
		{"PTR", []string{"1.2.0.192.in-addr.arpa. 60 IN PTR a.example.com."}},
		{"TXT", []string{`a.example.com. 60 IN TXT "hello world" "a\"quote" "tab\009"`}},
		{"CAA", []string{`a.example.com. 60 IN CAA 0 issue "ca.example.net"`}},
		{"escaped target", []string{`a.example.com. 60 IN CNAME we\.ird\032name.example.com.`}},
		{"unknown type", []string{`a.example.com. 60 IN TYPE65400 \# 3 010203`}},
	} {
		rrs := qtRRs(c.rrs...)
		owner := rrs[0].Header().Name
		n := &node{name: owner, sets: []rrset{{qtype: rrs[0].Header().Rrtype, rrs: rrs}}, wildcard: true}
		v := view(appendNode(nil, n))
		if v.size() != len(v) || string(v.name()) != owner || !v.wildcard() || v.empty() {
			t.Errorf("%s: node of %d bytes, size %d, name %q, wildcard %v", c.name, len(v), v.size(), v.name(), v.wildcard())
		}
		got := v.rrs(rrs[0].Header().Rrtype, owner)
		if len(got) != len(rrs) || cap(got) != len(got) {
			t.Fatalf("%s: %d records (cap %d), want %d", c.name, len(got), cap(got), len(rrs))
		}
		for i := range rrs {
			if got[i].String() != rrs[i].String() {
				t.Errorf("%s: %q, want %q", c.name, got[i], rrs[i])
			}
		}
		// Read for another owner (a wildcard's synthesis).
		if other := v.rrs(rrs[0].Header().Rrtype, "x.example.com."); other[0].Header().Name != "x.example.com." {
			t.Errorf("%s: owner %q", c.name, other[0].Header().Name)
		}
		if back := v.node(); dumpNode(back) != dumpNode(n) {
			t.Errorf("%s: node %s, want %s", c.name, dumpNode(back), dumpNode(n))
		}
	}
}

// TestPackedSets: a node of several RRsets finds each by type, ANY finds
// the first, an absent type finds nothing, and an empty non-terminal has none.
func TestPackedSets(t *testing.T) {
	n := &node{name: "a.example.com.", sets: []rrset{
		{dns.TypeA, qtRRs("a.example.com. 60 IN A 192.0.2.1")},
		{dns.TypeTXT, qtRRs(`a.example.com. 60 IN TXT "x"`)},
		{dns.TypeAAAA, qtRRs("a.example.com. 60 IN AAAA 2001:db8::1", "a.example.com. 60 IN AAAA 2001:db8::2")},
	}}
	v := view(appendNode(nil, n))
	for _, c := range []struct {
		qtype uint16
		count int
		first string
	}{
		{dns.TypeA, 1, "192.0.2.1"},
		{dns.TypeTXT, 1, `"x"`},
		{dns.TypeAAAA, 2, "2001:db8::1"},
		{dns.TypeANY, 1, "192.0.2.1"},
		{dns.TypeMX, 0, ""},
	} {
		rrs := v.rrs(c.qtype, "a.example.com.")
		if len(rrs) != c.count || v.has(c.qtype) != (c.count > 0) {
			t.Errorf("%s: %d records, want %d", dns.TypeToString[c.qtype], len(rrs), c.count)
			continue
		}
		if c.count > 0 {
			if got := rrs[0].String(); got[len(got)-len(c.first):] != c.first {
				t.Errorf("%s: first record %q, want data %s", dns.TypeToString[c.qtype], got, c.first)
			}
		}
	}
	ent := view(appendNode(nil, &node{name: "b.example.com."}))
	if !ent.empty() || ent.wildcard() || ent.rrs(dns.TypeANY, "b.example.com.") != nil {
		t.Errorf("empty non-terminal: empty %v, wildcard %v", ent.empty(), ent.wildcard())
	}
}

// TestPackedDropsBadRecords: a record without a wire form (an A record
// without an address) is left out, and the rest of its set stays.
func TestPackedDropsBadRecords(t *testing.T) {
	bad := &dns.MX{Hdr: dns.RR_Header{Name: "a.example.com.", Rrtype: dns.TypeMX, Class: dns.ClassINET, Ttl: 60}, Mx: "bad..name."}
	good := qtRR("a.example.com. 60 IN MX 10 mail.example.com.")
	v := view(appendNode(nil, &node{name: "a.example.com.", sets: []rrset{{dns.TypeMX, []dns.RR{bad, good}}}}))
	if got := v.rrs(dns.TypeMX, "a.example.com."); len(got) != 1 || got[0].String() != good.String() {
		t.Errorf("got %v, want only %v", got, good)
	}
}

// TestLookupAllocations: an answer of one address record is one allocation
// (the slice and the record together), a miss none.
func TestLookupAllocations(t *testing.T) {
	s := newLookupIndex(t).Snapshot()
	for _, c := range []struct {
		qname string
		qtype uint16
		max   float64
	}{
		{"ns2.example.com.", dns.TypeA, 1},
		{"nothing.example.com.", dns.TypeA, 0},
		{"ns2.example.com.", dns.TypeAAAA, 0},
	} {
		if n := testing.AllocsPerRun(100, func() { s.Lookup(0, c.qname, c.qtype) }); n > c.max {
			t.Errorf("%s %s: %v allocations, want at most %v", c.qname, dns.TypeToString[c.qtype], n, c.max)
		}
	}
}

func TestPlainName(t *testing.T) {
	for _, c := range []struct {
		name  string
		plain bool
	}{
		{".", true},
		{"a.example.com.", true},
		{"Mixed-Case_x.*.example.com.", true},
		{`we\.ird.example.com.`, false},
		{`sp\032ace.example.com.`, false},
	} {
		buf := make([]byte, 256)
		n, err := dns.PackDomainName(c.name, buf, 0, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := plainName(buf[:n])
		if ok != c.plain || ok && got != c.name {
			t.Errorf("plainName(%q) = %q, %v; want plain %v", c.name, got, ok, c.plain)
		}
	}
	for _, bad := range [][]byte{{}, {3, 'a', 'b'}, {1, 'a', 0, 0}, {64}} {
		if _, ok := plainName(bad); ok {
			t.Errorf("plainName(%v) accepted", bad)
		}
	}
}
