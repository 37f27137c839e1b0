package index

import (
	"time"

	"github.com/miekg/dns"
)

// A zone's serial is the Unix time of its last change: at most one a
// second, announced to the Listener (for NOTIFY) after each publish.

// publishLocked stores a new snapshot holding the changed names and serials.
// It returns the zones whose serial changed.
//
// The serial of a zone is the Unix time of its last change. A second change
// within the same second is published at once and its new serial follows on
// the next second (see scheduleTick), so the serial never runs ahead of the
// clock and still increases across restarts. With force, every changed zone
// gets a new serial now (max(serial+1, time)).
func (ix *Index) publishLocked(force bool) []int {
	if !ix.live {
		return nil
	}
	old := ix.snap.Load()
	s := ix.nextSnapshotLocked()
	var notify []int
	now := uint32(ix.now().Unix())
	for zi, changed := range ix.changed {
		if !changed {
			continue
		}
		ix.changed[zi] = false
		switch {
		case SerialLess(ix.serials[zi], now):
			ix.serials[zi] = now
		case force || ix.restored[zi]:
			// A restored serial may be the clock's time or later: the
			// zone's new content must never have it.
			ix.serials[zi]++
		default:
			ix.pending[zi] = true
			ix.scheduleTick()
			continue
		}
		ix.pending[zi], ix.restored[zi] = false, false
		notify = append(notify, zi)
	}
	if len(notify) > 0 {
		s.zones = make([]zoneState, len(old.zones))
		copy(s.zones, old.zones)
		for _, zi := range notify {
			z := &s.zones[zi]
			z.serial, z.soa = ix.serials[zi], []dns.RR{ix.newSOA(ix.zones[zi], ix.serials[zi])}
		}
	}
	ix.snap.Store(s)
	return notify
}

// nextSnapshotLocked returns the published snapshot with the names changed
// in the writer's copy.
func (ix *Index) nextSnapshotLocked() *Snapshot {
	old := ix.snap.Load()
	s := &Snapshot{names: old.names, zoneNames: old.zoneNames, parents: old.parents, zones: old.zones, cuts: ix.cuts > 0}
	switch {
	case ix.hasBuilding:
		s.names = ix.building.with(ix.next)
	case ix.full:
		s.names = old.names.overlaid(ix.next)
	case len(ix.next) > 0:
		s.names = old.names.with(ix.next)
	}
	ix.full, ix.building, ix.hasBuilding = false, table{}, false
	if len(ix.next) > 0 {
		// A new map, not a cleared one: after the initial sync this one
		// holds every name, and a map never shrinks.
		ix.next = map[string]view{}
	}
	return s
}

// scheduleTick arranges for pending serials to be bumped on the next second.
func (ix *Index) scheduleTick() {
	if ix.tick != nil {
		return
	}
	now := ix.now()
	wait := now.Truncate(time.Second).Add(time.Second).Sub(now)
	ix.tick = ix.afterFunc(wait, func() {
		ix.mu.Lock()
		ix.tick = nil
		for zi, p := range ix.pending {
			if p {
				ix.changed[zi] = true
			}
		}
		notify := ix.publishLocked(true)
		ix.mu.Unlock()
		ix.announce(notify)
	})
}

// announce tells the listener of the new serials of zones. It runs after ix.mu is released, so it
// must not read the writer's state (ix.serials): it reports the serials of
// the current snapshot instead. Announcements are serialized, and each reads
// the snapshot only once it holds announceMu, so the last serial announced
// for a zone is always its current one even when writers race here.
func (ix *Index) announce(zones []int) {
	if ix.listener == nil || len(zones) == 0 {
		return
	}
	ix.announceMu.Lock()
	defer ix.announceMu.Unlock()
	s := ix.snap.Load()
	for _, zi := range zones {
		ix.listener.SerialChanged(ix.zones[zi], s.zones[zi].serial)
	}
}

// SerialLess reports a < b in RFC 1982 serial number arithmetic.
func SerialLess(a, b uint32) bool {
	return a != b && int32(b-a) > 0
}
