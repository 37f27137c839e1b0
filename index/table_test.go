package index

import (
	"fmt"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"testing"
)

// TestTableWith applies rounds of random additions, replacements and
// removals with table.with and checks every round against a table built from
// scratch, and that the tables of earlier rounds never change.
func TestTableWith(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seed := maphash.MakeSeed()
	nodes := map[string]*node{}
	for i := range 5000 {
		name := fmt.Sprintf("n%d.example.com.", i)
		nodes[name] = &node{name: name}
	}
	empty := table{seed: seed}
	tab := empty.overlaid(nodes)
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
				nodes[name] = &node{name: name}
				next[name] = nodes[name]
			}
		}
		if r%10 == 9 {
			tab = tab.overlaid(next) // the way of the initial sync
		} else {
			tab = tab.with(next)
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
	tab = tab.with(all)
	checkTable(t, "emptied", &tab, nil)
}

// checkTable checks that tab holds exactly nodes.
func checkTable(t *testing.T, what string, tab *table, nodes map[string]*node) {
	t.Helper()
	if tab.len != len(nodes) {
		t.Errorf("%s: len %d, want %d", what, tab.len, len(nodes))
	}
	for name, n := range nodes {
		if got := tab.get(name); got != n {
			t.Errorf("%s: get(%q) = %p, want %p", what, name, got, n)
		}
	}
	seen := 0
	tab.each(func(n *node) {
		seen++
		if nodes[n.name] != n {
			t.Errorf("%s: holds %q, which it should not", what, n.name)
		}
	})
	if seen != len(nodes) {
		t.Errorf("%s: holds %d nodes, want %d", what, seen, len(nodes))
	}
	if tab.get("absent.example.com.") != nil {
		t.Errorf("%s: finds a name it does not hold", what)
	}
}

// TestTableGrows adds names to a small table until it has grown its blocks
// several times, checking it and the tables it was grown from each round.
func TestTableGrows(t *testing.T) {
	seed := maphash.MakeSeed()
	nodes := map[string]*node{}
	tab := table{seed: seed}
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
			nodes[name] = &node{name: name}
			next[name] = nodes[name]
			i++
		}
		tab = tab.with(next)
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
