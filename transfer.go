package gateway

import (
	"errors"

	"github.com/coredns/coredns/plugin/transfer"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// errNotSynced answers transfers asked for before the informers synced.
var errNotSynced = errors.New("k8s_gateway: informers not synced yet")

// Transfer implements transfer.Transferer: the transfer plugin serves AXFR
// and IXFR for the plugin's zones from it. The whole zone comes from one
// snapshot, so a change during a transfer never tears it. IXFR is answered
// with the single SOA when the requester's serial is current; with the
// differences since its serial (RFC 1995, condensed) when the history of
// what was served knows that serial (ixfr.go) and they are smaller than the
// zone; and otherwise with the whole zone (RFC 1995 §4).
func (g *Gateway) Transfer(zone string, serial uint32) (<-chan []dns.RR, error) {
	zi := -1
	for i, z := range g.Zones {
		if z == zone {
			zi = i
		}
	}
	if zi < 0 && g.catalog != nil && zone == g.catalog.Name() {
		return g.transferCatalog(serial), nil
	}
	if zi < 0 {
		return nil, transfer.ErrNotAuthoritative
	}
	// The snapshot is read under the history's lock, so the history sees
	// the snapshots in the order the index published them.
	h := g.ixfr.zone(zone)
	h.mu.Lock()
	s := g.snapshot(zi)
	if s == nil {
		h.mu.Unlock()
		return nil, errNotSynced
	}
	soa := s.SOA(zi)
	ch := make(chan []dns.RR, 2)
	if serial != 0 && !index.SerialLess(serial, s.Serial(zi)) {
		h.mu.Unlock()
		ch <- soa
		close(ch)
		return ch, nil
	}
	body := h.record(s, zi)
	var (
		from     dns.RR
		del, add []dns.RR
		ok       bool
	)
	if serial != 0 {
		from, del, add, ok = h.since(serial)
	}
	h.mu.Unlock()
	if ok && len(del)+len(add) < len(body) {
		go func() {
			ch <- soa
			sendBatches(ch, append([]dns.RR{from}, del...))
			sendBatches(ch, append(soa[:1:1], add...))
			ch <- soa
			close(ch)
		}()
		return ch, nil
	}
	go func() {
		ch <- soa
		sendBatches(ch, body)
		ch <- soa
		close(ch)
	}()
	return ch, nil
}

// sendBatches sends records on ch a few hundred at a time.
func sendBatches(ch chan<- []dns.RR, records []dns.RR) {
	const batch = 256
	for len(records) > 0 {
		n := min(batch, len(records))
		ch <- records[:n]
		records = records[n:]
	}
}

// notify sends NOTIFY for zone to the secondaries the transfer plugin names.
func (g *Gateway) notify(zone string) {
	x := g.xfer.Load()
	if x == nil {
		return
	}
	go func() {
		if err := x.Notify(zone); err != nil {
			log.Warningf("notify for %s: %v", zone, err)
		}
	}()
}
