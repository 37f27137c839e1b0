package index

import (
	"bytes"
	"slices"

	"github.com/miekg/dns"
)

// rebuild recomputes the node of name from its contributors.
func (ix *Index) rebuild(name string) {
	zi := ix.zoneOf(name)
	if zi < 0 {
		return
	}
	accepted, rejected := ix.admitted(name, zi, ix.contributions(name))
	ix.reportRejections(name, rejected)
	accepted = ix.chooseHealthy(name, zi, accepted)
	sets, conflict := mergeSets(name, accepted, name == ix.zones[zi])
	ix.reportConflict(name, conflict, accepted)
	steer := buildSteer(accepted, sets)

	old, had := ix.view(name)
	hadData := had && !old.empty()
	if had {
		// Unchanged data: compared packed, as the node lies.
		ix.scratch = appendNode(ix.scratch[:0], &node{name: name, sets: sets, steer: steer, wildcard: old.wildcard()})
		if bytes.Equal(old[:old.size()], ix.scratch) {
			return
		}
	}
	if hadData != (len(sets) > 0) {
		delta := int32(1)
		if hadData {
			delta = -1
		}
		ix.forAncestors(name, ix.zones[zi], func(a string) { ix.addChildren(a, delta) })
		// Ancestors may have appeared as, or stopped being, empty non-terminals.
		ix.forAncestors(name, ix.zones[zi], func(a string) { ix.refresh(a, zi, nil, nil, false) })
	}
	ix.refresh(name, zi, sets, steer, true)
}

// refresh replaces the node of name. With setData false it keeps the node's
// current data and only re-evaluates its existence and whether a wildcard
// is below it.
func (ix *Index) refresh(name string, zi int, sets []rrset, steer []steerTarget, setData bool) {
	old, had := ix.view(name)
	hasData := len(sets) > 0
	if !setData && had {
		hasData = !old.empty()
	}
	exists := hasData || ix.slot(name).children > 0 || name == ix.zones[zi]
	switch {
	case exists && !setData && had:
		// The same data: only the wildcard flag may change.
		wildcard := ix.hasWildcard(name)
		if old.wildcard() == wildcard {
			return
		}
		ix.scratch = append(ix.scratch[:0], old[:old.size()]...)
		view(ix.scratch).setWildcard(wildcard)
		ix.setPacked(name, ix.scratch)
	case exists:
		ix.scratch = appendNode(ix.scratch[:0], &node{name: name, sets: sets, steer: steer, wildcard: ix.hasWildcard(name)})
		if had && bytes.Equal(old[:old.size()], ix.scratch) {
			return
		}
		ix.setPacked(name, ix.scratch)
	case had:
		ix.deleteNode(name)
	default:
		return
	}
	ix.changed[zi] = true
	// The parent of a wildcard knows whether it exists.
	if isWildcard(name) {
		ix.refresh(name[2:], zi, nil, nil, false)
	}
}

// hasWildcard reports whether the writer holds "*.<name>".
func (ix *Index) hasWildcard(name string) bool {
	ix.wildName = append(append(ix.wildName[:0], "*."...), name...)
	if v, ok := ix.next[string(ix.wildName)]; ok {
		return v != nil
	}
	if ix.hasBuilding {
		_, ok := ix.building.getBytes(ix.wildName)
		return ok
	}
	_, ok := ix.snap.Load().names.getBytes(ix.wildName)
	return ok
}

// node returns the writer's node of name: the one changed since the last
// publish, else the published one; nil when the name does not exist.
func (ix *Index) node(name string) *node {
	if v, ok := ix.view(name); ok {
		return v.node()
	}
	return nil
}

// view returns the packed node of name as node does.
func (ix *Index) view(name string) (view, bool) {
	if v, ok := ix.next[name]; ok {
		return v, v != nil
	}
	if ix.hasBuilding {
		return ix.building.get(name)
	}
	return ix.snap.Load().names.get(name)
}

// exists reports whether the writer holds name.
func (ix *Index) exists(name string) bool {
	_, ok := ix.view(name)
	return ok
}

func (ix *Index) setNode(n *node) {
	ix.scratch = appendNode(ix.scratch[:0], n)
	ix.setPacked(n.name, ix.scratch)
}

// setPacked sets the node of name to a copy of the packed node b.
func (ix *Index) setPacked(name string, b []byte) {
	ix.countCut(name, -1)
	ix.setNext(name, view(bytes.Clone(b)))
	ix.countCut(name, +1)
}

func (ix *Index) deleteNode(name string) {
	ix.countCut(name, -1)
	ix.setNext(name, nil)
}

// setNext notes the next node of name, packed, or nil when it goes. Until
// the first Flush (or Seal) nothing is published: the first publish builds
// the table anew from every name instead of copying leaves one name at a
// time, and every syncBatch names the changes are folded into a table that
// waits for it, so that the initial sync never holds a million names in a
// map. Changed nodes wait packed, not as objects of pointers.
func (ix *Index) setNext(name string, v view) {
	ix.next[name] = v
	if ix.live {
		return
	}
	ix.full = true
	if len(ix.next) >= syncBatch {
		if ix.hasBuilding {
			ix.building = ix.building.with(ix.next)
		} else {
			old := ix.snap.Load()
			ix.building, ix.hasBuilding = old.names.overlaid(ix.next), true
		}
		ix.next = map[string]view{}
	}
}

// syncBatch is the number of changed names the initial sync folds into the
// waiting table at once (see setNext).
var syncBatch = 1 << 16

// countCut keeps count of the delegations (NS records below an apex),
// adding delta when the writer's node of name is one.
func (ix *Index) countCut(name string, delta int) {
	if v, ok := ix.view(name); ok && v.has(dns.TypeNS) && !slices.Contains(ix.zones, name) {
		ix.cuts += delta
	}
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
func (ix *Index) forAncestors(name, zone string, f func(string)) {
	for off, end := dns.NextLabel(name, 0); !end; off, end = dns.NextLabel(name, off) {
		a := name[off:]
		if len(a) <= len(zone) {
			return
		}
		f(a)
	}
}

func (ix *Index) reportConflict(name, conflict string, contributors []contribution) {
	if conflict == "" {
		delete(ix.conflicts, name)
		return
	}
	if ix.conflicts[name] == conflict {
		return
	}
	ix.conflicts[name] = conflict
	if ix.listener != nil {
		ix.listener.Conflict(name, conflict)
	}
	if cl, ok := ix.listener.(ConflictListener); ok {
		c := Conflict{Name: name, Message: conflict}
		for _, ct := range contributors {
			c.Keys = append(c.Keys, ct.key)
			c.Namespaces = append(c.Namespaces, ct.claim.Namespace)
		}
		cl.Conflicted(c)
	}
}

func isWildcard(name string) bool {
	return len(name) > 2 && name[0] == '*' && name[1] == '.'
}
