package index

import (
	"sync"
	"sync/atomic"
)

// The views of one cluster publish into one table of names (see table.go):
// a name's node that several views agree on is one entry and one node,
// with a bit per view; a view whose node differs there has an entry of its
// own beside it. A lookup reads only the entries of its snapshot's view.
//
// The newest table holds every view's names as its writer last folded
// them in. A view's snapshot holds the table of its last publish; when
// another view folds in a change, the snapshot of every view whose entries
// are published is moved to the new table (its entries there are the
// same), so no snapshot keeps an older table, or a compacted arena, alive.
// A view folds without publishing only before its first Flush (or after a
// Seal): its snapshot then stays where it is until it publishes.

// tables is one table that up to maxViews indexes of a Shared publish into.
type tables struct {
	mu     sync.Mutex
	newest atomic.Pointer[table] // written under mu; read by the writers without it
	views  [maxViews]*tableView  // by bit; nil where free
}

// tableView is one index's place in its tables.
type tableView struct {
	t     *tables
	i     int                      // the view's place in t.views
	bit   ref                      // viewBit(i)
	snap  atomic.Pointer[Snapshot] // the index's current snapshot
	ahead bool                     // under t.mu: the newest table holds changes snap does not
	names int                      // under t.mu: the names of the view in the newest table
}

// joinTables returns a place for a new index in the tables of s.
func (s *Shared) joinTables() *tableView {
	s.tablesMu.Lock()
	defer s.tablesMu.Unlock()
	for _, t := range s.tables {
		if v := t.join(); v != nil {
			return v
		}
	}
	t := &tables{}
	empty := newTable()
	t.newest.Store(&empty)
	s.tables = append(s.tables, t)
	return t.join()
}

// join returns a free place in t, or nil when there is none.
func (t *tables) join() *tableView {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, v := range t.views {
		if v == nil {
			v = &tableView{t: t, i: i, bit: viewBit(i)}
			t.views[i] = v
			return v
		}
	}
	return nil
}

// get returns the node of name in the writer's copy of the view (the
// newest table), which only this view's writer changes.
func (v *tableView) get(name string) (view, bool) { return v.t.newest.Load().get(name, v.bit) }

// getBytes is get for a name in bytes.
func (v *tableView) getBytes(name []byte) (view, bool) {
	return v.t.newest.Load().getBytes(name, v.bit)
}

// fold applies next (see table.with) to the view's names in the newest
// table, without publishing them: full rebuilds the table (table.overlaid).
func (v *tableView) fold(next map[string]view, full bool) {
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	if t, ok := v.apply(next, full); ok {
		v.ahead = true
		v.t.renew(&t, v)
	}
}

// publish applies next as fold does and stores s, with the view's names,
// as the view's snapshot.
func (v *tableView) publish(next map[string]view, full bool, s *Snapshot) {
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	t, ok := v.apply(next, full)
	if !ok {
		t = *v.t.newest.Load()
	}
	s.names, s.bit, s.len = t, v.bit, v.names
	v.snap.Store(s)
	v.ahead = false
	if ok {
		v.t.renew(&s.names, v) // the snapshot's table, never changed, is the newest
	}
}

// leave removes the view's names from the table and gives its place back;
// its snapshot stays as it is.
func (v *tableView) leave() {
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	t, _ := v.t.newest.Load().without(v.bit)
	v.t.views[v.i] = nil
	v.t.renew(&t, v)
}

// apply returns the newest table with next applied and counts the view's
// names, or false when nothing changes; the caller holds t.mu.
func (v *tableView) apply(next map[string]view, full bool) (table, bool) {
	if len(next) == 0 && !full {
		return table{}, false
	}
	var t table
	var delta int
	if full {
		t, delta = v.t.newest.Load().overlaid(next, v.bit)
	} else {
		t, delta = v.t.newest.Load().with(next, v.bit)
	}
	v.names += delta
	return t, true
}

// renew makes newest the newest table and moves to it the snapshots of the
// views other than by whose entries are published; the caller holds t.mu.
func (t *tables) renew(newest *table, by *tableView) {
	t.newest.Store(newest)
	for _, w := range t.views {
		if w == nil || w == by || w.ahead {
			continue
		}
		if old := w.snap.Load(); old != nil {
			s := *old
			s.names = *newest
			w.snap.Store(&s)
		}
	}
}
