package index

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// dumpSets renders the RRsets of name as dumpNode does, without the name.
func dumpSets(name string, sets []rrset) string {
	return strings.TrimPrefix(dumpNode(&node{name: name, sets: sets}), name)
}

func TestMergeSets(t *testing.T) {
	for _, c := range []struct {
		desc     string
		objects  map[string][]string
		apex     bool
		want     string // dumpSets form
		conflict string // substring of the conflict; "" for none
	}{
		{
			desc:    "one object",
			objects: map[string][]string{"a": {"x.example.com. 60 IN A 192.0.2.1"}},
			want:    " [A 60:192.0.2.1]",
		},
		{
			desc: "union of two objects, sorted by address, TTL the minimum",
			objects: map[string][]string{
				"b": {"x.example.com. 60 IN A 192.0.2.10", "x.example.com. 60 IN AAAA 2001:db8::2"},
				"a": {"x.example.com. 30 IN A 192.0.2.9", "x.example.com. 300 IN AAAA 2001:db8::1"},
			},
			want:     " [A 30:192.0.2.9 30:192.0.2.10] [AAAA 60:2001:db8::1 60:2001:db8::2]",
			conflict: "records united from a, b",
		},
		{
			desc: "duplicates removed, the lower TTL kept",
			objects: map[string][]string{
				"a": {"x.example.com. 60 IN A 192.0.2.1", "x.example.com. 60 IN A 192.0.2.1"},
				"b": {"x.example.com. 20 IN A 192.0.2.1"},
			},
			want:     " [A 20:192.0.2.1]",
			conflict: "records united from a, b",
		},
		{
			desc: "identical contributions are no conflict",
			objects: map[string][]string{
				"a": {"x.example.com. 60 IN A 192.0.2.1"},
				"b": {"x.example.com. 60 IN A 192.0.2.1"},
			},
			want: " [A 60:192.0.2.1]",
		},
		{
			desc: "IPv4 sorted numerically, IPv6 by bytes",
			objects: map[string][]string{"a": {
				"x.example.com. 60 IN A 192.0.2.100", "x.example.com. 60 IN A 10.0.0.1", "x.example.com. 60 IN A 192.0.2.20",
				"x.example.com. 60 IN AAAA 2001:db8::10", "x.example.com. 60 IN AAAA ::ffff:192.0.2.1", "x.example.com. 60 IN AAAA 2001:db8::9",
			}},
			want: " [A 60:10.0.0.1 60:192.0.2.20 60:192.0.2.100] [AAAA 60:::ffff:192.0.2.1 60:2001:db8::9 60:2001:db8::10]",
		},
		{
			desc: "types ordered by number",
			objects: map[string][]string{"a": {
				`x.example.com. 60 IN TXT "t"`, "x.example.com. 60 IN AAAA 2001:db8::1", "x.example.com. 60 IN A 192.0.2.1",
			}},
			want: ` [A 60:192.0.2.1] [TXT 60:"t"] [AAAA 60:2001:db8::1]`,
		},
		{
			desc: "CNAME and addresses: the addresses win",
			objects: map[string][]string{
				"a": {"x.example.com. 60 IN CNAME y.example.com."},
				"b": {"x.example.com. 60 IN A 192.0.2.1"},
			},
			want:     " [A 60:192.0.2.1]",
			conflict: "CNAME y.example.com. from a ignored: x.example.com. also has other records from b",
		},
		{
			desc: "CNAME and addresses in one object: the addresses win",
			objects: map[string][]string{
				"a": {"x.example.com. 60 IN CNAME y.example.com.", "x.example.com. 60 IN AAAA 2001:db8::1"},
			},
			want:     " [AAAA 60:2001:db8::1]",
			conflict: "CNAME y.example.com. from a ignored",
		},
		{
			desc: "two CNAMEs: the first key wins",
			objects: map[string][]string{
				"b": {"x.example.com. 60 IN CNAME b.example.com."},
				"a": {"x.example.com. 300 IN CNAME a.example.com."},
			},
			want:     " [CNAME 300:a.example.com.]",
			conflict: "CNAME b.example.com. from b ignored in favour of a.example.com. from a",
		},
		{
			desc: "two equal CNAMEs: one, the lower TTL, no conflict",
			objects: map[string][]string{
				"a": {"x.example.com. 300 IN CNAME y.example.com."},
				"b": {"x.example.com. 60 IN CNAME y.example.com."},
			},
			want: " [CNAME 60:y.example.com.]",
		},
		{
			desc:     "CNAME at the apex is dropped",
			objects:  map[string][]string{"a": {"example.com. 60 IN CNAME y.example.net."}},
			apex:     true,
			want:     "",
			conflict: "CNAME y.example.net. from a ignored at the zone apex",
		},
		{
			desc: "CNAME at the apex is dropped, addresses stay",
			objects: map[string][]string{
				"a": {"example.com. 60 IN CNAME y.example.net."},
				"b": {"example.com. 60 IN A 192.0.2.1"},
			},
			apex:     true,
			want:     " [A 60:192.0.2.1]",
			conflict: "ignored at the zone apex",
		},
		{
			desc: "NS at the apex is dropped (the apex NS come from the configuration)",
			objects: map[string][]string{
				"a": {"example.com. 60 IN NS ns.example.net.", "example.com. 60 IN A 192.0.2.1"},
			},
			apex:     true,
			want:     " [A 60:192.0.2.1]",
			conflict: "NS ns.example.net. from a ignored",
		},
		{
			desc:    "NS below the apex is kept (a delegation)",
			objects: map[string][]string{"a": {"x.example.com. 60 IN NS ns.example.net."}},
			want:    " [NS 60:ns.example.net.]",
		},
		{desc: "no contributors", objects: nil, want: ""},
	} {
		contributors := map[string][]dns.RR{}
		name := "x.example.com."
		if c.apex {
			name = "example.com."
		}
		for k, ss := range c.objects {
			rrs := qtRRs(ss...)
			sortRRs(rrs)
			contributors[k] = rrs
		}
		// Map order must not matter: run it several times.
		for range 10 {
			sets, conflict := mergeSets(name, contributionsOf(contributors), c.apex)
			if got := dumpSets(name, sets); got != c.want {
				t.Errorf("%s: sets %q, want %q", c.desc, got, c.want)
			}
			if c.conflict == "" && conflict != "" || !strings.Contains(conflict, c.conflict) {
				t.Errorf("%s: conflict %q, want %q", c.desc, conflict, c.conflict)
			}
		}
	}
}

// TestMergeSetsKeepsInputs: merging copies what it changes; the records the
// objects published keep their TTLs.
func TestMergeSetsKeepsInputs(t *testing.T) {
	a := qtRRs("x.example.com. 60 IN A 192.0.2.2", "x.example.com. 60 IN A 192.0.2.1")
	b := qtRRs("x.example.com. 30 IN A 192.0.2.3")
	sets, _ := mergeSets("x.example.com.", contributionsOf(map[string][]dns.RR{"a": a, "b": b}), false)
	if got := dumpSets("x.example.com.", sets); got != " [A 30:192.0.2.1 30:192.0.2.2 30:192.0.2.3]" {
		t.Fatalf("sets %q", got)
	}
	if a[0].Header().Ttl != 60 || a[1].Header().Ttl != 60 || a[0].(*dns.A).A.String() != "192.0.2.2" {
		t.Errorf("input changed: %v", a)
	}
	if rrs := sets[0].rrs; len(rrs) != cap(rrs) {
		t.Errorf("merged set len %d cap %d", len(rrs), cap(rrs))
	}
}

// conflictLog records the conflicts an index reports.
type conflictLog []string

func (l *conflictLog) on(name, msg string) { *l = append(*l, name+": "+msg) }

func (l *conflictLog) take() []string { got := *l; *l = nil; return got }

func TestIndexMergeUnion(t *testing.T) {
	ix, _ := newTestIndex(t, "example.com.")
	var log conflictLog
	ix.setListener(testListener{conflict: log.on})
	ix.Flush()
	www := func() string { return dumpNode(ix.Snapshot().get("www.example.com.")) }

	ix.Update("Ingress/ns/b", qtRRs("www.example.com. 60 IN A 192.0.2.20", "www.example.com. 60 IN A 192.0.2.3"))
	ix.Update("Ingress/ns/a", qtRRs("www.example.com. 30 IN A 192.0.2.3", "www.example.com. 30 IN A 192.0.2.100"))
	if got := www(); got != "www.example.com. [A 30:192.0.2.3 30:192.0.2.20 30:192.0.2.100]" {
		t.Errorf("union: %s", got)
	}
	if got := log.take(); !slices.Equal(got, []string{"www.example.com.: records united from Ingress/ns/a, Ingress/ns/b"}) {
		t.Errorf("conflicts %q", got)
	}
	// Deleting one object removes only its data; the TTL goes back up.
	ix.Update("Ingress/ns/a", nil)
	if got := www(); got != "www.example.com. [A 60:192.0.2.3 60:192.0.2.20]" {
		t.Errorf("after deleting a: %s", got)
	}
	ix.Update("Ingress/ns/a", qtRRs("www.example.com. 60 IN AAAA 2001:db8::1"))
	ix.Update("Ingress/ns/b", nil)
	if got := www(); got != "www.example.com. [AAAA 60:2001:db8::1]" {
		t.Errorf("after deleting b: %s", got)
	}
	// A record of one object alone is published as it is.
	rr := qtRR("v4.example.com. 60 IN A 192.0.2.1")
	ix.Update("Service/ns/v4", []dns.RR{rr})
	if got := ix.Snapshot().get("v4.example.com.").rrs(dns.TypeA); len(got) != 1 || got[0].String() != rr.String() {
		t.Errorf("published %v, want %v", got, rr)
	}
	checkIndexInvariants(t, ix)
}

func TestIndexMergeCNAMEConflicts(t *testing.T) {
	ix, _ := newTestIndex(t, "example.com.")
	var log conflictLog
	ix.setListener(testListener{conflict: log.on})
	ix.Flush()
	x := func() string { return dumpNode(ix.Snapshot().get("x.example.com.")) }

	// CNAME vs addresses: the addresses win, whatever the order.
	ix.Update("Ingress/ns/a", qtRRs("x.example.com. 60 IN CNAME y.example.com."))
	if got := x(); got != "x.example.com. [CNAME 60:y.example.com.]" {
		t.Fatalf("CNAME alone: %s", got)
	}
	ix.Update("Service/ns/b", qtRRs("x.example.com. 60 IN A 192.0.2.1"))
	if got := x(); got != "x.example.com. [A 60:192.0.2.1]" {
		t.Errorf("CNAME and A: %s", got)
	}
	if got := log.take(); len(got) != 1 || !strings.Contains(got[0], "CNAME y.example.com. from Ingress/ns/a ignored") {
		t.Errorf("conflicts %q", got)
	}
	// The same conflict again is not reported again.
	ix.Update("Service/ns/b", qtRRs("x.example.com. 60 IN A 192.0.2.1", "other.example.com. 60 IN A 192.0.2.1"))
	if got := log.take(); len(got) != 0 {
		t.Errorf("conflict reported twice: %q", got)
	}
	// The addresses go: the CNAME comes back, and the conflict is over.
	ix.Update("Service/ns/b", nil)
	if got := x(); got != "x.example.com. [CNAME 60:y.example.com.]" {
		t.Errorf("after the addresses left: %s", got)
	}
	if len(ix.rules.conflicts) != 0 {
		t.Errorf("conflicts kept: %v", ix.rules.conflicts)
	}
	// ... and when it comes back, it is reported again.
	ix.Update("Service/ns/b", qtRRs("x.example.com. 60 IN A 192.0.2.1"))
	if got := log.take(); len(got) != 1 {
		t.Errorf("conflict not reported again: %q", got)
	}
	ix.Update("Service/ns/b", nil)
	checkIndexInvariants(t, ix)

	// Two different CNAMEs: the first key wins, whichever object arrived first.
	for _, order := range [][]string{{"Ingress/ns/a", "Ingress/ns/z"}, {"Ingress/ns/z", "Ingress/ns/a"}} {
		ix.Update("Ingress/ns/a", nil)
		for _, k := range order {
			ix.Update(k, qtRRs(fmt.Sprintf("c.example.com. 60 IN CNAME %s.example.com.", k[len(k)-1:])))
		}
		if got := dumpNode(ix.Snapshot().get("c.example.com.")); got != "c.example.com. [CNAME 60:a.example.com.]" {
			t.Errorf("arrival %v: %s", order, got)
		}
		if got := log.take(); len(got) != 1 || !strings.Contains(got[0], "CNAME z.example.com. from Ingress/ns/z ignored in favour of a.example.com. from Ingress/ns/a") {
			t.Errorf("arrival %v: conflicts %q", order, got)
		}
		ix.Update("Ingress/ns/a", nil)
		ix.Update("Ingress/ns/z", nil)
	}
	// Deleting the winner lets the other CNAME in.
	ix.Update("Ingress/ns/a", qtRRs("c.example.com. 60 IN CNAME a.example.com."))
	ix.Update("Ingress/ns/z", qtRRs("c.example.com. 60 IN CNAME z.example.com."))
	ix.Update("Ingress/ns/a", nil)
	if got := dumpNode(ix.Snapshot().get("c.example.com.")); got != "c.example.com. [CNAME 60:z.example.com.]" {
		t.Errorf("after deleting the winner: %s", got)
	}
	ix.Update("Ingress/ns/z", nil)

	// A CNAME at the apex is dropped; the apex stays.
	log.take()
	ix.Update("Ingress/ns/apex", qtRRs("example.com. 60 IN CNAME lb.example.net."))
	if got := dumpNode(ix.Snapshot().get("example.com.")); got != "example.com." {
		t.Errorf("apex: %s", got)
	}
	if got := log.take(); len(got) != 1 || !strings.Contains(got[0], "ignored at the zone apex") {
		t.Errorf("apex conflicts %q", got)
	}
	checkIndexInvariants(t, ix)
}

func TestEqualRRs(t *testing.T) {
	a := qtRRs("x.example.com. 60 IN A 192.0.2.1", "x.example.com. 60 IN A 192.0.2.2")
	for _, c := range []struct {
		b    []dns.RR
		want bool
	}{
		{qtRRs("x.example.com. 60 IN A 192.0.2.1", "x.example.com. 60 IN A 192.0.2.2"), true},
		{qtRRs("x.example.com. 61 IN A 192.0.2.1", "x.example.com. 60 IN A 192.0.2.2"), false},
		{qtRRs("x.example.com. 60 IN A 192.0.2.1"), false},
		{qtRRs("x.example.com. 60 IN A 192.0.2.1", "x.example.com. 60 IN A 192.0.2.3"), false},
		{qtRRs("y.example.com. 60 IN A 192.0.2.1", "x.example.com. 60 IN A 192.0.2.2"), false},
		{nil, false},
	} {
		if got := equalRRs(a, c.b); got != c.want {
			t.Errorf("equalRRs(%v, %v) = %v", a, c.b, got)
		}
	}
	if !equalRRs(nil, []dns.RR{}) {
		t.Error("nil and empty differ")
	}
}

func TestSortRRs(t *testing.T) {
	rrs := qtRRs(
		"b.example.com. 60 IN A 192.0.2.1",
		"a.example.com. 60 IN AAAA 2001:db8::1",
		"a.example.com. 60 IN A 192.0.2.10",
		"a.example.com. 60 IN A 192.0.2.9",
		"a.example.com. 60 IN CNAME z.example.com.",
	)
	sortRRs(rrs)
	var got []string
	for _, rr := range rrs {
		got = append(got, strings.ReplaceAll(rr.String(), "\t", " "))
	}
	want := []string{
		"a.example.com. 60 IN A 192.0.2.9",
		"a.example.com. 60 IN A 192.0.2.10",
		"a.example.com. 60 IN CNAME z.example.com.",
		"a.example.com. 60 IN AAAA 2001:db8::1",
		"b.example.com. 60 IN A 192.0.2.1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("sortRRs:\n got %q\nwant %q", got, want)
	}
}

// contributionsOf turns object key → records into the index's key-ordered form.
func contributionsOf(m map[string][]dns.RR) []contribution {
	var cs []contribution
	for _, k := range slices.Sorted(maps.Keys(m)) {
		cs = append(cs, contribution{key: k, rrs: m[k]})
	}
	return cs
}
