package index

import (
	"cmp"
	"hash/maphash"
	"slices"
)

// A table maps the names of the snapshots of one or more views to their
// nodes. It is a two-level directory of small leaves: the top bits of a
// name's hash pick a block, the next shift bits a leaf in it, and a leaf
// lists its (hash, node position) pairs sorted by hash. The nodes lie packed
// in the table's arena (see packed.go), so leaves hold no pointers either.
// An entry's ref says which views hold its node (see tables.go): views that
// agree on a name's node hold one entry and one node.
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
	len   int // number of entries
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
	ref  ref // the node's position and the views holding it (arena.go)
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

// find returns the position in l of the entry of name (of hash h) that
// view bit holds, and true; or the position where it belongs and false.
func find[N string | []byte](t *table, l leaf, h uint64, name N, bit ref) (int, bool) {
	i := l.search(h)
	for ; i < len(l) && l[i].hash == h; i++ {
		if l[i].ref&bit != 0 && string(t.arena.view(l[i].ref).name()) == string(name) {
			return i, true
		}
	}
	return i, false
}

// lookup returns the node of name, of hash h, that view bit holds.
func lookup[N string | []byte](t *table, h uint64, name N, bit ref) (view, bool) {
	bi, li := t.slot(h)
	b := t.top[bi]
	if b == nil {
		return nil, false
	}
	l := (*b)[li]
	if i, ok := find(t, l, h, name, bit); ok {
		return t.arena.view(l[i].ref), true
	}
	return nil, false
}

// get returns the node of name that view bit holds.
func (t *table) get(name string, bit ref) (view, bool) {
	return lookup(t, maphash.String(t.seed, name), name, bit)
}

// getBytes is get for a name in bytes.
func (t *table) getBytes(name []byte, bit ref) (view, bool) {
	return lookup(t, maphash.Bytes(t.seed, name), name, bit)
}

// each calls f for every node of t that view bit holds, in no particular
// order.
func (t *table) each(bit ref, f func(view)) {
	t.eachEntry(func(e entry) {
		if e.ref&bit != 0 {
			f(t.arena.view(e.ref))
		}
	})
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

// change is what a table does at one name for view bit, whose node there
// becomes v (nil: none) and was the entry at mine (-1: none); same is an
// entry of another view whose node equals v (-1: none).
func change(entries []entry, name string, h uint64, v view, bit ref, a *arena, from int) (mine, same int) {
	mine, same = -1, -1
	for i := from; i < len(entries) && entries[i].hash == h; i++ {
		e := entries[i]
		if e.ref.views() == 0 {
			continue // removed by this change
		}
		n := a.view(e.ref)
		if string(n.name()) != name {
			continue
		}
		if e.ref&bit != 0 {
			mine = i
		}
		if v != nil && same < 0 && string(n[:n.size()]) == string(v) {
			same = i
		}
	}
	return mine, same
}

// overlaid returns a table of t's entries with the names of next changed
// for view bit: each to its node there, or removed when that is nil, and
// the change in the number of names bit holds. It is built anew, with the
// block size for its number of entries: the way to publish many changes at
// once, such as the initial sync's. t is left as it was.
func (t *table) overlaid(next map[string]view, bit ref) (table, int) {
	entries := make([]entry, 0, t.len+len(next))
	t.eachEntry(func(e entry) { entries = append(entries, e) })
	a, delta, added := t.arena, 0, 0
	for name, v := range next {
		h := maphash.String(t.seed, name)
		old := leaf(entries[:len(entries)-added])
		mine, same := change(old, name, h, v, bit, &a, old.search(h))
		if mine >= 0 && mine == same {
			continue
		}
		if same >= 0 {
			entries[same].ref |= bit
		}
		if mine >= 0 {
			delta--
			if entries[mine].ref &^= bit; entries[mine].ref.views() == 0 {
				a.drop(entries[mine].ref)
			}
		}
		if v != nil {
			delta++
			if same < 0 {
				var r ref
				r, a = a.put(v)
				entries = append(entries, entry{h, r | bit})
				added++
			}
		}
	}
	// The entries kept are in order; those added are sorted and merged in.
	kept, fresh := entries[:len(entries)-added], entries[len(entries)-added:]
	slices.SortFunc(fresh, func(x, y entry) int { return cmp.Compare(x.hash, y.hash) })
	merged := make([]entry, 0, len(entries))
	for len(kept) > 0 || len(fresh) > 0 {
		switch {
		case len(kept) > 0 && kept[0].ref.views() == 0:
			kept = kept[1:]
		case len(fresh) == 0 || len(kept) > 0 && kept[0].hash <= fresh[0].hash:
			merged, kept = append(merged, kept[0]), kept[1:]
		default:
			merged, fresh = append(merged, fresh[0]), fresh[1:]
		}
	}
	return fromSorted(t.seed, merged, a).settled(), delta
}

// without returns a table of t's entries without view bit, and the number
// of names bit held. t is left as it was.
func (t *table) without(bit ref) (table, int) {
	entries := make([]entry, 0, t.len)
	held := 0
	t.eachEntry(func(e entry) {
		if e.ref&bit != 0 {
			held++
			if e.ref &^= bit; e.ref.views() == 0 {
				t.arena.drop(e.ref)
				return
			}
		}
		entries = append(entries, e)
	})
	return fromSorted(t.seed, entries, t.arena).settled(), held
}

// grown returns a copy of t with the block size for its number of entries.
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
		entries = append(entries, entry{e.hash, a.w.place(v[:v.size()]) | e.ref.views()})
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

// with returns a copy of t with the names of next changed for view bit:
// each to its node there, or removed when that is nil; and the change in
// the number of names bit holds. t is left as it was. A table must be made
// only from the newest one: all of them append to one arena.
func (t table) with(next map[string]view, bit ref) (table, int) {
	var ownBlock [1 << topBits]bool
	ownLeaf := make(map[[2]int]bool, len(next))
	delta := 0
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
			b[li], ownLeaf[[2]int{bi, li}] = l, true
		}
		mine, same := change(l, name, h, v, bit, &t.arena, l.search(h))
		if mine >= 0 && mine == same {
			continue
		}
		if same >= 0 {
			l[same].ref |= bit
		}
		if mine >= 0 {
			delta--
			if l[mine].ref &^= bit; l[mine].ref.views() == 0 {
				t.arena.drop(l[mine].ref)
				l = slices.Delete(l, mine, mine+1)
				t.len--
			}
		}
		if v != nil {
			delta++
			if same < 0 {
				var r ref
				r, t.arena = t.arena.put(v)
				l = slices.Insert(l, l.search(h), entry{h, r | bit})
				t.len++
			}
		}
		if len(l) == 0 {
			l = nil
		}
		b[li] = l
	}
	return t.settled(), delta
}

// settled returns t, or a copy of it in a new arena when most of its arena
// is garbage, or with more leaves when its leaves hold too many entries.
func (t table) settled() table {
	switch {
	case t.arena.garbage():
		return t.compacted()
	case t.shift < maxShift && t.len > (1<<topBits<<t.shift)*maxPerLeaf:
		return t.grown()
	}
	return t
}
