package index

import (
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
