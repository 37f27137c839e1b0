package index

import (
	"cmp"
	"hash/maphash"
	"slices"
)

// A table maps the names of a snapshot to their nodes. It is a two-level
// directory of small leaves: the top bits of a name's hash pick a block, the
// next bits a leaf in it, and a leaf lists its (hash, node) pairs sorted by
// hash. Leaves hold about names/32768 entries each: 768 KiB of leaf headers
// in all, the fixed cost of a table.
//
// A table is immutable once published. The next snapshot's table copies the
// top level (a fixed 2 KiB), the blocks and the leaves that hold changed
// names, and shares everything else: publishing costs O(changed names),
// whatever the size of the zones.
type table struct {
	seed maphash.Seed
	top  [1 << topBits]*block
	len  int // number of names
}

const (
	topBits   = 8
	blockBits = 7
)

// block is the second level of a table.
type block [1 << blockBits]leaf

// leaf holds the entries whose hashes share their top topBits+blockBits
// bits, sorted by hash.
type leaf []entry

type entry struct {
	hash uint64
	node *node
}

// slot returns the block and the leaf of hash h.
func slot(h uint64) (bi, li int) {
	return int(h >> (64 - topBits)), int(h >> (64 - topBits - blockBits) & (1<<blockBits - 1))
}

// search returns the position of the first entry of l with a hash ≥ h.
func (l leaf) search(h uint64) int {
	i, j := 0, len(l)
	for i < j {
		m := int(uint(i+j) >> 1)
		if l[m].hash < h {
			i = m + 1
		} else {
			j = m
		}
	}
	return i
}

// find returns the position of name (of hash h) in l and true, or the
// position where it belongs and false.
func (l leaf) find(h uint64, name string) (int, bool) {
	i := l.search(h)
	for ; i < len(l) && l[i].hash == h; i++ {
		if l[i].node.name == name {
			return i, true
		}
	}
	return i, false
}

// get returns the node of name, or nil.
func (t *table) get(name string) *node {
	h := maphash.String(t.seed, name)
	bi, li := slot(h)
	b := t.top[bi]
	if b == nil {
		return nil
	}
	if i, ok := b[li].find(h, name); ok {
		return b[li][i].node
	}
	return nil
}

// each calls f for every node of t, in no particular order.
func (t *table) each(f func(*node)) {
	for _, b := range t.top {
		if b == nil {
			continue
		}
		for _, l := range b {
			for _, e := range l {
				f(e.node)
			}
		}
	}
}

// buildTable returns a table of every node of nodes (keyed by name).
func buildTable(seed maphash.Seed, nodes map[string]*node) table {
	t := table{seed: seed, len: len(nodes)}
	for name, n := range nodes {
		h := maphash.String(seed, name)
		bi, li := slot(h)
		if t.top[bi] == nil {
			t.top[bi] = new(block)
		}
		t.top[bi][li] = append(t.top[bi][li], entry{h, n})
	}
	for _, b := range t.top {
		if b == nil {
			continue
		}
		for li, l := range b {
			slices.SortFunc(l, func(x, y entry) int { return cmp.Compare(x.hash, y.hash) })
			b[li] = slices.Clip(l)
		}
	}
	return t
}

// with returns a copy of t in which every name of changed holds its node in
// nodes, or is absent when nodes has none. t is left as it was.
func (t table) with(changed map[string]struct{}, nodes map[string]*node) table {
	var ownBlock [1 << topBits]bool
	ownLeaf := make(map[[2]int]bool, len(changed))
	for name := range changed {
		h := maphash.String(t.seed, name)
		bi, li := slot(h)
		if !ownBlock[bi] {
			nb := new(block)
			if old := t.top[bi]; old != nil {
				*nb = *old
			}
			t.top[bi], ownBlock[bi] = nb, true
		}
		b := t.top[bi]
		l := b[li]
		if !ownLeaf[[2]int{bi, li}] {
			l = slices.Clone(l)
			ownLeaf[[2]int{bi, li}] = true
		}
		i, found := l.find(h, name)
		n, ok := nodes[name]
		switch {
		case found && ok:
			l[i].node = n
		case found:
			l = slices.Delete(l, i, i+1)
			t.len--
		case ok:
			l = slices.Insert(l, i, entry{h, n})
			t.len++
		}
		if len(l) == 0 {
			l = nil
		}
		b[li] = l
	}
	return t
}
