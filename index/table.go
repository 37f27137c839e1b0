package index

import (
	"cmp"
	"hash/maphash"
	"slices"
)

// A table maps the names of a snapshot to their nodes. It is a two-level
// directory of small leaves: the top bits of a name's hash pick a block, the
// next shift bits a leaf in it, and a leaf lists its (hash, node position)
// pairs sorted by hash. The nodes lie packed in the table's arena (see
// packed.go), so leaves hold no pointers either.
//
// The number of leaves follows the number of names: a table is built with
// about minPerLeaf names per leaf, and grows (is rebuilt with twice the
// leaves) when it passes maxPerLeaf, so its fixed cost stays a few bytes per
// name: 6 KiB for a small zone, 3 MiB at a million names.
//
// A table is immutable once published. The next snapshot's table copies the
// top level (a fixed 2 KiB), the blocks and the leaves that hold changed
// names, and shares everything else; the changed nodes are appended to the
// arena. Publishing costs O(changed names), whatever the size of the zones,
// and O(names) at the rare growth, which at least doubles the names since the
// last, or compaction, when replaced nodes fill most of the arena.
type table struct {
	seed  maphash.Seed
	shift uint8 // a block holds 1<<shift leaves
	top   [1 << topBits]*block
	len   int // number of names
	arena arena
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

// newTable returns an empty table.
func newTable() table { return table{seed: maphash.MakeSeed(), arena: newArena()} }

// block is the second level of a table: 1<<shift leaves.
type block []leaf

// leaf holds the entries whose hashes share their top topBits+shift bits,
// sorted by hash.
type leaf []entry

type entry struct {
	hash uint64
	ref  ref
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
func find[N string | []byte](t *table, l leaf, h uint64, name N) (int, bool) {
	i := l.search(h)
	for ; i < len(l) && l[i].hash == h; i++ {
		if string(t.arena.view(l[i].ref).name()) == string(name) {
			return i, true
		}
	}
	return i, false
}

// lookup returns the node of name, of hash h.
func lookup[N string | []byte](t *table, h uint64, name N) (view, bool) {
	bi, li := t.slot(h)
	b := t.top[bi]
	if b == nil {
		return nil, false
	}
	l := (*b)[li]
	if i, ok := find(t, l, h, name); ok {
		return t.arena.view(l[i].ref), true
	}
	return nil, false
}

// get returns the node of name.
func (t *table) get(name string) (view, bool) {
	return lookup(t, maphash.String(t.seed, name), name)
}

// getBytes is get for a name in bytes.
func (t *table) getBytes(name []byte) (view, bool) {
	return lookup(t, maphash.Bytes(t.seed, name), name)
}

// each calls f for every node of t, in no particular order.
func (t *table) each(f func(view)) {
	t.eachEntry(func(e entry) { f(t.arena.view(e.ref)) })
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
func (t *table) overlaid(next map[string]view) table {
	entries := make([]entry, 0, t.len+len(next))
	a := t.arena
	t.eachEntry(func(e entry) {
		if _, ok := next[string(t.arena.view(e.ref).name())]; ok {
			a.drop(e.ref)
		} else {
			entries = append(entries, e)
		}
	})
	for name, v := range next {
		if v != nil {
			var r ref
			r, a = a.put(v)
			entries = append(entries, entry{maphash.String(t.seed, name), r})
		}
	}
	slices.SortFunc(entries, func(x, y entry) int { return cmp.Compare(x.hash, y.hash) })
	return fromSorted(t.seed, entries, a)
}

// grown returns a copy of t with the block size for its number of names.
func (t *table) grown() table {
	entries := make([]entry, 0, t.len)
	t.eachEntry(func(e entry) { entries = append(entries, e) })
	return fromSorted(t.seed, entries, t.arena)
}

// compacted returns a copy of t whose nodes lie in a new arena of their
// own: the old one, mostly replaced nodes, goes with the last snapshot
// that reads it.
func (t *table) compacted() table {
	a := newArena()
	entries := make([]entry, 0, t.len)
	t.eachEntry(func(e entry) {
		v := t.arena.view(e.ref)
		entries = append(entries, entry{e.hash, a.w.place(v[:v.size()])})
	})
	a.chunks = a.w.chunks
	return fromSorted(t.seed, entries, a)
}

// fromSorted returns the table of entries, which are sorted by hash and
// whose nodes lie in a. Each leaf gets an array of its own, of its exact
// length: no slack from appending (a leaf of 9 entries took 256 bytes, now
// 144).
func fromSorted(seed maphash.Seed, entries []entry, a arena) table {
	t := table{seed: seed, shift: shiftFor(len(entries)), len: len(entries), arena: a}
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
// there, or removed when that is nil. t is left as it was. A table must be
// made only from the newest one: all of them append to one arena.
func (t table) with(next map[string]view) table {
	var ownBlock [1 << topBits]bool
	ownLeaf := make(map[[2]int]bool, len(next))
	for name, v := range next {
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
		i, found := find(&t, l, h, name)
		if found {
			t.arena.drop(l[i].ref)
		}
		var r ref
		if v != nil {
			r, t.arena = t.arena.put(v)
		}
		switch {
		case found && v != nil:
			l[i].ref = r
		case found:
			l = slices.Delete(l, i, i+1)
			t.len--
		case v != nil:
			l = slices.Insert(l, i, entry{h, r})
			t.len++
		}
		if len(l) == 0 {
			l = nil
		}
		b[li] = l
	}
	switch {
	case t.arena.garbage():
		return t.compacted()
	case t.shift < maxShift && t.len > (1<<topBits<<t.shift)*maxPerLeaf:
		return t.grown()
	}
	return t
}
