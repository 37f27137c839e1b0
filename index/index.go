package index

import (
	"bytes"
	"slices"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Listener hears what an index does. SerialChanged (and a
// RejectionListener's Rejected) are called after the index's lock is
// released; Conflict (and a ConflictListener's Conflicted) are called while
// the update that caused them holds it, so they must return quickly. None may
// call back into the index.
type Listener interface {
	// SerialChanged is called after the serial of zone changed, one call at
	// a time, the last one for a zone with its current serial.
	SerialChanged(zone string, serial uint32)
	// Conflict is called when the objects publishing at name disagree, with
	// what the merge dropped or united (see mergeSets); once per change.
	Conflict(name, message string)
}

// timer is a timer that the index armed.
type timer interface {
	// Stop prevents the timer from firing; see time.Timer.Stop.
	Stop() bool
}

// Config is what an index is made from.
type Config struct {
	// Zones are lower-cased and fully qualified.
	Zones []string
	// SOA makes the SOA record of a zone for a serial.
	SOA func(zone string, serial uint32) *dns.SOA
	// NS makes the apex NS RRset of a zone.
	NS func(zone string) []dns.RR
	// Listener, when set, hears of serial changes and merge conflicts.
	Listener Listener
	// Now is the clock of the serials; time.Now when nil.
	Now func() time.Time
	// afterFunc (for tests) arms the timer that publishes the serial of changes made
	// within a second that already has one; time.AfterFunc when nil.
	afterFunc func(d time.Duration, f func()) timer
	// Policy decides which namespaces may publish at a name (Union when zero).
	Policy Policy
	// Domains are the domains delegated to each namespace by configuration
	// (lower-cased, fully qualified), for the Delegated policy.
	Domains map[string][]string
	// Quota, when set, returns the records a tenant (a claim's namespace)
	// may publish, 0 for any number; an object that does not fit in what
	// the tenant's older objects leave publishes nothing (quota.go).
	Quota func(tenant string) int
	// Shared, when set, is shared with the indexes of the other views of
	// the cluster (see Shared); an index of its own when nil.
	Shared *Shared
	// Serials are the serials the zones start at, in the order of Zones,
	// instead of the clock's time: those of a copy of the zones on disk.
	// A zero or missing one starts at the clock's time. The first Flush
	// moves a zone past the serial it started at, even within its second.
	Serials []uint32
	// Previous, when set, is asked at the first Flush about the index this
	// one replaces (a Corefile reload), for each zone zi: the serial the
	// zone has there (0: none), and whether s, this index's first snapshot,
	// holds the same content for the zone (its serial aside). A zone with
	// the same content keeps that serial: nothing moves, nothing is
	// announced. Any other zone gets a serial past it.
	Previous func(zi int, s *Snapshot) (serial uint32, same bool)
}

// Index holds the records that objects publish and hands immutable snapshots
// of them to the query path.
//
// Every object (keyed, for example, "Kind/namespace/name") contributes a list
// of records. Several objects may contribute to one owner name; the index
// merges them (see mergeSets) and keeps each object's contribution apart, so
// that deleting one object removes exactly its data. Writers serialize on a
// mutex; readers load the current snapshot atomically.
//
// An Index composes one type per job (see doc.go) and runs the pipeline
// from an object's records to its names' nodes (rebuild).
type Index struct {
	zones    []string // lower-cased and fully qualified, as configured
	sh       *Shared
	given    bool // sh is Config.Shared, not the index's own
	listener Listener
	previous func(zi int, s *Snapshot) (uint32, bool) // Config.Previous, until the first Flush

	mu       sync.Mutex // the writer's: every job below is under it
	closed   bool
	objects  objects  // objects.go
	owners   owners   // owners.go, below.go
	rules    rules    // policy.go, health.go
	quota    quota    // quota.go
	nodes    nodes    // nodes.go, into tables.go
	serials  serials  // serial.go
	updating updating // the object UpdateClaim rebuilds the names of
}

// New returns an empty index. The serial of every zone starts at the current
// time (Unix seconds), so it increases across restarts.
func New(cfg Config) *Index {
	ix := &Index{zones: cfg.Zones, sh: cfg.Shared, listener: cfg.Listener, previous: cfg.Previous}
	if ix.given = ix.sh != nil; !ix.given {
		ix.sh = newShared()
	}
	ns := make([][]dns.RR, len(cfg.Zones))
	for i, z := range cfg.Zones {
		if cfg.NS != nil {
			ns[i] = cfg.NS(z)
		}
	}
	ix.objects = objects{sh: ix.sh}
	ix.owners = newOwners(ix.sh)
	ix.owners.below.on = cfg.Policy != Union
	ix.rules = newRules(cfg, ns)
	ix.quota = newQuota(cfg.Quota)
	ix.nodes = newNodes(cfg.Zones, ix.sh)
	ix.serials.init(cfg)
	ix.serials.onTick = ix.tick
	s := &Snapshot{zoneNames: cfg.Zones, parents: parentZones(cfg.Zones), zones: make([]zoneState, len(cfg.Zones))}
	for i, z := range cfg.Zones {
		ix.nodes.refresh(z, i, nil, nil, true)
		// A nested zone makes the names between its apex and its parent's
		// empty non-terminals of the parent, for good.
		if p := s.parents[i]; p >= 0 {
			forAncestors(z, cfg.Zones[p], func(a string) {
				ix.nodes.addChildren(a, 1)
				ix.nodes.refresh(a, p, nil, nil, true)
			})
		}
		serial := ix.serials.current[i]
		s.zones[i] = zoneState{name: z, serial: serial, soa: []dns.RR{cfg.SOA(z, serial)}, ns: ns[i][:len(ns[i]):len(ns[i])]}
	}
	ix.nodes.full = true
	ix.nodes.publish(s)
	clear(ix.nodes.changed)
	return ix
}

// Shared returns the Shared the index uses (Config.Shared, or its own).
func (ix *Index) Shared() *Shared { return ix.sh }

// Snapshot returns the current immutable view of the zones.
func (ix *Index) Snapshot() *Snapshot { return ix.nodes.pub.snap.Load() }

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

// Close stops the serial timer. An index given a Shared gives its objects
// and names back there: it takes no more updates; its last snapshot stays.
func (ix *Index) Close() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.nodes.live = false
	ix.serials.stop()
	if !ix.given || ix.closed {
		return
	}
	ix.closed = true
	names := ix.usedNames()
	ix.objects.release()
	ix.owners.release(names)
	ix.nodes.release(names)
}

// usedNames returns every name whose number the index may hold: the owner
// names of its objects, the names between them and their zones' apexes,
// and the apexes and the names between nested zones.
func (ix *Index) usedNames() []string {
	var names []string
	ix.objects.each(func(_ objectID, wire []byte) {
		forWireNames(wire, func(name string) {
			names = append(names, name)
			if zi := ZoneOf(ix.zones, name); zi >= 0 {
				forAncestors(name, ix.zones[zi], func(a string) { names = append(names, a) })
			}
		})
	})
	for _, z := range ix.zones {
		names = append(names, z)
		for _, p := range ix.zones {
			if z != p && dns.IsSubDomain(p, z) {
				forAncestors(z, p, func(a string) { names = append(names, a) })
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// inZones returns the records of rrs inside one of zones.
func inZones(zones []string, rrs []dns.RR) []dns.RR {
	if !slices.ContainsFunc(rrs, func(rr dns.RR) bool { return ZoneOf(zones, rr.Header().Name) < 0 }) {
		return rrs[:len(rrs):len(rrs)] // the common case: keep the caller's slice
	}
	out := rrs[:0:0]
	for _, rr := range rrs {
		if ZoneOf(zones, rr.Header().Name) >= 0 {
			out = append(out, rr)
		}
	}
	return out
}
