package index

import (
	"cmp"
	"hash/maphash"
	"slices"
)

// A table maps the names of a snapshot to their nodes. It is a two-level
// directory of small leaves: the top bits of a name's hash pick a block, the
// next shift bits a leaf in it, and a leaf lists its (hash, node) pairs
// sorted by hash.
//
// The number of leaves follows the number of names: a table is built with
// about minPerLeaf names per leaf, and grows (is rebuilt with twice the
// leaves) when it passes maxPerLeaf, so its fixed cost stays a few bytes per
// name: 6 KiB for a small zone, 3 MiB at a million names.
//
// A table is immutable once published. The next snapshot's table copies the
// top level (a fixed 2 KiB), the blocks and the leaves that hold changed
// names, and shares everything else: publishing costs O(changed names),
// whatever the size of the zones (and O(names) at the rare growth, which at
// least doubles the names since the last).
type table struct {
	seed  maphash.Seed
	shift uint8 // a block holds 1<<shift leaves
	top   [1 << topBits]*block
	len   int // number of names
}

const (
	topBits = 8
	// maxShift bounds the size of a block, which a publish copies: 512
	// leaves, 12 KiB.
	maxShift = 9
	// A leaf of 4-16 entries (64-256 bytes) costs the query's search one to
	// three cache lines; one of 8-32 cost two to four, the most of any
	// step of a lookup at 100,000 names.
	minPerLeaf = 4  // names per leaf of a table as it is built
	maxPerLeaf = 16 // names per leaf that make a table grow
)

// block is the second level of a table: 1<<shift leaves.
type block []leaf

// leaf holds the entries whose hashes share their top topBits+shift bits,
// sorted by hash.
type leaf []entry

type entry struct {
	hash uint64
	node *node
}

// shiftFor returns the block size, in bits, of a table of n names.
func shiftFor(n int) uint8 {
	var s uint8
	for s < maxShift && n > (1<<topBits<<s)*minPerLeaf {
		s++
	}
	return s
}

// slot returns the block and the leaf of hash h.
func (t *table) slot(h uint64) (bi, li int) {
	return int(h >> (64 - topBits)), int(h >> (64 - topBits - uint(t.shift)) & (1<<t.shift - 1))
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
	bi, li := t.slot(h)
	b := t.top[bi]
	if b == nil {
		return nil
	}
	if i, ok := (*b)[li].find(h, name); ok {
		return (*b)[li][i].node
	}
	return nil
}

// each calls f for every node of t, in no particular order.
func (t *table) each(f func(*node)) {
	t.eachEntry(func(e entry) { f(e.node) })
}

// eachEntry calls f for every entry of t, in the order of their hashes.
func (t *table) eachEntry(f func(entry)) {
	for _, b := range t.top {
		if b == nil {
			continue
		}
		for _, l := range *b {
			for _, e := range l {
				f(e)
			}
		}
	}
}

// overlaid returns a table of t's names with those of next changed: each to
// its node there, or removed when that is nil. It is built anew, with the
// block size for its number of names: the way to publish many changes at
// once, such as the initial sync's. t is left as it was.
func (t *table) overlaid(next map[string]*node) table {
	entries := make([]entry, 0, t.len+len(next))
	t.eachEntry(func(e entry) {
		if _, ok := next[e.node.name]; !ok {
			entries = append(entries, e)
		}
	})
	for name, n := range next {
		if n != nil {
			entries = append(entries, entry{maphash.String(t.seed, name), n})
		}
	}
	slices.SortFunc(entries, func(x, y entry) int { return cmp.Compare(x.hash, y.hash) })
	return fromSorted(t.seed, entries)
}

// grown returns a copy of t with the block size for its number of names.
func (t *table) grown() table {
	entries := make([]entry, 0, t.len)
	t.eachEntry(func(e entry) { entries = append(entries, e) })
	return fromSorted(t.seed, entries)
}

// fromSorted returns the table of entries, which are sorted by hash. Each
// leaf gets an array of its own, of its exact length: no slack from
// appending (a leaf of 9 entries took 256 bytes, now 144), and no array
// shared by leaves, which would keep every node they ever held alive until
// the next rebuild.
func fromSorted(seed maphash.Seed, entries []entry) table {
	t := table{seed: seed, shift: shiftFor(len(entries)), len: len(entries)}
	for i := 0; i < len(entries); {
		bi, li := t.slot(entries[i].hash)
		j := i + 1
		for j < len(entries) {
			if b, l := t.slot(entries[j].hash); b != bi || l != li {
				break
			}
			j++
		}
		if t.top[bi] == nil {
			b := make(block, 1<<t.shift)
			t.top[bi] = &b
		}
		(*t.top[bi])[li] = slices.Clone(entries[i:j])
		i = j
	}
	return t
}

// with returns a copy of t with the names of next changed: each to its node
// there, or removed when that is nil. t is left as it was.
func (t table) with(next map[string]*node) table {
	var ownBlock [1 << topBits]bool
	ownLeaf := make(map[[2]int]bool, len(next))
	for name, n := range next {
		h := maphash.String(t.seed, name)
		bi, li := t.slot(h)
		if !ownBlock[bi] {
			nb := make(block, 1<<t.shift)
			if old := t.top[bi]; old != nil {
				copy(nb, *old)
			}
			t.top[bi], ownBlock[bi] = &nb, true
		}
		b := *t.top[bi]
		l := b[li]
		if !ownLeaf[[2]int{bi, li}] {
			l = slices.Clone(l)
			ownLeaf[[2]int{bi, li}] = true
		}
		i, found := l.find(h, name)
		switch {
		case found && n != nil:
			l[i].node = n
		case found:
			l = slices.Delete(l, i, i+1)
			t.len--
		case n != nil:
			l = slices.Insert(l, i, entry{h, n})
			t.len++
		}
		if len(l) == 0 {
			l = nil
		}
		b[li] = l
	}
	if t.shift < maxShift && t.len > (1<<topBits<<t.shift)*maxPerLeaf {
		return t.grown()
	}
	return t
}
