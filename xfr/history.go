package xfr

import (
	"slices"
	"sync"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// The history of what zone transfers served, for incremental IXFR (RFC 1995).
//
// A zone's content can change without its serial changing: a second change
// within one second is published at once and gets its serial on the next
// second. Transfers therefore serve, under a serial, the content of the
// snapshot in which the serial was assigned (Assigned), or, without one, the
// content first served under it (record), so that a serial always stands for
// one content, and for the same content on replicas that saw the same
// changes before it. The
// history keeps each content a transfer served (a version, with its serial)
// and the difference from the version before; IXFR from serial X is
// incremental when exactly one version kept had serial X, and otherwise falls
// back to the whole zone, as RFC 1995 §4 allows.

const (
	// maxVersions bounds the versions kept per zone; the oldest go first.
	maxVersions = 128
	// minKept: the differences kept may hold this many records even when
	// the zone is smaller (RFC 1995 §5 purges past the zone's size).
	minKept = 256
)

// Histories holds the history of each zone of a block. The zero value is
// ready to use.
type Histories struct {
	mu    sync.Mutex
	zones map[string]*history
}

// version is one content served: its SOA, and the records deleted and
// added since the version before it (none for the first).
type version struct {
	soa      dns.RR
	del, add []dns.RR
}

func (v version) serial() uint32 { return v.soa.(*dns.SOA).Serial }

// history is one zone's. last is the content of the newest version (keyed
// by presentation form), snap the snapshot it was read from.
type history struct {
	mu       sync.Mutex
	versions []version
	kept     int // records in the differences of versions
	last     map[string]dns.RR
	body     []dns.RR // the records of last, in transfer order
	snap     *index.Snapshot
	// pin is the snapshot in which the current serial was assigned
	// (Assigned), the content transfers serve under it.
	pin *index.Snapshot
	// purged is the serial of the newest version dropped (or served before
	// the serial went back); hasPurged says whether one was. No IXFR starts
	// at or before it: a version kept may share that serial.
	purged    uint32
	hasPurged bool
}

// zone returns the history of zone, made on first use.
func (h *Histories) zone(zone string) *history {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.zones == nil {
		h.zones = map[string]*history{}
	}
	z := h.zones[zone]
	if z == nil {
		z = &history{}
		h.zones[zone] = z
	}
	return z
}

// zoneBody returns what a transfer of zone zi carries besides the SOA: the
// apex NS RRset, then the other records.
func zoneBody(s *index.Snapshot, zi int) []dns.RR {
	ns, records := s.NS(zi), s.Records(zi)
	body := make([]dns.RR, 0, len(ns)+len(records))
	return append(append(body, ns...), records...)
}

// record notes that zone zi of s is about to be served, and returns the body
// to serve: the content first served under the serial of s. A change within
// the second of the serial is served by transfers once its own serial comes
// (at most a second later, with its NOTIFY), so that one serial is always
// one content, and every IXFR from a serial served can be incremental.
func (z *history) record(s *index.Snapshot, zi int) []dns.RR {
	if n := len(z.versions); s == z.snap || n > 0 && z.versions[n-1].serial() == s.Serial(zi) {
		return z.body
	}
	body := zoneBody(s, zi)
	soa := s.SOA(zi)[0]
	cur := make(map[string]dns.RR, len(body))
	for _, rr := range body {
		cur[rr.String()] = rr
	}
	n := len(z.versions)
	switch {
	case n > 0 && index.SerialLess(s.Serial(zi), z.versions[n-1].serial()):
		// The serial went back (from a copy on disk to the informers'
		// index): start again, and never vouch for a serial up to the
		// newest served before, whose content may come again under it.
		z.purged, z.hasPurged = z.versions[n-1].serial(), true
		z.versions, z.kept = []version{{soa: soa}}, 0
	case n == 0:
		z.versions = append(z.versions, version{soa: soa})
	default:
		v := version{soa: soa}
		for k, rr := range z.last {
			if _, ok := cur[k]; !ok {
				v.del = append(v.del, rr)
			}
		}
		for k, rr := range cur {
			if _, ok := z.last[k]; !ok {
				v.add = append(v.add, rr)
			}
		}
		z.versions = append(z.versions, v)
		z.kept += len(v.del) + len(v.add)
		z.purge(len(body))
	}
	z.last, z.body, z.snap = cur, body, s
	return body
}

// purge drops the oldest versions past maxVersions or while the
// differences kept hold more records than the zone (and minKept).
func (z *history) purge(zoneLen int) {
	drop := 0
	for len(z.versions)-drop > 1 && (len(z.versions)-drop > maxVersions || z.kept > max(zoneLen, minKept)) {
		drop++
		// The differences of the new first version lead from a version
		// no longer kept: they are no use any more.
		z.kept -= len(z.versions[drop].del) + len(z.versions[drop].add)
		z.purged, z.hasPurged = z.versions[drop-1].serial(), true
	}
	if drop > 0 {
		z.versions = append([]version(nil), z.versions[drop:]...)
		z.versions[0].del, z.versions[0].add = nil, nil
	}
}

// since returns the records deleted and added from the version of serial to
// the newest one, and the SOA of that version; ok is false unless exactly one
// version kept (and none dropped) had serial.
func (z *history) since(serial uint32) (soa dns.RR, del, add []dns.RR, ok bool) {
	from := -1
	for i, v := range z.versions {
		if v.serial() != serial {
			continue
		}
		if from >= 0 {
			return nil, nil, nil, false
		}
		from = i
	}
	if from < 0 || z.hasPurged && !index.SerialLess(z.purged, serial) {
		return nil, nil, nil, false
	}
	// Condense the differences (RFC 1995 §6): a record added and then
	// deleted is neither, one deleted and then added again is neither.
	dels, adds := map[string]dns.RR{}, map[string]dns.RR{}
	for _, v := range z.versions[from+1:] {
		condense(v.del, dels, adds)
		condense(v.add, adds, dels)
	}
	return z.versions[from].soa, sortedValues(dels), sortedValues(adds), true
}

// condense notes the records rrs in changes, unless each cancels a change
// of the other direction in undone.
func condense(rrs []dns.RR, changes, undone map[string]dns.RR) {
	for _, rr := range rrs {
		k := rr.String()
		if _, ok := undone[k]; ok {
			delete(undone, k)
		} else {
			changes[k] = rr
		}
	}
}

// sortedValues returns the records of m ordered by presentation form, so a transfer is reproducible.
func sortedValues(m map[string]dns.RR) []dns.RR {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]dns.RR, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// Assigned notes s, the snapshot in which zone zi got its current serial
// (the plugin calls it from the index's SerialChanged): transfers under
// that serial serve s's content, whenever they come, as every other replica
// that saw the same changes does. A change within the second of the serial
// is in later snapshots under the same serial; serving it under that serial
// would make the serial stand for other content on each replica, depending
// on when each first served it.
func (h *Histories) Assigned(zone string, zi int, s *index.Snapshot) {
	z := h.zone(zone)
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.pin == nil || z.pin.Serial(zi) != s.Serial(zi) {
		z.pin = s
	}
}

// Adopt starts the history of zone with a copy of its history in from, the
// Histories of the instance this one replaces (a Corefile reload), unless
// this one has begun one: an IXFR from a serial that instance served stays
// incremental.
func (h *Histories) Adopt(zone string, from *Histories) {
	if from == nil || from == h {
		return
	}
	from.mu.Lock()
	src := from.zones[zone]
	from.mu.Unlock()
	if src == nil {
		return
	}
	src.mu.Lock()
	// Not its snapshots: they would keep that instance's index in memory.
	cp := &history{
		versions: slices.Clone(src.versions), kept: src.kept, last: src.last, body: src.body,
		purged: src.purged, hasPurged: src.hasPurged,
	}
	src.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.zones == nil {
		h.zones = map[string]*history{}
	}
	if h.zones[zone] == nil {
		h.zones[zone] = cp
	}
}
