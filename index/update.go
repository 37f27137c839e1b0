package index

import (
	"bytes"
	"slices"

	"github.com/miekg/dns"
)

// Update replaces the records that the object key publishes as the plugin's
// own (the zero Claim). See UpdateClaim.
func (ix *Index) Update(key string, rrs []dns.RR) { ix.UpdateClaim(key, Claim{}, rrs) }

// UpdateClaim replaces the records that the object key publishes, claimed by
// claim. A nil or empty rrs removes the object. Records outside every zone are
// ignored. The index keeps a packed copy of the records; it may reorder them
// and rewrite owner names to their canonical form, so the caller must not
// use them afterwards.
func (ix *Index) UpdateClaim(key string, claim Claim, rrs []dns.RR) {
	rrs = inZones(ix.zones, rrs)
	sortRRs(rrs)

	wire := packRecords(rrs)

	ix.mu.Lock()
	id, prev, had := ix.objects.find(key)
	if ix.closed || !had && len(wire) == 0 || had && bytes.Equal(prev, wire) && ix.objects.claim(id) == claim {
		ix.mu.Unlock()
		return
	}
	var refused []Rejection
	if had && len(wire) > 0 && ix.objects.claim(id).Namespace != claim.Namespace {
		// Another tenant's now: out of the one's, then into the other's.
		refused = ix.update(key, id, prev, true, Claim{}, nil, nil)
		had = false
	}
	refused = append(refused, ix.update(key, id, prev, had, claim, rrs, wire)...)
	notify := ix.publish(false)
	ix.mu.Unlock()
	ix.tell(refused)
	ix.announce(notify)
}

// update applies a change of the object key (held at id with the records
// prev when had) to wire, the packed rrs, claimed by claim, which is of
// the same tenant when had; nil rrs remove it. It returns the objects the
// quota newly refuses, to tell when live. ix.mu is held.
func (ix *Index) update(key string, id objectID, prev []byte, had bool, claim Claim, rrs []dns.RR, wire []byte) []Rejection {
	wasIn := had && ix.quota.admitted(id)
	var old []string
	if wasIn {
		forWireNames(prev, func(name string) { old = append(old, name) })
	}
	var oldClaim Claim
	if had && ix.quota.on() {
		oldClaim = ix.objects.claim(id)
	}
	if len(wire) > 0 {
		id = ix.objects.store(key, id, had, claim, wire)
	} else {
		claim = ix.objects.claim(id) // of the tenant it leaves
	}
	var flips []flip
	if ix.quota.on() {
		was := 0
		if had {
			was = countWire(prev)
		}
		flips = ix.quota.change(id, key, oldClaim, claim, was, countWire(wire), &ix.objects, ix.nodes.live)
	}
	isIn := len(wire) > 0 && ix.quota.admitted(id)
	in := rrs
	if !isIn {
		in = nil
	}
	// Rebuild in a fixed order so that logs and conflict choices are reproducible.
	names := ownerNames(old, in)
	names = append(names, ix.flipNames(flips)...)
	ix.rebuildAround(names, len(flips) > 0, func() {
		for _, name := range old {
			ix.owners.remove(name, id, key, &ix.objects)
		}
		if len(wire) == 0 {
			ix.objects.remove(id)
		}
		forOwnerNames(in, func(name string) { ix.owners.add(name, id, key, &ix.objects) })
		ix.flipOwners(flips)
		ix.updating = updating{id, rrs}
	})
	ix.updating = updating{}
	if !ix.nodes.live {
		return nil // the first Flush tells what is refused then
	}
	var refused []Rejection
	if len(wire) > 0 && !isIn && (wasIn || !had) {
		refused = append(refused, ix.refusal(id))
	}
	for _, f := range flips {
		if !f.admitted {
			refused = append(refused, ix.refusal(f.id))
		}
	}
	return refused
}

// rebuildAround rebuilds names (sorted unless unsorted) around change,
// which changes who publishes there: what the policy admitted at each
// (see below.go) is taken before it runs.
func (ix *Index) rebuildAround(names []string, unsorted bool, change func()) {
	if unsorted {
		slices.Sort(names)
		names = slices.Compact(names)
	}
	var was [][]string
	if ix.owners.below.on {
		was = make([][]string, len(names))
		for i, name := range names {
			was[i] = ix.admittedAt(name)
		}
	}
	change()
	for i, name := range names {
		var w []string
		if was != nil {
			w = was[i]
		}
		ix.rebuild(name, w)
	}
}

// ownerNames returns the distinct names of old and the owner names of rrs,
// in order.
func ownerNames(old []string, rrs []dns.RR) []string {
	names := slices.Clip(old)
	forOwnerNames(rrs, func(name string) { names = append(names, name) })
	slices.Sort(names)
	return slices.Compact(names)
}

// rebuild recomputes the node of name from the objects publishing there;
// was is what admittedAt said before they changed.
func (ix *Index) rebuild(name string, was []string) {
	zi := ZoneOf(ix.zones, name)
	if zi < 0 {
		return
	}
	cs := ix.owners.contributions(name, &ix.objects, ix.updating)
	admitted := ix.rules.admit(name, zi, cs, ix.nodes.live)
	if ix.owners.below.on {
		var buf [4]string
		is := buf[:0]
		for _, c := range admitted {
			is = append(is, c.claim.Namespace)
		}
		ix.owners.below.change(name, was, is)
	}
	answer := ix.rules.chooseHealthy(name, zi, admitted)
	sets, conflict := mergeSets(name, answer, name == ix.zones[zi])
	ix.rules.reportConflict(name, conflict, answer)
	ix.nodes.set(name, zi, sets, buildSteer(answer, sets))
	ix.recheckNameservers(name, zi)
}

// rebuildWhere rebuilds the names of the objects that match, when change
// (run under the lock) reports that their names may change, and publishes.
func (ix *Index) rebuildWhere(change func() bool, match func(id objectID) bool) {
	ix.mu.Lock()
	if ix.closed || !change() {
		ix.mu.Unlock()
		return
	}
	var names []string
	ix.objects.each(func(id objectID, wire []byte) {
		if match(id) {
			forWireNames(wire, func(name string) { names = append(names, name) })
		}
	})
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		ix.rebuild(name, ix.admittedAt(name))
	}
	notify := ix.publish(false)
	ix.mu.Unlock()
	ix.announce(notify)
}
