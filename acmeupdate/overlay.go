package acmeupdate

import (
	"slices"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Overlay holds, for the names this replica updated, the TXT values they
// will have once the informer brings the DNSEndpoint back, so that the
// challenge is answered at once (see the package doc).
type Overlay struct {
	mu      sync.Mutex
	entries map[string]overlayEntry
	hold    time.Duration
}

type overlayEntry struct {
	values []string
	ttl    uint32
	until  time.Time
}

// NewOverlay returns an overlay whose entries last at most hold.
func NewOverlay(hold time.Duration) *Overlay {
	return &Overlay{entries: map[string]overlayEntry{}, hold: hold}
}

// set records the values name has after an update (none: the RRset is gone).
func (o *Overlay) set(name string, values []string, ttl uint32, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for n, e := range o.entries {
		if now.After(e.until) {
			delete(o.entries, n)
		}
	}
	o.entries[name] = overlayEntry{values: slices.Clone(values), ttl: ttl, until: now.Add(o.hold)}
}

// values returns the overlay's values at name, if it has an entry.
func (o *Overlay) values(name string, now time.Time) ([]string, uint32, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.entries[name]
	if !ok || now.After(e.until) {
		return nil, 0, false
	}
	return e.values, e.ttl, true
}

// Answer returns the TXT records to answer for qname (canonical) when the
// overlay has an entry for it that the zone does not show yet; zone holds the
// TXT records the index answers there. The entry is dropped once the zone
// agrees with it.
func (o *Overlay) Answer(qname string, zone []dns.RR, now time.Time) ([]dns.RR, bool) {
	values, ttl, ok := o.values(qname, now)
	if !ok {
		return nil, false
	}
	if sameSet(values, txtValues(zone)) {
		o.mu.Lock()
		if e, ok := o.entries[qname]; ok && slices.Equal(e.values, values) {
			delete(o.entries, qname)
		}
		o.mu.Unlock()
		return nil, false
	}
	return txtRecords(qname, values, ttl), true
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
