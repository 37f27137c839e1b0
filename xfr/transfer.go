package xfr

import (
	"errors"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// errNotSynced answers transfers asked for before the informers synced.
var errNotSynced = errors.New("k8s_gateway: informers not synced yet")

// Transfer serves a transfer of zone, zone zi of the snapshots that
// snapshot returns (nil: the zone is not answered yet, errNotSynced): AXFR
// for serial 0, else IXFR from serial (see the package's doc).
func (h *Histories) Transfer(zone string, zi int, serial uint32, snapshot func() *index.Snapshot) (<-chan []dns.RR, error) {
	// The snapshot is read under the history's lock, so the history sees
	// the snapshots in the order the index published them.
	z := h.zone(zone)
	z.mu.Lock()
	s := snapshot()
	if s == nil {
		z.mu.Unlock()
		return nil, errNotSynced
	}
	soa := s.SOA(zi)
	if current(serial, s.Serial(zi)) {
		z.mu.Unlock()
		return send(soa), nil
	}
	if z.pin != nil && z.pin.Serial(zi) == s.Serial(zi) {
		s = z.pin // the content of the serial's assignment
	}
	body := z.record(s, zi)
	var (
		from     dns.RR
		del, add []dns.RR
		ok       bool
	)
	if serial != 0 {
		from, del, add, ok = z.since(serial)
	}
	z.mu.Unlock()
	if ok && len(del)+len(add) < len(body) {
		return send(soa, append([]dns.RR{from}, del...), append(soa[:1:1], add...), soa), nil
	}
	return send(soa, body, soa), nil
}

// Whole serves a transfer of a zone without history (the catalog): its SOA
// alone when serial is current, else the whole zone.
func Whole(soa *dns.SOA, records []dns.RR, serial uint32) <-chan []dns.RR {
	head := []dns.RR{soa}
	if current(serial, soa.Serial) {
		return send(head)
	}
	return send(head, records, head)
}

// current reports whether a requester at serial (0: none, an AXFR) holds
// the zone's serial or a newer one: it needs the SOA alone.
func current(serial, zone uint32) bool {
	return serial != 0 && !index.SerialLess(serial, zone)
}

// send returns a channel that carries parts, each in batches of a few
// hundred records, and is then closed.
func send(parts ...[]dns.RR) <-chan []dns.RR {
	ch := make(chan []dns.RR, 2)
	go func() {
		const batch = 256
		for _, records := range parts {
			for len(records) > 0 {
				n := min(batch, len(records))
				ch <- records[:n]
				records = records[n:]
			}
		}
		close(ch)
	}()
	return ch
}
