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

	old := ix.node(name)
	hadData := old != nil && !old.empty()
	if old != nil && equalSets(old.sets, sets) && equalTargets(old.steer, steer) {
		return
	}
	if hadData != (len(sets) > 0) {
		delta := 1
		if hadData {
			delta = -1
		}
		ix.forAncestors(name, ix.zones[zi], func(a string) {
			ix.children[a] += delta
			if ix.children[a] <= 0 {
				delete(ix.children, a)
			}
		})
		// Ancestors may have appeared as, or stopped being, empty non-terminals.
		ix.forAncestors(name, ix.zones[zi], func(a string) { ix.refresh(a, zi, nil, nil, false) })
	}
	ix.refresh(name, zi, sets, steer, true)
}

// refresh replaces the node of name. With setData false it keeps the node's
// current data and only re-evaluates its existence and whether a wildcard
// is below it.
func (ix *Index) refresh(name string, zi int, sets []rrset, steer []steerTarget, setData bool) {
	old := ix.node(name)
	if !setData && old != nil {
		sets, steer = old.sets, old.steer
	}
	exists := len(sets) > 0 || ix.children[name] > 0 || name == ix.zones[zi]
	var n *node
	if exists {
		n = &node{name: name, sets: sets, steer: steer, wildcard: ix.exists("*." + name)}
		if old != nil && old.wildcard == n.wildcard && equalSets(old.sets, n.sets) && equalTargets(old.steer, n.steer) {
			return
		}
		ix.setNode(n)
	} else {
		if old == nil {
			return
		}
		ix.deleteNode(name)
	}
	ix.changed[zi] = true
	// The parent of a wildcard knows whether it exists.
	if isWildcard(name) {
		ix.refresh(name[2:], zi, nil, nil, false)
	}
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
	ix.countCut(n.name, -1)
	ix.scratch = appendNode(ix.scratch[:0], n)
	ix.setNext(n.name, view(bytes.Clone(ix.scratch)))
	ix.countCut(n.name, +1)
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
