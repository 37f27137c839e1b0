package acmeupdate

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// Change is what one edit really did to the store at one owner name: the
// values it added and removed (a value it did not hold is never "removed"),
// and the TTL of the added values.
type Change struct {
	Added, Removed []string
	TTL            uint32
}

// Empty reports whether the store is as it was.
func (c Change) Empty() bool { return len(c.Added) == 0 && len(c.Removed) == 0 }

// changeOf returns the change from the values before to those after.
func changeOf(before, after []string, ttl uint32) Change {
	c := Change{TTL: ttl}
	for _, v := range after {
		if !slices.Contains(before, v) {
			c.Added = append(c.Added, v)
		}
	}
	for _, v := range before {
		if !slices.Contains(after, v) {
			c.Removed = append(c.Removed, v)
		}
	}
	return c
}

// Overlay holds, for the names this replica updated, the values it added
// that its index does not show yet, so that the challenge is answered at
// once (see the package doc). An entry is this replica's additions alone,
// put on top of whatever the index shows: the values other replicas wrote
// appear as soon as this replica's index has them, and a value the index
// shows is never hidden, whoever wrote or deleted it last (a delete is
// answered once the index has it: a value deleted here and added again
// through another replica would otherwise look gone until the entry ends).
//
// The query path reads it without a lock: the entries are an immutable map
// behind an atomic pointer, replaced whole by each update (rate-limited);
// an entry steps aside once the index has shown it, through a flag of its own.
type Overlay struct {
	mu      sync.Mutex // writers: record
	entries atomic.Pointer[map[string]*overlayEntry]
	hold    time.Duration
}

// overlayEntry is what this replica added at one name and its index did not
// show yet: the values, their TTL, and until when they are answered. Only
// shown changes once the entry is published.
type overlayEntry struct {
	added []string
	ttl   uint32
	until time.Time
	shown atomic.Bool // the index has shown every value: the entry steps aside
}

// newOverlay returns an overlay whose entries last at most hold.
func newOverlay(hold time.Duration) *Overlay {
	o := &Overlay{hold: hold}
	o.entries.Store(&map[string]*overlayEntry{})
	return o
}

// record adds a change the store made at name; an empty one changes nothing.
// A value the change removed is no longer added; a removal itself is not
// recorded (the index has the last word on what is there).
func (o *Overlay) record(name string, c Change, now time.Time) {
	if c.Empty() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	old := *o.entries.Load()
	m := make(map[string]*overlayEntry, len(old)+1)
	for n, e := range old {
		if !now.After(e.until) && !e.shown.Load() {
			m[n] = e
		}
	}
	e := &overlayEntry{until: now.Add(o.hold)}
	if prev, ok := m[name]; ok {
		e.added, e.ttl = slices.Clone(prev.added), prev.ttl
	}
	for _, v := range c.Added {
		if !slices.Contains(e.added, v) {
			e.added = append(e.added, v)
		}
	}
	e.added = slices.DeleteFunc(e.added, func(a string) bool { return slices.Contains(c.Removed, a) })
	if len(c.Added) > 0 {
		e.ttl = c.TTL
	}
	if len(e.added) == 0 {
		delete(m, name)
	} else {
		m[name] = e
	}
	o.entries.Store(&m)
}

// entry returns the live entry at name, nil when there is none; no lock.
func (o *Overlay) entry(name string, now time.Time) *overlayEntry {
	e := (*o.entries.Load())[name]
	if e == nil || now.After(e.until) || e.shown.Load() {
		return nil
	}
	return e
}

// shownIn reports whether values (the index's) show every value of e.
func (e *overlayEntry) shownIn(values []string) bool {
	for _, v := range e.added {
		if !slices.Contains(values, v) {
			return false
		}
	}
	return true
}

// apply returns the TXT RRset at name: the index's records with e's values
// added, all with the smallest TTL among them.
func (e *overlayEntry) apply(name string, zone []dns.RR) []dns.RR {
	values := txtValues(zone)
	ttl := e.ttl
	for _, rr := range zone {
		if rr.Header().Rrtype == dns.TypeTXT && rr.Header().Ttl < ttl {
			ttl = rr.Header().Ttl
		}
	}
	for _, v := range e.added {
		if !slices.Contains(values, v) {
			values = append(values, v)
		}
	}
	return txtRecords(name, values, ttl)
}

// Answer returns the TXT records to answer for qname (canonical) when the
// overlay has values there that the zone does not show yet; zone holds the
// TXT records the index answers there. Once the zone shows them all, the
// entry steps aside for good. It takes no lock.
func (o *Overlay) Answer(qname string, zone []dns.RR, now time.Time) ([]dns.RR, bool) {
	e := o.entry(qname, now)
	if e == nil {
		return nil, false
	}
	if e.shownIn(txtValues(zone)) {
		e.shown.Store(true)
		return nil, false
	}
	return e.apply(qname, zone), true
}

// txtValues returns the values of the TXT records among rrs.
func txtValues(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		if t, ok := rr.(*dns.TXT); ok {
			v := ""
			for _, s := range t.Txt {
				v += s
			}
			out = append(out, v)
		}
	}
	return out
}

// txtRecords returns one TXT record per value (values are printable ASCII
// without escapes, and at most 255 bytes; see txtValue).
func txtRecords(name string, values []string, ttl uint32) []dns.RR {
	out := make([]dns.RR, 0, len(values))
	for _, v := range values {
		out = append(out, &dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: ttl}, Txt: []string{v}})
	}
	return out
}
