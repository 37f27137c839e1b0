package gateway

import (
	"slices"

	"github.com/coredns/coredns/plugin/transfer"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// Transfer implements transfer.Transferer: the transfer plugin serves AXFR
// and IXFR for the plugin's zones (package xfr, from the snapshot the zone
// is answered from) and its catalog (package catalog).
func (g *Gateway) Transfer(zone string, serial uint32) (<-chan []dns.RR, error) {
	if zi := slices.Index(g.Zones, zone); zi >= 0 {
		return g.ixfr.Transfer(zone, zi, serial, func() *index.Snapshot { return g.snapshot(zi) })
	}
	if g.catalog != nil && zone == g.catalog.Name() {
		return g.catalog.Transfer(serial), nil
	}
	return nil, transfer.ErrNotAuthoritative
}
