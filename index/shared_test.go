package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestSharedViews runs random updates through views that share a Shared
// and through twins that each have their own, and checks after every step
// that every view's snapshot is its twin's: names (a name of one view only
// is absent from the others), records, wildcards, claims, the names it
// counts, its zones' sizes and transfers, and lookups. The views' filters
// keep one of three sets of records (two are the Shared's variants, the
// third a view's own), and the views share one table of names. Midway a
// view leaves and a new one takes its place. Then it closes the views and
// checks that the Shared holds nothing.
func TestSharedViews(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 33))
	zones := []string{"example.com.", "sub.example.com."}
	sh := newShared()
	const views = 4
	var shared, own [views]*Index
	clk := &qtClock{} // the twins' serials alike: one clock, timers that never fire
	clk.set(time.Unix(1_700_000_000, 0))
	open := func(v int) {
		shared[v] = New(Config{Zones: zones, SOA: indexSOA, Shared: sh, Now: clk.now, afterFunc: clk.afterFunc})
		own[v] = New(Config{Zones: zones, SOA: indexSOA, Now: clk.now, afterFunc: clk.afterFunc})
		shared[v].Flush()
		own[v].Flush()
	}
	for v := range views {
		open(v)
	}
	name := randomName(r, []string{"a", "b", "*", "_tcp"}, zones)
	records := func(v int) []dns.RR {
		var rrs []dns.RR
		for range r.IntN(3) {
			n := name()
			switch r.IntN(4) {
			case 0:
				rrs = append(rrs, qtRR(fmt.Sprintf("%s 60 IN CNAME target.example.net.", n)))
			case 1:
				rrs = append(rrs, qtRR(fmt.Sprintf("%s 60 IN TXT \"view %d\"", n, v%3)))
			default:
				rrs = append(rrs, qtRR(fmt.Sprintf("%s 60 IN A 192.0.2.%d", n, 1+v%3)))
			}
		}
		return rrs
	}
	for step := range 1500 {
		if step == 750 {
			shared[1].Close()
			own[1].Close()
			open(1)
		}
		key := fmt.Sprintf("Ingress/ns%d/o%d", r.IntN(2), r.IntN(40))
		claim := Claim{Namespace: "ns", Created: int64(r.IntN(2))}
		if r.IntN(10) == 0 {
			claim.Priority = 1
		}
		rrs := records(0)
		for v := range views {
			if r.IntN(3) == 0 {
				rrs = records(v) // this view's filter keeps other records
			}
			shared[v].UpdateClaim(key, claim, slices.Clone(rrs))
			own[v].UpdateClaim(key, claim, slices.Clone(rrs))
			if got, want := dumpSnapshot(shared[v].Snapshot()), dumpSnapshot(own[v].Snapshot()); !slices.Equal(got, want) {
				t.Fatalf("step %d, view %d: shared\n%q\nown\n%q", step, v, got, want)
			}
		}
		for v := range views { // a view's update moves the others' snapshots
			if step%5 != 0 {
				break
			}
			compareSnapshots(t, fmt.Sprintf("step %d, view %d", step, v), shared[v].Snapshot(), own[v].Snapshot(), name)
		}
	}
	for v := range views {
		shared[v].mu.Lock()
		got, gotClaims := shared[v].heldObjects()
		shared[v].mu.Unlock()
		own[v].mu.Lock()
		want, wantClaims := own[v].heldObjects()
		own[v].mu.Unlock()
		if fmt.Sprint(got, gotClaims) != fmt.Sprint(want, wantClaims) {
			t.Errorf("view %d holds\n%v %v\nwant\n%v %v", v, got, gotClaims, want, wantClaims)
		}
		checkIndexInvariants(t, shared[v])
		shared[v].Close()
		own[v].Close()
	}
	if len(sh.ids) != 0 || len(sh.names) != 0 {
		t.Errorf("after Close the Shared holds %d objects and %d names", len(sh.ids), len(sh.names))
	}
	if all, _ := entries(shared[0].nodes.pub); all != 0 {
		t.Errorf("after Close the table holds %d entries", all)
	}
}

// compareSnapshots fails unless got and want hold the same names, answer
// alike for a few names of name(), and transfer alike.
func compareSnapshots(t *testing.T, what string, got, want *Snapshot, name func() string) {
	t.Helper()
	if g, w := dumpSnapshot(got), dumpSnapshot(want); !slices.Equal(g, w) {
		t.Fatalf("%s: shared\n%q\nown\n%q", what, g, w)
	}
	if got.Len() != want.Len() || !slices.Equal(got.Sizes(), want.Sizes()) {
		t.Fatalf("%s: %d names %v, want %d %v", what, got.Len(), got.Sizes(), want.Len(), want.Sizes())
	}
	for zi := range got.Zones() {
		if g, w := fmt.Sprint(got.Records(zi)), fmt.Sprint(want.Records(zi)); g != w {
			t.Fatalf("%s: zone %d transfers\n%s\nwant\n%s", what, zi, g, w)
		}
	}
	for range 3 {
		q := name()
		zi := got.Zone(q)
		for _, qtype := range []uint16{dns.TypeA, dns.TypeTXT} {
			a, ns, e, res := got.Lookup(zi, q, qtype)
			wa, wns, we, wres := want.Lookup(zi, q, qtype)
			if fmt.Sprint(a, ns, e, res) != fmt.Sprint(wa, wns, we, wres) {
				t.Fatalf("%s: %s %d: %v %v %v %v, want %v %v %v %v", what, q, qtype, a, ns, e, res, wa, wns, we, wres)
			}
		}
	}
}

// TestSharedWire: views whose records agree keep them once; a view whose
// records differ keeps its own, and each keeps what it stored when the
// others change.
func TestSharedWire(t *testing.T) {
	sh := newShared()
	a := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, Shared: sh})
	b := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, Shared: sh})
	c := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, Shared: sh})
	for _, ix := range []*Index{a, b, c} {
		ix.Flush()
	}
	private := func() []dns.RR { return qtRRs("www.example.com. 60 IN A 10.0.0.1") }
	public := func() []dns.RR { return qtRRs("www.example.com. 60 IN A 198.51.100.1") }
	a.Update("k", private())
	b.Update("k", public())
	c.Update("k", private())
	wire := func(ix *Index) []byte { _, w, _ := ix.objects.find("k"); return w }
	if &wire(a)[0] != &wire(c)[0] || &wire(a)[0] == &wire(b)[0] {
		t.Error("the views that agree do not share their records, or the one that differs does")
	}
	a.Update("k", public())
	if &wire(a)[0] == &wire(c)[0] {
		t.Error("a view's changed records are still the shared ones")
	}
	for _, ix := range []*Index{a, b} {
		if got := ix.Snapshot().get("www.example.com.").rrs(dns.TypeA)[0].(*dns.A).A.String(); got != "198.51.100.1" {
			t.Errorf("answer %s, want 198.51.100.1", got)
		}
	}
	if got := unpackRecords(wire(c)); len(got) != 1 || got[0].(*dns.A).A.String() != "10.0.0.1" {
		t.Errorf("the view that did not change holds %v", got)
	}
	c.Update("k", nil)
	if o := sh.objects.at(uint32(sh.ids["k"])); o.refs != 2 {
		t.Errorf("%d views hold the object, want 2", o.refs)
	}
}

// TestSharedConcurrentViews: views that share a Shared write at once (as
// the controllers of several blocks do), each on its own goroutine, and
// when all are closed the Shared holds nothing. Run with -race.
func TestSharedConcurrentViews(t *testing.T) {
	sh := newShared()
	var wg sync.WaitGroup
	for v := range 4 {
		wg.Go(func() {
			ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, Shared: sh})
			ix.Flush()
			for i := range 2000 {
				o := i % 300
				ix.Update(fmt.Sprintf("Ingress/ns/o%d", o), qtRRs(fmt.Sprintf("n%d.x.example.com. 60 IN A 10.0.0.%d", o%50, v%2)))
				if i%7 == 0 {
					ix.Update(fmt.Sprintf("Ingress/ns/o%d", (o+1)%300), nil)
				}
			}
			if n := ix.Snapshot().Len(); n < 50 {
				t.Errorf("view %d: %d names", v, n)
			}
			ix.Close()
		})
	}
	wg.Wait()
	if len(sh.ids) != 0 || len(sh.names) != 0 {
		t.Errorf("after Close the Shared holds %d objects and %d names", len(sh.ids), len(sh.names))
	}
}
