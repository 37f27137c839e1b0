package index

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	// Shared, when set, is shared with the indexes of the other views of
	// the cluster (see Shared); an index of its own when nil.
	Shared *Shared
	// Serials are the serials the zones start at, in the order of Zones,
	// instead of the clock's time: those of a copy of the zones on disk.
	// A zero or missing one starts at the clock's time. The first Flush
	// moves a zone past the serial it started at, even within its second.
	Serials []uint32
}

// Index holds the records that objects publish and hands immutable snapshots
// of them to the query path.
//
// Every object (keyed, for example, "Kind/namespace/name") contributes a list
// of records. Several objects may contribute to one owner name; the index
// merges them (see mergeSets) and keeps each object's contribution apart, so
// that deleting one object removes exactly its data. Writers serialize on a
// mutex; readers load the current snapshot atomically.
type Index struct {
	zones []string // lower-cased and fully qualified, as configured

	newSOA     func(zone string, serial uint32) *dns.SOA
	listener   Listener
	announceMu sync.Mutex // serializes SerialChanged calls
	now        func() time.Time
	afterFunc  func(d time.Duration, f func()) timer

	mu      sync.Mutex
	live    bool                // publish on every change (set by Flush)
	sh      *Shared             // the numbers of objects and names, shared with other views
	given   bool                // sh is Config.Shared, not the index's own
	objs    pages[uint32]       // by object number: how the index holds it (see objects.go)
	own     pages[object]       // the objects whose records or claim are not the Shared's
	ownLen  uint32              // places made in own
	ownFree []uint32            // places of own no object uses, as objs values
	held    int                 // objects held
	names   pages[nameSlot]     // by name number: the object publishing there, the names below
	shared  map[string][]string // owner name → the objects publishing there, by key, when several
	// updating is the object UpdateClaim is rebuilding the names of, with
	// its records as given (see contribution).
	updating struct {
		id  objectID
		rrs []dns.RR
	}
	wildName []byte          // where hasWildcard writes "*.<name>"
	next     map[string]view // names changed since the last publish: their node, packed, or nil when gone
	scratch  []byte          // where setNode packs a node
	full     bool            // the next publish builds the table anew instead of copying leaves
	// building holds the names of the initial sync folded out of next in
	// batches (see setNext), when set; it is published at the first Flush.
	building    table
	hasBuilding bool
	changed     []bool            // zones changed since the last publish
	serials     []uint32          // current serial per zone
	pending     []bool            // zones whose data changed without a new serial
	restored    []bool            // zones whose serial came from Config.Serials, until it changes
	tick        timer             // bumps pending serials on the next second
	conflicts   map[string]string // owner name → last logged conflict
	cuts        int               // names below an apex with NS records

	// Health and priority (health.go).
	health     map[string]nameHealth // owner name → its health decision, when not the zero one
	zoneHealth []ZoneHealth          // per zone: the sums of health
	down       []string              // key prefixes of the objects counted unhealthy (SetDown)

	policy        Policy
	nsNames       []string               // the nameserver names, reserved to the plugin
	staticDomains map[string][]string    // namespace → domains from the configuration
	domains       map[string][]string    // namespace → domains set at run time
	rejections    map[string][]Rejection // owner name → claims rejected there

	snap atomic.Pointer[Snapshot]
}

// New returns an empty index. The serial of every zone starts at the current
// time (Unix seconds), so it increases across restarts.
func New(cfg Config) *Index {
	ix := &Index{
		zones:     cfg.Zones,
		newSOA:    cfg.SOA,
		listener:  cfg.Listener,
		now:       cfg.Now,
		afterFunc: cfg.afterFunc,
		sh:        cfg.Shared,
		shared:    map[string][]string{},
		next:      map[string]view{},
		changed:   make([]bool, len(cfg.Zones)),
		serials:   make([]uint32, len(cfg.Zones)),
		pending:   make([]bool, len(cfg.Zones)),
		restored:  make([]bool, len(cfg.Zones)),
		conflicts: map[string]string{},

		policy:        cfg.Policy,
		staticDomains: cfg.Domains,
		domains:       map[string][]string{},
		rejections:    map[string][]Rejection{},
	}
	if ix.given = ix.sh != nil; !ix.given {
		ix.sh = newShared()
	}
	ix.health, ix.zoneHealth = map[string]nameHealth{}, make([]ZoneHealth, len(cfg.Zones))
	if ix.now == nil {
		ix.now = time.Now
	}
	if ix.afterFunc == nil {
		ix.afterFunc = func(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }
	}
	s := &Snapshot{names: newTable(), zoneNames: cfg.Zones, parents: parentZones(cfg.Zones), zones: make([]zoneState, len(cfg.Zones))}
	ix.snap.Store(s) // empty: the writer reads the names it holds from it
	now := uint32(ix.now().Unix())
	for i, z := range cfg.Zones {
		ix.serials[i] = now
		if i < len(cfg.Serials) && cfg.Serials[i] != 0 {
			ix.serials[i], ix.restored[i] = cfg.Serials[i], true
		}
		ix.setNode(&node{name: z})
		// A nested zone makes the names between its apex and its parent's
		// empty non-terminals of the parent, for good.
		if p := s.parents[i]; p >= 0 {
			ix.forAncestors(z, cfg.Zones[p], func(a string) {
				ix.addChildren(a, 1)
				ix.setNode(&node{name: a})
			})
		}
		var ns []dns.RR
		if cfg.NS != nil {
			ns = cfg.NS(z)
		}
		for _, rr := range ns {
			if n, ok := rr.(*dns.NS); ok && !slices.Contains(ix.nsNames, strings.ToLower(n.Ns)) {
				ix.nsNames = append(ix.nsNames, strings.ToLower(n.Ns))
			}
		}
		s.zones[i] = zoneState{name: z, serial: ix.serials[i], soa: []dns.RR{cfg.SOA(z, ix.serials[i])}, ns: ns[:len(ns):len(ns)]}
	}
	s.names = s.names.overlaid(ix.next)
	ix.next, ix.full = map[string]view{}, false
	return ix
}

// Shared returns the Shared the index uses (Config.Shared, or its own).
func (ix *Index) Shared() *Shared { return ix.sh }

// Snapshot returns the current immutable view of the zones.
func (ix *Index) Snapshot() *Snapshot { return ix.snap.Load() }

// zoneOf returns the position of the most specific zone that contains name, or -1.
func (ix *Index) zoneOf(name string) int { return ZoneOf(ix.zones, name) }

// serialPending reports whether a serial waits for the next second (see publishLocked).
func (ix *Index) serialPending() bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.tick != nil
}

// Update replaces the records that the object key publishes as the plugin's
// own (the zero Claim). See UpdateClaim.
func (ix *Index) Update(key string, rrs []dns.RR) { ix.UpdateClaim(key, Claim{}, rrs) }

// UpdateClaim replaces the records that the object key publishes, claimed by
// claim. A nil or empty rrs removes the object. Records outside every zone are
// ignored. The index keeps a packed copy of the records; it may reorder them
// and rewrite owner names to their canonical form, so the caller must not
// use them afterwards.
func (ix *Index) UpdateClaim(key string, claim Claim, rrs []dns.RR) {
	rrs = ix.inZones(rrs)
	sortRRs(rrs)

	wire := packRecords(rrs)

	ix.mu.Lock()
	id, prev, had := ix.object(key)
	if !had && len(wire) == 0 || had && bytes.Equal(prev, wire) && ix.claimOf(id) == claim {
		ix.mu.Unlock()
		return
	}
	var old []string
	if had {
		forWireNames(prev, func(name string) {
			old = append(old, name)
			ix.removeOwner(name, id, key)
		})
	}
	if len(wire) == 0 {
		ix.deleteObject(id)
	} else {
		id = ix.storeObject(key, id, had, claim, wire)
		forOwnerNames(rrs, func(name string) { ix.addOwner(name, id, key) })
	}
	// Rebuild in a fixed order so that logs and conflict choices are reproducible.
	ix.updating.id, ix.updating.rrs = id, rrs
	for _, name := range ownerNames(old, rrs) {
		ix.rebuild(name)
	}
	ix.updating.rrs = nil
	notify := ix.publishLocked(false)
	ix.mu.Unlock()
	ix.announce(notify)
}

// ownerNames returns the distinct names of old and the owner names of rrs,
// in order.
func ownerNames(old []string, rrs []dns.RR) []string {
	names := slices.Clip(old)
	forOwnerNames(rrs, func(name string) { names = append(names, name) })
	slices.Sort(names)
	return slices.Compact(names)
}

// Flush publishes everything applied so far and from then on publishes every
// change at once. Until the first Flush, updates only build up the next
// snapshot, which makes the initial sync of many objects cheap.
//
// The first Flush gives every zone a new serial, announced once: after a
// start, secondaries learn the zones' new serials even where no data came.
func (ix *Index) Flush() {
	ix.mu.Lock()
	var rejected []Rejection
	if !ix.live {
		for zi := range ix.changed {
			ix.changed[zi] = true
		}
		// Rejections during the initial sync may be passing (a Namespace's
		// domains not yet seen): report only those that remain.
		rejected = ix.rejectionsLocked()
	}
	ix.live = true
	notify := ix.publishLocked(false)
	ix.mu.Unlock()
	if rl, ok := ix.listener.(RejectionListener); ok {
		for _, r := range rejected {
			rl.Rejected(r)
		}
	}
	ix.announce(notify)
}

// Seal publishes everything applied so far with the zones' current serials
// (see Config.Serials), without going live: later updates are not published.
// It makes a fixed view, such as a copy of the zones read from disk.
func (ix *Index) Seal() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.snap.Store(ix.nextSnapshotLocked())
	clear(ix.changed)
}

// Close stops the serial timer. An index given a Shared gives its objects
// and names back there: it takes no more updates; its last snapshot stays.
func (ix *Index) Close() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.live = false
	if ix.tick != nil {
		ix.tick.Stop()
		ix.tick = nil
	}
	if ix.given {
		ix.release()
	}
}

func (ix *Index) inZones(rrs []dns.RR) []dns.RR {
	if !slices.ContainsFunc(rrs, func(rr dns.RR) bool { return ix.zoneOf(rr.Header().Name) < 0 }) {
		return rrs[:len(rrs):len(rrs)] // the common case: keep the caller's slice
	}
	out := rrs[:0:0]
	for _, rr := range rrs {
		if ix.zoneOf(rr.Header().Name) >= 0 {
			out = append(out, rr)
		}
	}
	return out
}
