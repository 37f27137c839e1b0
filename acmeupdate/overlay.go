package acmeupdate

import (
	"slices"
	"sync"
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

// Overlay holds, for the names this replica updated, the changes it made
// that its index does not show yet, so that the challenge is answered at
// once (see the package doc). An entry is this replica's change alone,
// applied on top of whatever the index shows: the values other replicas
// wrote appear as soon as this replica's index has them.
type Overlay struct {
	mu      sync.Mutex
	entries map[string]overlayEntry
	hold    time.Duration
}

// overlayEntry is the net change of this replica at one name: values added
// and values removed (disjoint), the TTL of the added ones, and when it goes.
type overlayEntry struct {
	added, removed []string
	ttl            uint32
	until          time.Time
}

// NewOverlay returns an overlay whose entries last at most hold.
func NewOverlay(hold time.Duration) *Overlay {
	return &Overlay{entries: map[string]overlayEntry{}, hold: hold}
}

// record adds a change the store made at name; an empty one changes nothing.
func (o *Overlay) record(name string, c Change, now time.Time) {
	if c.Empty() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for n, e := range o.entries {
		if now.After(e.until) {
			delete(o.entries, n)
		}
	}
	e, ok := o.entries[name]
	if !ok || now.After(e.until) {
		e = overlayEntry{}
	}
	e.added, e.removed = slices.Clone(e.added), slices.Clone(e.removed)
	for _, v := range c.Added {
		e.removed = slices.DeleteFunc(e.removed, func(r string) bool { return r == v })
		if !slices.Contains(e.added, v) {
			e.added = append(e.added, v)
		}
	}
	for _, v := range c.Removed {
		e.added = slices.DeleteFunc(e.added, func(a string) bool { return a == v })
		if !slices.Contains(e.removed, v) {
			e.removed = append(e.removed, v)
		}
	}
	if len(c.Added) > 0 {
		e.ttl = c.TTL
	}
	e.until = now.Add(o.hold)
	o.entries[name] = e
}

// entry returns the live entry at name.
func (o *Overlay) entry(name string, now time.Time) (overlayEntry, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.entries[name]
	if !ok || now.After(e.until) {
		return overlayEntry{}, false
	}
	return e, true
}

// shown reports whether values (the index's) already show every change of e.
func (e overlayEntry) shown(values []string) bool {
	for _, v := range e.added {
		if !slices.Contains(values, v) {
			return false
		}
	}
	for _, v := range e.removed {
		if slices.Contains(values, v) {
			return false
		}
	}
	return true
}

// apply returns the TXT RRset at name: the index's records with e's change
// on top, all with the smallest TTL among them.
func (e overlayEntry) apply(name string, zone []dns.RR) []dns.RR {
	values := slices.DeleteFunc(txtValues(zone), func(v string) bool { return slices.Contains(e.removed, v) })
	ttl, seen := e.ttl, len(e.added) > 0
	for _, rr := range zone {
		if rr.Header().Rrtype == dns.TypeTXT && (!seen || rr.Header().Ttl < ttl) {
			ttl, seen = rr.Header().Ttl, true
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
// overlay has a change there that the zone does not show yet; zone holds the
// TXT records the index answers there. The entry is dropped once the zone
// shows the change.
func (o *Overlay) Answer(qname string, zone []dns.RR, now time.Time) ([]dns.RR, bool) {
	e, ok := o.entry(qname, now)
	if !ok {
		return nil, false
	}
	if e.shown(txtValues(zone)) {
		o.mu.Lock()
		if cur, ok := o.entries[qname]; ok && slices.Equal(cur.added, e.added) && slices.Equal(cur.removed, e.removed) {
			delete(o.entries, qname)
		}
		o.mu.Unlock()
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
