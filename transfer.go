package gateway

import (
	"errors"
	"sort"

	"github.com/coredns/coredns/plugin/transfer"

	"github.com/miekg/dns"
)

// errNotSynced answers transfers asked for before the informers synced.
var errNotSynced = errors.New("k8s_gateway: informers not synced yet")

// Transfer implements transfer.Transferer: the transfer plugin serves AXFR
// and IXFR for the plugin's zones from it. The whole zone comes from one
// snapshot, so a change during a transfer never tears it. IXFR is answered
// with a full zone (no history is kept, RFC 1995 §4 allows it), or with the
// single SOA when the requester's serial is current.
func (g *Gateway) Transfer(zone string, serial uint32) (<-chan []dns.RR, error) {
	zi := -1
	for i, z := range g.Zones {
		if z == zone {
			zi = i
		}
	}
	if zi < 0 {
		return nil, transfer.ErrNotAuthoritative
	}
	if !g.ready.Load() {
		return nil, errNotSynced
	}
	s := g.index.Snapshot()
	soa := s.zones[zi].soa
	ch := make(chan []dns.RR, 2)
	if serial != 0 && !serialLess(serial, s.zones[zi].serial) {
		ch <- soa
		close(ch)
		return ch, nil
	}
	records := g.zoneRecords(s, zi)
	go func() {
		ch <- soa
		ch <- g.ns[zi]
		const batch = 256
		for len(records) > 0 {
			n := min(batch, len(records))
			ch <- records[:n]
			records = records[n:]
		}
		ch <- soa
		close(ch)
	}()
	return ch, nil
}

// zoneRecords returns every record of zone zi in the snapshot but the apex
// SOA and NS, ordered by name and type.
func (g *Gateway) zoneRecords(s *snapshot, zi int) []dns.RR {
	var nodes []*node
	for _, shard := range s.shards {
		for name, n := range shard {
			if !n.empty() && zoneOf(g.Zones, name) == zi {
				nodes = append(nodes, n)
			}
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return canonicalLess(nodes[i].name, nodes[j].name) })
	var rrs []dns.RR
	for _, n := range nodes {
		for _, set := range n.sets {
			rrs = append(rrs, set.rrs...)
		}
	}
	return rrs
}

// canonicalLess orders names as RFC 4034 §6.1 does: label by label from the right.
func canonicalLess(a, b string) bool {
	la, lb := dns.SplitDomainName(a), dns.SplitDomainName(b)
	for i, j := len(la)-1, len(lb)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
		if la[i] != lb[j] {
			return la[i] < lb[j]
		}
	}
	return len(la) < len(lb)
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
