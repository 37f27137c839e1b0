package index

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// indexSOA is the newSOA of the index tests.
func indexSOA(zone string, serial uint32) *dns.SOA {
	return &dns.SOA{
		Hdr:    dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 60},
		Ns:     "ns." + zone,
		Mbox:   "hostmaster." + zone,
		Serial: serial,
		Minttl: 60,
	}
}

// indexNS is the apex NS RRset of the index tests.
func indexNS(zone string) []dns.RR {
	return []dns.RR{&dns.NS{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: 60}, Ns: "ns." + zone}}
}

// newTestIndex returns an index for zones on a fake clock set ten seconds
// after the initial serial, and the clock.
func newTestIndex(t testing.TB, zones ...string) (*Index, *qtClock) {
	t.Helper()
	clk := &qtClock{}
	clk.set(time.Now().Truncate(time.Second))
	ix := New(Config{Zones: zones, SOA: indexSOA, NS: indexNS, Now: clk.now, afterFunc: clk.afterFunc})
	clk.add(10 * time.Second)
	t.Cleanup(ix.Close)
	return ix, clk
}

// dumpNode renders a node: its name, its RRsets and its wildcard link.
func dumpNode(n *node) string {
	var b strings.Builder
	b.WriteString(n.name)
	for _, set := range n.sets {
		fmt.Fprintf(&b, " [%s", dns.TypeToString[set.qtype])
		for _, rr := range set.rrs {
			if rr.Header().Rrtype != set.qtype || rr.Header().Name != n.name {
				fmt.Fprintf(&b, " MISFILED(%s)", rr)
			}
			fmt.Fprintf(&b, " %d:%s", rr.Header().Ttl, strings.TrimPrefix(rr.String(), rr.Header().String()))
		}
		b.WriteString("]")
	}
	if n.wildcard {
		b.WriteString(" wildcard=*." + n.name)
	}
	return b.String()
}

// dumpSnapshot renders every node of s, sorted by name.
func dumpSnapshot(s *Snapshot) []string {
	var out []string
	s.names.each(s.bit, func(v view) { out = append(out, dumpNode(v.node())) })
	slices.Sort(out)
	return out
}

// checkIndexInvariants checks the structure of the published snapshot of ix:
// nodes are filed under their names' hashes in the right leaf, which is sorted
// and counted; a name exists iff it
// is an apex, has data, or has a descendant with data; a node knows of a
// wildcard below it iff "*.<name>" is in the same snapshot; nodes fill the
// arena without overlapping; the writer's copy equals the published one
// (after a publish).
func checkIndexInvariants(t *testing.T, ix *Index) {
	t.Helper()
	s := ix.Snapshot()
	withData := map[string]bool{}
	count := 0
	spans := map[int][][2]int{} // per chunk, the bytes of each node
	for bi, b := range s.names.top {
		if b == nil {
			continue
		}
		for li, l := range *b {
			for i, e := range l {
				if e.ref.views() == 0 {
					t.Errorf("an entry of no view in leaf %d/%d", bi, li)
				}
				if e.ref&s.bit == 0 {
					continue
				}
				count++
				v := s.names.arena.view(e.ref)
				name := string(v.name())
				if e.hash != maphash.String(s.names.seed, name) {
					t.Errorf("node %q filed under a hash of another name", name)
				}
				if gb, gl := s.names.slot(e.hash); gb != bi || gl != li {
					t.Errorf("node %q filed in leaf %d/%d, belongs in %d/%d", name, bi, li, gb, gl)
				}
				if i > 0 && l[i-1].hash > e.hash {
					t.Errorf("leaf %d/%d out of order at %q", bi, li, name)
				}
				spans[e.ref.chunk()] = append(spans[e.ref.chunk()], [2]int{e.ref.offset(), e.ref.offset() + v.size()})
			}
		}
	}
	if count != s.Len() {
		t.Errorf("snapshot counts %d names, holds %d", s.Len(), count)
	}
	for c, nodes := range spans {
		slices.SortFunc(nodes, func(a, b [2]int) int { return a[0] - b[0] })
		for i := 1; i < len(nodes); i++ {
			if nodes[i][0] < nodes[i-1][1] {
				t.Errorf("chunk %d: nodes at %v and %v overlap", c, nodes[i-1], nodes[i])
			}
		}
	}
	for name, n := range snapshotNodes(s) {
		if !n.empty() {
			withData[name] = true
		}
		if w := s.Has("*." + name); n.wildcard != w {
			t.Errorf("node %q knows of a wildcard: %v, snapshot holds one: %v", name, n.wildcard, w)
		}
		for j := 1; j < len(n.sets); j++ {
			if n.sets[j-1].qtype >= n.sets[j].qtype {
				t.Errorf("node %q: sets out of order", name)
			}
		}
		for _, set := range n.sets {
			if len(set.rrs) == 0 {
				t.Errorf("node %q: empty %s set", name, dns.TypeToString[set.qtype])
			}
		}
	}
	// The snapshot knows whether there are delegations.
	cuts := false
	for name, n := range snapshotNodes(s) {
		if n.rrs(dns.TypeNS) != nil && !slices.Contains(ix.zones, name) {
			cuts = true
		}
	}
	if ix.Snapshot() == s && s.cuts != cuts && ix.nodes.live {
		t.Errorf("snapshot cuts %v, delegations present %v", s.cuts, cuts)
	}
	// Every name with data makes its ancestors up to its apex exist.
	need := map[string]bool{}
	for zi, z := range ix.zones {
		need[z] = true
		// So does a nested zone's apex, up to its parent's.
		if p := s.parents[zi]; p >= 0 {
			forAncestors(z, ix.zones[p], func(a string) { need[a] = true })
		}
	}
	for name := range withData {
		zi := ZoneOf(ix.zones, name)
		if zi < 0 {
			t.Errorf("node %q outside the zones", name)
			continue
		}
		need[name] = true
		forAncestors(name, ix.zones[zi], func(a string) { need[a] = true })
	}
	for name := range snapshotNodes(s) {
		if !need[name] {
			t.Errorf("node %q exists without data or data below it", name)
		}
	}
	for name := range need {
		if s.get(name) == nil {
			t.Errorf("node %q missing", name)
		}
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.nodes.live && (len(ix.nodes.next) > 0 || ix.nodes.full) {
		t.Errorf("a live index holds %d unpublished names (full rebuild pending: %v)", len(ix.nodes.next), ix.nodes.full)
	}
}

// checkSameAsFresh checks that the snapshot of ix equals that of an index
// built from scratch from the objects ix holds now.
func checkSameAsFresh(t *testing.T, ix *Index) {
	t.Helper()
	fresh := New(Config{Zones: ix.zones, SOA: indexSOA})
	defer fresh.Close()
	ix.mu.Lock()
	objects, _ := ix.heldObjects()
	keys := make([]string, 0, len(objects))
	for k := range objects {
		keys = append(keys, k)
	}
	ix.mu.Unlock()
	rand.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for _, k := range keys {
		fresh.Update(k, objects[k])
	}
	fresh.Flush()
	got, want := dumpSnapshot(ix.Snapshot()), dumpSnapshot(fresh.Snapshot())
	if !slices.Equal(got, want) {
		t.Errorf("incremental index differs from a fresh one\n got %q\nwant %q", got, want)
	}
}

func snapshotNames(s *Snapshot) []string {
	var out []string
	s.names.each(s.bit, func(v view) { out = append(out, string(v.name())) })
	slices.Sort(out)
	return out
}

// snapshotNodes returns every node of s by name.
func snapshotNodes(s *Snapshot) map[string]*node {
	out := map[string]*node{}
	s.names.each(s.bit, func(v view) { out[string(v.name())] = v.node() })
	return out
}

func TestIndexPublishesOnFlush(t *testing.T) {
	ix, _ := newTestIndex(t, "example.com.")
	before := ix.Snapshot()
	ix.Update("Service/a/b", qtRRs("www.example.com. 60 IN A 192.0.2.1"))
	if ix.Snapshot() != before || ix.Snapshot().get("www.example.com.") != nil {
		t.Fatal("an update before the first Flush was published")
	}
	if got := snapshotNames(ix.Snapshot()); !slices.Equal(got, []string{"example.com."}) {
		t.Fatalf("names before Flush: %q", got)
	}
	ix.Flush()
	if ix.Snapshot().get("www.example.com.") == nil {
		t.Fatal("Flush did not publish")
	}
	// From now on every change is published at once.
	ix.Update("Service/a/c", qtRRs("v6.example.com. 60 IN AAAA 2001:db8::1"))
	if n := ix.Snapshot().get("v6.example.com."); n == nil || len(n.rrs(dns.TypeAAAA)) != 1 {
		t.Fatal("update after Flush not published")
	}
	if n := ix.Snapshot().Len(); n != 3 {
		t.Errorf("Len() = %d, want 3", n)
	}
	checkIndexInvariants(t, ix)
}

func TestIndexUpdateReplacesAndRemoves(t *testing.T) {
	ix, _ := newTestIndex(t, "example.com.", "example.org.")
	ix.Flush()
	ix.Update("Ingress/ns/web", qtRRs(
		"www.example.com. 60 IN A 192.0.2.1",
		"www.example.org. 60 IN A 192.0.2.1",
		"www.example.net. 60 IN A 192.0.2.1", // outside every zone: ignored
		"old.example.com. 60 IN A 192.0.2.1",
	))
	if got, want := snapshotNames(ix.Snapshot()), []string{"example.com.", "example.org.", "old.example.com.", "www.example.com.", "www.example.org."}; !slices.Equal(got, want) {
		t.Fatalf("names %q, want %q", got, want)
	}
	// Replacing: old.example.com. goes, www.example.com. changes.
	ix.Update("Ingress/ns/web", qtRRs(
		"www.example.com. 60 IN A 192.0.2.2",
		"www.example.org. 60 IN A 192.0.2.1",
	))
	s := ix.Snapshot()
	if s.get("old.example.com.") != nil {
		t.Error("old.example.com. still published")
	}
	if got := dumpNode(s.get("www.example.com.")); got != "www.example.com. [A 60:192.0.2.2]" {
		t.Errorf("www.example.com.: %s", got)
	}
	checkIndexInvariants(t, ix)
	// Removing with nil and with an empty slice.
	ix.Update("Ingress/ns/web", []dns.RR{})
	if got := snapshotNames(ix.Snapshot()); !slices.Equal(got, []string{"example.com.", "example.org."}) {
		t.Errorf("names after removal %q", got)
	}
	ix.Update("Ingress/ns/web", nil)
	ix.Update("Ingress/ns/never", nil)
	if objects, _ := ix.heldObjects(); ix.objects.held != 0 || len(objects) != 0 || len(ix.namesUsed()) != 0 || len(ix.sh.ids) != 0 || len(ix.sh.names) != 0 || len(ix.rules.conflicts) != 0 {
		t.Errorf("state left behind: objects %v names %v conflicts %v", objects, ix.namesUsed(), ix.rules.conflicts)
	}
	checkIndexInvariants(t, ix)
}

// TestIndexUpdateKeepsCallerSlice: Update sorts and filters a copy; the
// caller's slice keeps its order.
func TestIndexUpdateKeepsCallerSlice(t *testing.T) {
	ix, _ := newTestIndex(t, "example.com.")
	in := qtRRs("b.example.com. 60 IN A 192.0.2.2", "x.example.net. 60 IN A 192.0.2.9", "a.example.com. 60 IN A 192.0.2.1")
	orig := slices.Clone(in)
	ix.Update("k", in)
	if !slices.Equal(in, orig) {
		t.Errorf("caller's slice changed: %v", in)
	}
}

func TestIndexEmptyNonTerminals(t *testing.T) {
	ix, _ := newTestIndex(t, "example.com.")
	ix.Flush()
	ix.Update("k1", qtRRs("a.b.c.example.com. 60 IN A 192.0.2.1"))
	want := []string{"a.b.c.example.com.", "b.c.example.com.", "c.example.com.", "example.com."}
	if got := snapshotNames(ix.Snapshot()); !slices.Equal(got, want) {
		t.Fatalf("names %q, want %q", got, want)
	}
	for _, ent := range []string{"b.c.example.com.", "c.example.com."} {
		if n := ix.Snapshot().get(ent); n == nil || !n.empty() {
			t.Errorf("%s is not an empty non-terminal: %v", ent, n)
		}
	}
	checkIndexInvariants(t, ix)

	// A second name below c. keeps c. when the first goes.
	ix.Update("k2", qtRRs("d.c.example.com. 60 IN A 192.0.2.2"))
	// An ENT gets data, and keeps existing when it loses it again.
	ix.Update("k3", qtRRs("b.c.example.com. 60 IN A 192.0.2.3"))
	if n := ix.Snapshot().get("b.c.example.com."); n == nil || n.empty() {
		t.Fatal("b.c.example.com. has no data")
	}
	ix.Update("k3", nil)
	if n := ix.Snapshot().get("b.c.example.com."); n == nil || !n.empty() {
		t.Fatal("b.c.example.com. is no empty non-terminal again")
	}
	checkIndexInvariants(t, ix)

	ix.Update("k1", nil)
	want = []string{"c.example.com.", "d.c.example.com.", "example.com."}
	if got := snapshotNames(ix.Snapshot()); !slices.Equal(got, want) {
		t.Fatalf("names %q, want %q", got, want)
	}
	ix.Update("k2", nil)
	if got := snapshotNames(ix.Snapshot()); !slices.Equal(got, []string{"example.com."}) {
		t.Fatalf("names %q after removing everything", got)
	}
	if used := ix.namesUsed(); len(used) != 0 {
		t.Errorf("children left: %v", used)
	}
	// A name with data and children stays when its children go, and the
	// other way round.
	ix.Update("k1", qtRRs("p.example.com. 60 IN A 192.0.2.1", "q.p.example.com. 60 IN A 192.0.2.2"))
	ix.Update("k1", qtRRs("p.example.com. 60 IN A 192.0.2.1"))
	if got := dumpNode(ix.Snapshot().get("p.example.com.")); got != "p.example.com. [A 60:192.0.2.1]" {
		t.Errorf("p: %s", got)
	}
	ix.Update("k1", qtRRs("q.p.example.com. 60 IN A 192.0.2.2"))
	if n := ix.Snapshot().get("p.example.com."); n == nil || !n.empty() {
		t.Errorf("p is not an ENT: %v", n)
	}
	checkIndexInvariants(t, ix)
	checkSameAsFresh(t, ix)
}

func TestIndexWildcardLinks(t *testing.T) {
	ix, _ := newTestIndex(t, "example.com.")
	ix.Flush()
	wild := func() (*node, *node) {
		s := ix.Snapshot()
		return s.get("w.example.com."), s.get("*.w.example.com.")
	}

	ix.Update("wild", qtRRs("*.w.example.com. 60 IN A 192.0.2.1"))
	parent, w := wild()
	if parent == nil || w == nil || !parent.wildcard || !parent.empty() {
		t.Fatalf("after create: parent %v, wildcard %v", parent, w)
	}
	// Changing the wildcard's data leaves the parent as it was.
	before := ix.Snapshot()
	ix.Update("wild", qtRRs("*.w.example.com. 60 IN A 192.0.2.2"))
	parent2, w2 := wild()
	if !parent2.wildcard || dumpNode(w2) != "*.w.example.com. [A 60:192.0.2.2]" {
		t.Fatalf("after change: parent %v, wildcard %v", parent2, w2)
	}
	if v1, _ := before.names.get("w.example.com.", before.bit); &v1[0] != &mustView(t, ix.Snapshot(), "w.example.com.")[0] {
		t.Error("the parent was published again for its wildcard's new data")
	}
	// The parent gets data of its own: it still knows of the wildcard.
	ix.Update("parent", qtRRs("w.example.com. 60 IN A 192.0.2.3"))
	parent3, w3 := wild()
	if !parent3.wildcard || dumpNode(w3) != dumpNode(w2) || parent3.empty() {
		t.Fatalf("after parent data: %s", dumpNode(parent3))
	}
	checkIndexInvariants(t, ix)
	// Deleting the wildcard tells the parent; it stays for its own data.
	ix.Update("wild", nil)
	parent4, w4 := wild()
	if w4 != nil || parent4 == nil || parent4.wildcard {
		t.Fatalf("after delete: parent %v, wildcard %v", parent4, w4)
	}
	ix.Update("parent", nil)
	if p, _ := wild(); p != nil {
		t.Fatal("w.example.com. left behind")
	}
	// A wildcard at the apex.
	ix.Update("apexwild", qtRRs("*.example.com. 60 IN CNAME www.example.com."))
	if apex := ix.Snapshot().get("example.com."); !apex.wildcard || ix.Snapshot().get("*.example.com.").rrs(dns.TypeCNAME) == nil {
		t.Fatalf("apex wildcard not known: %v", apex)
	}
	ix.Update("apexwild", nil)
	if apex := ix.Snapshot().get("example.com."); apex == nil || apex.wildcard {
		t.Fatalf("apex wildcard not forgotten: %v", apex)
	}
	// An empty non-terminal wildcard (RFC 4592 §2.2.2): "*.w" exists only
	// because of "a.*.w"; it counts, and synthesizes NODATA.
	ix.Update("entwild", qtRRs("a.*.w.example.com. 60 IN A 192.0.2.4"))
	parent5, w5 := wild()
	if w5 == nil || !w5.empty() || parent5 == nil || !parent5.wildcard {
		t.Fatalf("ENT wildcard: parent %v, wildcard %v", parent5, w5)
	}
	// Two wildcards at different levels.
	ix.Update("deep", qtRRs("*.x.w.example.com. 60 IN A 192.0.2.5", "*.w.example.com. 60 IN A 192.0.2.6"))
	s := ix.Snapshot()
	if !s.get("x.w.example.com.").wildcard || !s.get("w.example.com.").wildcard {
		t.Fatal("wildcards at two levels not known")
	}
	checkIndexInvariants(t, ix)
	checkSameAsFresh(t, ix)
	ix.Update("entwild", nil)
	ix.Update("deep", nil)
	if got := snapshotNames(ix.Snapshot()); !slices.Equal(got, []string{"example.com."}) {
		t.Fatalf("names %q after removing everything", got)
	}
}

// mustView returns the packed node of name in s.
func mustView(t *testing.T, s *Snapshot, name string) view {
	t.Helper()
	v, ok := s.names.get(name, s.bit)
	if !ok {
		t.Fatalf("%s not in the snapshot", name)
	}
	return v
}

// TestIndexSyncInBatches: an initial sync that folds its changes into the
// view's table in batches (of 7 names here) publishes the same snapshot at
// the first Flush as an index built in one go, with names replaced and
// removed across batches, wildcards, empty non-terminals and a delegation.
func TestIndexSyncInBatches(t *testing.T) {
	zones := []string{"example.com.", "sub.example.com.", "example.org."}
	r := rand.New(rand.NewPCG(3, 4))
	randName := randomName(r, []string{"a", "b", "c", "*", "sub"}, zones)
	type update struct {
		key string
		rrs []dns.RR
	}
	var updates []update
	for range 600 {
		var rrs []dns.RR
		for range r.IntN(4) {
			name := randName()
			switch r.IntN(6) {
			case 0:
				rrs = append(rrs, qtRR(fmt.Sprintf("%s 60 IN CNAME %s", name, randName())))
			case 1:
				rrs = append(rrs, qtRR(fmt.Sprintf("%s 60 IN NS %s", name, randName())))
			default:
				rrs = append(rrs, qtRR(fmt.Sprintf("%s 60 IN A 192.0.2.%d", name, r.IntN(4))))
			}
		}
		updates = append(updates, update{fmt.Sprintf("obj%d", r.IntN(60)), rrs})
	}
	build := func(batch int) *Index {
		defer func(old int) { syncBatch = old }(syncBatch)
		syncBatch = batch
		ix := New(Config{Zones: zones, SOA: indexSOA})
		t.Cleanup(ix.Close)
		folded, initial := false, ix.Snapshot()
		for _, u := range updates {
			ix.Update(u.key, slices.Clone(u.rrs))
			folded = folded || ix.nodes.pub.ahead
			if ix.Snapshot() != initial {
				t.Fatalf("batch %d: names published before the first Flush", batch)
			}
		}
		if batch < 100 && !folded {
			t.Fatalf("batch %d: never folded", batch)
		}
		ix.Flush()
		return ix
	}
	batched, whole := build(7), build(1<<30)
	if got, want := dumpSnapshot(batched.Snapshot()), dumpSnapshot(whole.Snapshot()); !slices.Equal(got, want) {
		t.Errorf("batched sync differs\n got %q\nwant %q", got, want)
	}
	checkIndexInvariants(t, batched)
	checkSameAsFresh(t, batched)
	// Updates after the first Flush go on as usual.
	batched.Update("obj0", qtRRs("late.example.com. 60 IN A 192.0.2.9"))
	if !batched.Snapshot().Has("late.example.com.") {
		t.Error("an update after the first Flush is not published")
	}
	checkIndexInvariants(t, batched)
}

// TestIndexRandomUpdates applies random updates over a small universe of
// names (wildcards, ENTs, CNAMEs, two zones, a nested zone) and checks after
// every step that the index is well-formed and equal to one built from scratch.
func TestIndexRandomUpdates(t *testing.T) {
	zones := []string{"example.com.", "sub.example.com.", "example.org."}
	ix, clk := newTestIndex(t, zones...)
	ix.Flush()
	labels := []string{"a", "b", "*", "sub"}
	suffixes := []string{"example.com.", "sub.example.com.", "example.org."}
	r := rand.New(rand.NewPCG(1, 2))
	randName := randomName(r, labels, suffixes)
	randRR := func() dns.RR {
		name := randName()
		switch r.IntN(5) {
		case 4:
			return qtRR(fmt.Sprintf("%s %d IN NS %s", name, 30+r.IntN(2)*30, randName()))
		case 0:
			return qtRR(fmt.Sprintf("%s %d IN CNAME %s", name, 30+r.IntN(2)*30, randName()))
		case 1:
			return qtRR(fmt.Sprintf("%s %d IN AAAA 2001:db8::%d", name, 30+r.IntN(2)*30, r.IntN(3)))
		default:
			return qtRR(fmt.Sprintf("%s %d IN A 192.0.2.%d", name, 30+r.IntN(2)*30, r.IntN(3)))
		}
	}
	for step := range 2000 {
		key := fmt.Sprintf("obj%d", r.IntN(8))
		var rrs []dns.RR
		for range r.IntN(4) {
			rrs = append(rrs, randRR())
		}
		if r.IntN(3) == 0 {
			clk.add(time.Second)
		}
		ix.Update(key, rrs)
		checkIndexInvariants(t, ix)
		if step%50 == 0 {
			checkSameAsFresh(t, ix)
		}
		if t.Failed() {
			t.Fatalf("step %d: %s ← %v", step, key, rrs)
		}
	}
	checkSameAsFresh(t, ix)
}

func TestIndexSnapshotIsolation(t *testing.T) {
	ix, clk := newTestIndex(t, "example.com.")
	ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.1", "*.w.example.com. 60 IN A 192.0.2.5"))
	ix.Flush()
	old := ix.Snapshot()
	oldSerial := old.Serial(0)
	clk.add(time.Second)
	ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.2", "new.example.com. 60 IN A 192.0.2.3"))
	// The old snapshot answers the old data, with its own serial.
	answer, _, _, res := old.Lookup(0, "www.example.com.", dns.TypeA)
	if res != Success || len(answer) != 1 || answer[0].(*dns.A).A.String() != "192.0.2.1" {
		t.Errorf("old snapshot: %v %v", res, answer)
	}
	if _, ns, _, res := old.Lookup(0, "new.example.com.", dns.TypeA); res != NameError || ns[0].(*dns.SOA).Serial != oldSerial {
		t.Errorf("old snapshot knows new.example.com.: %v %v", res, ns)
	}
	if answer, _, _, res := old.Lookup(0, "x.w.example.com.", dns.TypeA); res != Success || len(answer) != 1 {
		t.Errorf("old snapshot lost its wildcard: %v %v", res, answer)
	}
	if old.Serial(0) != oldSerial {
		t.Error("old snapshot's serial changed")
	}
	// The new one answers the new data.
	cur := ix.Snapshot()
	if answer, _, _, res := cur.Lookup(0, "www.example.com.", dns.TypeA); res != Success || answer[0].(*dns.A).A.String() != "192.0.2.2" {
		t.Errorf("new snapshot: %v %v", res, answer)
	}
	if _, _, _, res := cur.Lookup(0, "x.w.example.com.", dns.TypeA); res != NameError {
		t.Errorf("new snapshot still has the wildcard: %v", res)
	}
	if cur.Serial(0) == oldSerial {
		t.Error("serial did not change")
	}
}

// serialWatch records the serials the index announces.
type serialWatch struct {
	mu  sync.Mutex
	got []string
}

func (w *serialWatch) on(zone string, serial uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, fmt.Sprintf("%s %d", zone, serial))
}

func (w *serialWatch) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	got := w.got
	w.got = nil
	return got
}

// fireSerial fires the index's armed timer (the next second comes) and
// checks that the serial of zone zi is then want.
func fireSerial(t *testing.T, clk *qtClock, ix *Index, zi int, want uint32) {
	t.Helper()
	if !clk.fire() {
		t.Fatalf("no timer armed for the pending serial")
	}
	if got := ix.Snapshot().zones[zi].serial; got != want {
		t.Fatalf("serial is %d after the timer, want %d", got, want)
	}
}

// TestIndexClose: after Close the timer is stopped and nothing is published.
func TestIndexClose(t *testing.T) {
	ix, clk := newTestIndex(t, "example.com.")
	ix.Flush()
	ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.1"))
	s := ix.Snapshot().zones[0].serial
	clk.set(time.Unix(int64(s), 900_000_000))
	ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.2")) // arms a 100ms timer
	if clk.armed() != 1 {
		t.Fatalf("%d timers armed, want 1", clk.armed())
	}
	ix.Close()
	if clk.fire() {
		t.Error("the timer was not stopped by Close")
	}
	if got := ix.Snapshot().zones[0].serial; got != s {
		t.Errorf("serial moved after Close: %d → %d", s, got)
	}
	ix.Update("k", nil)
	if ix.Snapshot().get("www.example.com.") == nil {
		t.Error("update published after Close")
	}
}

// TestIndexConcurrent runs writers and readers together; run it with -race.
// Readers hold snapshots and check that they never change under them.
func TestIndexConcurrent(t *testing.T) {
	ix, clk := newTestIndex(t, "example.com.", "example.org.")
	ix.Update("static", qtRRs("static.example.com. 60 IN A 192.0.2.1"))
	ix.Flush()
	var stop atomic.Bool
	var wg sync.WaitGroup
	var queries atomic.Int64
	for wi := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(wi), 7))
			for i := 0; !stop.Load(); i++ {
				key := fmt.Sprintf("w%d/o%d", wi, r.IntN(5))
				zone := []string{"example.com.", "example.org."}[r.IntN(2)]
				var rrs []dns.RR
				switch r.IntN(5) {
				case 0:
					rrs = nil
				case 1:
					rrs = qtRRs(fmt.Sprintf("*.w%d.%s 60 IN A 192.0.2.%d", r.IntN(3), zone, r.IntN(9)))
				case 2:
					rrs = qtRRs(fmt.Sprintf("c%d.%s 60 IN CNAME n%d.x.%s", r.IntN(3), zone, r.IntN(3), zone))
				default:
					rrs = qtRRs(
						fmt.Sprintf("n%d.x.%s 60 IN A 192.0.2.%d", r.IntN(3), zone, r.IntN(9)),
						fmt.Sprintf("n%d.x.%s 60 IN AAAA 2001:db8::%d", r.IntN(3), zone, r.IntN(9)),
					)
				}
				if i%50 == 0 {
					clk.add(time.Second)
				}
				ix.Update(key, rrs)
			}
		}()
	}
	qnames := []string{"static.example.com.", "n1.x.example.com.", "c1.example.org.", "a.w1.example.com.", "x.example.org.", "example.com.", "missing.example.com."}
	for ri := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			held := ix.Snapshot()
			heldDump := dumpSnapshot(held)
			for i := 0; !stop.Load(); i++ {
				qname := qnames[(ri+i)%len(qnames)]
				qtype := []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeSOA, dns.TypeANY}[i%4]
				cur := ix.Snapshot()
				answer, ns, _, res := cur.Lookup(cur.Zone(qname), qname, qtype)
				queries.Add(1)
				switch res {
				case Success:
					if len(answer) == 0 {
						t.Errorf("%s: success without an answer", qname)
					}
				case NameError, NoData:
					if len(ns) != 1 || ns[0].Header().Rrtype != dns.TypeSOA {
						t.Errorf("%s: %d without the SOA: %v", qname, res, ns)
					}
				case ServerFailure:
					// A CNAME loop is possible with random data.
				default:
					t.Errorf("%s: result %d", qname, res)
				}
				if i%200 == 0 {
					if d := dumpSnapshot(held); !slices.Equal(d, heldDump) {
						t.Errorf("a held snapshot changed")
						return
					}
					held = ix.Snapshot()
					heldDump = dumpSnapshot(held)
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	if queries.Load() == 0 {
		t.Fatal("no queries ran")
	}
	checkIndexInvariants(t, ix)
	checkSameAsFresh(t, ix)
}

// TestIndexNestedZoneEmptyNonTerminals: the names between a nested zone's
// apex and its parent's are empty non-terminals of the parent for good, even
// when data there comes and goes.
func TestIndexNestedZoneEmptyNonTerminals(t *testing.T) {
	ix, _ := newTestIndex(t, "example.com.", "a.b.c.example.com.")
	ix.Flush()
	for _, step := range []struct {
		rrs  []dns.RR
		want bool
	}{
		{nil, true},
		{qtRRs("b.c.example.com. 60 IN A 192.0.2.1"), true},
		{nil, true},
	} {
		ix.Update("obj", step.rrs)
		s := ix.Snapshot()
		for _, name := range []string{"b.c.example.com.", "c.example.com."} {
			if s.Has(name) != step.want {
				t.Errorf("after %v: %s exists %v, want %v", step.rrs, name, s.Has(name), step.want)
			}
			if _, _, _, res := s.Lookup(0, name, dns.TypeTXT); res != NoData {
				t.Errorf("after %v: %s TXT: result %d, want NoData", step.rrs, name, res)
			}
		}
		if s.Has("x.example.com.") {
			t.Error("x.example.com. exists")
		}
	}
	checkIndexInvariants(t, ix)
}

func TestOwnerNames(t *testing.T) {
	rrs := func(names ...string) []dns.RR {
		var out []dns.RR
		for _, n := range names {
			out = append(out, &dns.A{Hdr: dns.RR_Header{Name: n, Rrtype: dns.TypeA, Class: dns.ClassINET}})
		}
		return out
	}
	for _, c := range []struct {
		old  []string
		rrs  []dns.RR
		want []string
	}{
		{nil, nil, []string{}},
		{[]string{"a."}, nil, []string{"a."}},
		{nil, rrs("a.", "a.", "b."), []string{"a.", "b."}},
		{[]string{"a.", "c."}, rrs("b.", "c.", "d."), []string{"a.", "b.", "c.", "d."}},
		{[]string{"b.", "d."}, rrs("a.", "b.", "b."), []string{"a.", "b.", "d."}},
	} {
		if got := ownerNames(c.old, c.rrs); !slices.Equal(got, c.want) {
			t.Errorf("ownerNames(%q, %v) = %q, want %q", c.old, c.rrs, got, c.want)
		}
	}
}
