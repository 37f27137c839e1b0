package index

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/miekg/dns"
)

// tableNode returns a node of name whose data tells version v apart.
func tableNode(name string, v int) *node {
	return &node{name: name, sets: []rrset{{qtype: dns.TypeTXT, rrs: []dns.RR{&dns.TXT{
		Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60},
		Txt: []string{fmt.Sprintf("v%d", v)},
	}}}}}
}

// packNodes returns nodes packed, as the writer hands them to a table.
func packNodes(nodes map[string]*node) map[string]view {
	out := make(map[string]view, len(nodes))
	for name, n := range nodes {
		if n == nil {
			out[name] = nil
		} else {
			out[name] = appendNode(nil, n)
		}
	}
	return out
}

// TestTableWith applies rounds of random additions, replacements and
// removals with table.with and checks every round against a table built from
// scratch, and that the tables of earlier rounds never change.
func TestTableWith(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	nodes := map[string]*node{}
	for i := range 5000 {
		name := fmt.Sprintf("n%d.example.com.", i)
		nodes[name] = tableNode(name, 0)
	}
	empty := newTable()
	tab, _ := empty.overlaid(packNodes(nodes), viewBit(0))
	type round struct {
		tab   table
		nodes map[string]*node
	}
	var history []round
	for r := range 30 {
		history = append(history, round{tab, maps.Clone(nodes)})
		next := map[string]*node{}
		for range rng.IntN(200) + 1 {
			name := fmt.Sprintf("n%d.example.com.", rng.IntN(7000))
			if _, ok := nodes[name]; ok && rng.IntN(2) == 0 {
				delete(nodes, name)
				next[name] = nil
			} else {
				nodes[name] = tableNode(name, r+1)
				next[name] = nodes[name]
			}
		}
		if r%10 == 9 {
			tab, _ = tab.overlaid(packNodes(next), viewBit(0)) // the way of the initial sync
		} else {
			tab, _ = tab.with(packNodes(next), viewBit(0))
		}
		checkTable(t, fmt.Sprintf("round %d", r), &tab, nodes)
	}
	for r, h := range history {
		checkTable(t, fmt.Sprintf("kept round %d", r), &h.tab, h.nodes)
	}
	// Removing every name leaves an empty table.
	all := map[string]*node{}
	for name := range nodes {
		all[name] = nil
	}
	tab, _ = tab.with(packNodes(all), viewBit(0))
	checkTable(t, "emptied", &tab, nil)
}

// checkTable checks that tab holds exactly nodes.
func checkTable(t *testing.T, what string, tab *table, nodes map[string]*node) {
	t.Helper()
	if tab.len != len(nodes) {
		t.Errorf("%s: len %d, want %d", what, tab.len, len(nodes))
	}
	for name, n := range nodes {
		v, ok := tab.get(name, viewBit(0))
		if !ok {
			t.Errorf("%s: get(%q) finds nothing", what, name)
			continue
		}
		if got, want := dumpNode(v.node()), dumpNode(n); got != want {
			t.Errorf("%s: get(%q) = %s, want %s", what, name, got, want)
		}
	}
	seen := 0
	tab.each(viewBit(0), func(v view) {
		seen++
		if _, ok := nodes[string(v.name())]; !ok {
			t.Errorf("%s: holds %q, which it should not", what, v.name())
		}
	})
	if seen != len(nodes) {
		t.Errorf("%s: holds %d nodes, want %d", what, seen, len(nodes))
	}
	if _, ok := tab.get("absent.example.com.", viewBit(0)); ok {
		t.Errorf("%s: finds a name it does not hold", what)
	}
}

// TestTableGrows adds names to a small table until it has grown its blocks
// several times, checking it and the tables it was grown from each round.
func TestTableGrows(t *testing.T) {
	nodes := map[string]*node{}
	tab := newTable()
	type round struct {
		tab   table
		nodes map[string]*node
	}
	var history []round
	for i := 0; i < 40_000; {
		history = append(history, round{tab, maps.Clone(nodes)})
		next := map[string]*node{}
		for range 4000 {
			name := fmt.Sprintf("g%d.example.com.", i)
			nodes[name] = tableNode(name, i)
			next[name] = nodes[name]
			i++
		}
		tab, _ = tab.with(packNodes(next), viewBit(0))
		checkTable(t, fmt.Sprintf("%d names", len(nodes)), &tab, nodes)
		if max := (1 << topBits << tab.shift) * maxPerLeaf; tab.len > max {
			t.Errorf("%d names in a table of shift %d (at most %d)", tab.len, tab.shift, max)
		}
	}
	if tab.shift < 2 {
		t.Errorf("table of %d names never grew: shift %d", tab.len, tab.shift)
	}
	for _, h := range history {
		checkTable(t, fmt.Sprintf("kept table of %d names", len(h.nodes)), &h.tab, h.nodes)
	}
}

// TestTableCompacts replaces the same names until replaced nodes fill most
// of the arena: the table then moves its nodes to a new arena, bounded by
// the live data, and the tables before still read their own.
func TestTableCompacts(t *testing.T) {
	nodes := map[string]*node{}
	for i := range 2000 {
		name := fmt.Sprintf("c%d.example.com.", i)
		nodes[name] = tableNode(name, 0)
	}
	empty := newTable()
	tab, _ := empty.overlaid(packNodes(nodes), viewBit(0))
	first, firstNodes := tab, maps.Clone(nodes)
	compactions := 0
	for r := 1; r <= 100; r++ {
		next := map[string]*node{}
		for name := range nodes {
			nodes[name] = tableNode(name, r)
			next[name] = nodes[name]
		}
		before := tab.arena.w
		tab, _ = tab.with(packNodes(next), viewBit(0))
		if tab.arena.w != before {
			compactions++
		}
		if w := tab.arena.w; w.total > 2*max(w.live, minCompact)+chunkSize {
			t.Fatalf("round %d: arena of %d bytes for %d live", r, w.total, w.live)
		}
	}
	checkTable(t, "after 100 rounds", &tab, nodes)
	checkTable(t, "the first table", &first, firstNodes)
	if compactions == 0 {
		t.Error("the arena was never compacted")
	}
}

func TestShiftFor(t *testing.T) {
	for _, c := range []struct {
		names int
		shift uint8
	}{
		{0, 0}, {1024, 0}, {1025, 1}, {10_000, 4}, {100_000, 7}, {1_000_000, maxShift}, {100_000_000, maxShift},
	} {
		if got := shiftFor(c.names); got != c.shift {
			t.Errorf("shiftFor(%d) = %d, want %d", c.names, got, c.shift)
		}
	}
}

// TestTableViews applies random changes of three views to one table, with
// table.with, table.overlaid and table.without, and checks every round that
// each view reads exactly its names, that views agreeing on a node hold one
// entry (no two entries of a name have one node), that the counts of names
// per view follow, and that the tables of earlier rounds never change.
func TestTableViews(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const views = 3
	var model [views]map[string]*node
	var count [views]int
	for v := range views {
		model[v] = map[string]*node{}
	}
	type round struct {
		tab   table
		model [views]map[string]*node
	}
	var history []round
	tab := newTable()
	for r := range 60 {
		var kept round
		kept.tab = tab
		for v := range views {
			kept.model[v] = maps.Clone(model[v])
		}
		history = append(history, kept)
		v := rng.IntN(views)
		next := map[string]*node{}
		for range rng.IntN(100) + 1 {
			name := fmt.Sprintf("n%d.example.com.", rng.IntN(300))
			if _, ok := model[v][name]; ok && rng.IntN(3) == 0 {
				delete(model[v], name)
				next[name] = nil
			} else {
				model[v][name] = tableNode(name, rng.IntN(2)) // two versions: views often agree
				next[name] = model[v][name]
			}
		}
		var delta int
		switch {
		case r%15 == 14:
			tab, delta = tab.without(viewBit(v))
			delta = -delta
			clear(model[v])
		case r%5 == 4:
			tab, delta = tab.overlaid(packNodes(next), viewBit(v))
		default:
			tab, delta = tab.with(packNodes(next), viewBit(v))
		}
		count[v] += delta
		for w := range views {
			checkTableView(t, fmt.Sprintf("round %d, view %d", r, w), &tab, viewBit(w), model[w])
			if count[w] != len(model[w]) {
				t.Fatalf("round %d: view %d counted %d names, holds %d", r, w, count[w], len(model[w]))
			}
		}
		seen := map[string]bool{}
		tab.eachEntry(func(e entry) {
			n := tab.arena.view(e.ref)
			if k := string(n[:n.size()]); seen[k] {
				t.Errorf("round %d: two entries of the node of %s", r, n.name())
			} else {
				seen[k] = true
			}
		})
	}
	for r, h := range history {
		for w := range views {
			checkTableView(t, fmt.Sprintf("kept round %d, view %d", r, w), &h.tab, viewBit(w), h.model[w])
		}
	}
}

// checkTableView checks that view bit of tab holds exactly nodes.
func checkTableView(t *testing.T, what string, tab *table, bit ref, nodes map[string]*node) {
	t.Helper()
	for name, n := range nodes {
		v, ok := tab.get(name, bit)
		if !ok {
			t.Fatalf("%s: get(%q) finds nothing", what, name)
		}
		if got, want := dumpNode(v.node()), dumpNode(n); got != want {
			t.Fatalf("%s: get(%q) = %s, want %s", what, name, got, want)
		}
	}
	seen := 0
	tab.each(bit, func(v view) {
		seen++
		if _, ok := nodes[string(v.name())]; !ok {
			t.Fatalf("%s: holds %q, which it should not", what, v.name())
		}
	})
	if seen != len(nodes) {
		t.Fatalf("%s: holds %d nodes, want %d", what, seen, len(nodes))
	}
}
