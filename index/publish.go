package index

import "slices"

// publish stores a new snapshot holding the changed names and serials (see
// serials.next) when the index is live, and returns the zones whose
// serial changed.
func (ix *Index) publish(force bool) []int {
	if !ix.nodes.live {
		return nil
	}
	old := ix.Snapshot()
	zones, notify := ix.serials.next(old.zones, ix.nodes.changed, force)
	ix.nodes.publish(&Snapshot{zoneNames: old.zoneNames, parents: old.parents, zones: zones})
	return notify
}

// tick publishes the serials that waited for the next second.
func (ix *Index) tick() {
	ix.mu.Lock()
	ix.serials.due(ix.nodes.changed)
	notify := ix.publish(true)
	ix.mu.Unlock()
	ix.announce(notify)
}

// announce tells the listener of the new serials of zones; it runs after
// ix.mu is released.
func (ix *Index) announce(zones []int) { ix.serials.announce(ix.listener, ix.Snapshot, zones) }

// Flush publishes everything applied so far and from then on publishes every
// change at once. Until the first Flush, updates only build up the next
// snapshot, which makes the initial sync of many objects cheap.
//
// The first Flush gives every zone a new serial, announced once: after a
// start, secondaries learn the zones' new serials even where no data came.
func (ix *Index) Flush() {
	ix.mu.Lock()
	var rejected []Rejection
	if !ix.nodes.live {
		for zi := range ix.nodes.changed {
			ix.nodes.changed[zi] = true
		}
		if ix.quota.on() {
			flips := ix.quota.settle(&ix.objects)
			ix.rebuildAround(ix.flipNames(flips), true, func() { ix.flipOwners(flips) })
		}
		// Rejections during the initial sync may be passing (a Namespace's
		// domains not yet seen): report only those that remain.
		rejected = append(ix.rules.rejectionsNow(), ix.refusalsNow()...)
	}
	ix.nodes.live = !ix.closed
	if prev := ix.previous; prev != nil && ix.nodes.live {
		ix.previous = nil
		ix.inherit(prev)
	}
	notify := ix.publish(false)
	ix.mu.Unlock()
	ix.tell(rejected)
	ix.announce(notify)
}

// inherit publishes what was applied so far under the zones' serials as
// they are (no one reads the index before its first Flush), asks prev about
// each zone, and gives it the serial prev says (Config.Previous): the next
// publish reissues the zones with the same content under their serial and
// gives the others a new one. ix.mu is held.
func (ix *Index) inherit(prev func(zi int, s *Snapshot) (uint32, bool)) {
	changed := slices.Clone(ix.nodes.changed)
	clear(ix.nodes.changed)
	ix.publish(false)
	s := ix.Snapshot()
	for zi := range changed {
		serial, same := prev(zi, s)
		if serial != 0 {
			ix.serials.inherit(zi, serial, same)
		}
		ix.nodes.changed[zi] = changed[zi] && !(serial != 0 && same)
	}
}

// Seal publishes everything applied so far with the zones' current serials
// (see Config.Serials), without going live: later updates are not published.
// It makes a fixed view, such as a copy of the zones read from disk.
func (ix *Index) Seal() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return
	}
	old := ix.Snapshot()
	ix.nodes.publish(&Snapshot{zoneNames: old.zoneNames, parents: old.parents, zones: old.zones})
	clear(ix.nodes.changed)
}
