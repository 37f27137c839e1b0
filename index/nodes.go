package index

import (
	"bytes"
	"slices"

	"github.com/miekg/dns"
)

// nodes is the writer's copy of the names of an index: each name's node,
// packed (packed.go), with the names changed since they were last folded
// into the view's table apart (next); how many names with data lie below
// each name, which makes the empty non-terminals; whether a wildcard lies
// below a name; and the delegations. It folds and publishes the names
// into the view's place in the Shared's tables (tables.go).
type nodes struct {
	zones    []string
	live     bool         // publish every change (set by Flush)
	children slots[int32] // names with data below a name
	pub      *tableView
	next     map[string]view // names changed since the last fold: their node, packed, or nil when gone
	full     bool            // the next fold builds the table anew instead of copying leaves
	changed  []bool          // per zone: a name changed since the last publish
	cuts     int             // names below an apex with NS records
	scratch  []byte          // where a node is packed
	wildName []byte          // where hasWildcard writes "*.<name>"
}

func newNodes(zones []string, sh *Shared) nodes {
	return nodes{
		zones:    zones,
		children: slots[int32]{sh: sh},
		pub:      sh.joinTables(),
		next:     map[string]view{},
		changed:  make([]bool, len(zones)),
	}
}

// set makes the node of name in zone zi hold sets and steer, and the names
// above it follow.
func (ns *nodes) set(name string, zi int, sets []rrset, steer []steerTarget) {
	old, had := ns.view(name)
	hadData := had && !old.empty()
	if had {
		// Unchanged data: compared packed, as the node lies.
		ns.scratch = appendNode(ns.scratch[:0], &node{name: name, sets: sets, steer: steer, wildcard: old.wildcard()})
		if bytes.Equal(old[:old.size()], ns.scratch) {
			return
		}
	}
	if hadData != (len(sets) > 0) {
		delta := int32(1)
		if hadData {
			delta = -1
		}
		forAncestors(name, ns.zones[zi], func(a string) { ns.addChildren(a, delta) })
		// Ancestors may have appeared as, or stopped being, empty non-terminals.
		forAncestors(name, ns.zones[zi], func(a string) { ns.refresh(a, zi, nil, nil, false) })
	}
	ns.refresh(name, zi, sets, steer, true)
}

// addChildren adds delta to the count of names with data below name.
func (ns *nodes) addChildren(name string, delta int32) {
	ns.children.update(name, func(c int32) int32 { return max(c+delta, 0) })
}

// refresh replaces the node of name. With setData false it keeps the node's
// current data and only re-evaluates its existence and whether a wildcard
// is below it.
func (ns *nodes) refresh(name string, zi int, sets []rrset, steer []steerTarget, setData bool) {
	old, had := ns.view(name)
	hasData := len(sets) > 0
	if !setData && had {
		hasData = !old.empty()
	}
	exists := hasData || ns.children.get(name) > 0 || name == ns.zones[zi]
	switch {
	case exists && !setData && had:
		// The same data: only the wildcard flag may change.
		wildcard := ns.hasWildcard(name)
		if old.wildcard() == wildcard {
			return
		}
		ns.scratch = append(ns.scratch[:0], old[:old.size()]...)
		view(ns.scratch).setWildcard(wildcard)
		ns.setPacked(name, ns.scratch)
	case exists:
		ns.scratch = appendNode(ns.scratch[:0], &node{name: name, sets: sets, steer: steer, wildcard: ns.hasWildcard(name)})
		if had && bytes.Equal(old[:old.size()], ns.scratch) {
			return
		}
		ns.setPacked(name, ns.scratch)
	case had:
		ns.countCut(name, -1)
		ns.setNext(name, nil)
	default:
		return
	}
	ns.changed[zi] = true
	// The parent of a wildcard knows whether it exists.
	if isWildcard(name) {
		ns.refresh(name[2:], zi, nil, nil, false)
	}
}

// hasWildcard reports whether the writer holds "*.<name>".
func (ns *nodes) hasWildcard(name string) bool {
	ns.wildName = append(append(ns.wildName[:0], "*."...), name...)
	if v, ok := ns.next[string(ns.wildName)]; ok {
		return v != nil
	}
	_, ok := ns.pub.getBytes(ns.wildName)
	return ok
}

// view returns the writer's node of name, packed: the one changed since
// the last fold, else the one in the view's table.
func (ns *nodes) view(name string) (view, bool) {
	if v, ok := ns.next[name]; ok {
		return v, v != nil
	}
	return ns.pub.get(name)
}

// setPacked sets the node of name to a copy of the packed node b.
func (ns *nodes) setPacked(name string, b []byte) {
	ns.countCut(name, -1)
	ns.setNext(name, view(bytes.Clone(b)))
	ns.countCut(name, +1)
}

// setNext notes the next node of name, packed, or nil when it goes. Until
// the first Flush (or Seal) nothing is published: the first publish builds
// the table anew from every name instead of copying leaves one name at a
// time, and every syncBatch names the changes are folded into the table,
// so that the initial sync never holds a million names in a map. Changed
// nodes wait packed, not as objects of pointers.
func (ns *nodes) setNext(name string, v view) {
	ns.next[name] = v
	if ns.live {
		return
	}
	ns.full = true
	if len(ns.next) >= syncBatch {
		ns.pub.fold(ns.next, true)
		ns.next = map[string]view{}
	}
}

// syncBatch is the number of changed names the initial sync folds into the
// table at once (see setNext).
var syncBatch = 1 << 16

// publish folds the changed names into the view's table and stores s, with
// them, as the view's snapshot.
func (ns *nodes) publish(s *Snapshot) {
	s.cuts = ns.cuts > 0
	ns.pub.publish(ns.next, ns.full, s)
	ns.full = false
	if len(ns.next) > 0 {
		// A new map, not a cleared one: after the initial sync this one
		// holds every name, and a map never shrinks.
		ns.next = map[string]view{}
	}
}

// countCut keeps count of the delegations (NS records below an apex),
// adding delta when the writer's node of name is one.
func (ns *nodes) countCut(name string, delta int) {
	if v, ok := ns.view(name); ok && v.has(dns.TypeNS) && !slices.Contains(ns.zones, name) {
		ns.cuts += delta
	}
}

// release forgets the counts of names (every name the index uses) and
// leaves the view's table; the last snapshot stays.
func (ns *nodes) release(names []string) {
	ns.children.release(names)
	ns.pub.leave()
}

// parentZones returns, for every zone, the position of the most specific
// other zone that contains it, or -1.
func parentZones(zones []string) []int {
	parents := make([]int, len(zones))
	for i, z := range zones {
		parents[i] = -1
		for j, p := range zones {
			if p != z && dns.IsSubDomain(p, z) && (parents[i] < 0 || len(p) > len(zones[parents[i]])) {
				parents[i] = j
			}
		}
	}
	return parents
}

// forAncestors calls f for every name strictly between name and its zone apex.
func forAncestors(name, zone string, f func(string)) {
	for off, end := dns.NextLabel(name, 0); !end; off, end = dns.NextLabel(name, off) {
		a := name[off:]
		if len(a) <= len(zone) {
			return
		}
		f(a)
	}
}

func isWildcard(name string) bool {
	return len(name) > 2 && name[0] == '*' && name[1] == '.'
}
