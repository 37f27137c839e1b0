package gateway

import (
	"slices"

	"github.com/coredns/coredns/plugin/transfer"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/catalog"
	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/xfr"
)

// transfers are the zone transfers of the block's zones and their NOTIFY
// (package xfr).
type transfers struct {
	notifier xfr.Notifier  // through the server block's transfer plugin
	ixfr     xfr.Histories // what transfers served, for incremental IXFR
}

// Transfer implements transfer.Transferer: the transfer plugin serves AXFR
// and IXFR for the plugin's zones (package xfr, from the snapshot the zone
// is answered from) and its catalog (package catalog).
func (g *Gateway) Transfer(zone string, serial uint32) (<-chan []dns.RR, error) {
	if zi := slices.Index(g.Zones, zone); zi >= 0 {
		return g.xfer.ixfr.Transfer(zone, zi, serial, func() *index.Snapshot { return g.snapshot(zi) })
	}
	if c := g.catalog.zone; c != nil && zone == c.Name() {
		return c.Transfer(serial), nil
	}
	return nil, transfer.ErrNotAuthoritative
}

// afterStart returns the runner that sends NOTIFY for the zones and the
// catalog again after the start (xfr.Notifier.AfterStart), or nil when no
// transfer plugin or catalog is configured.
func (x *transfers) afterStart(zones []string, cat *catalog.Zone) runner {
	if !x.notifier.Configured() && cat == nil {
		return nil
	}
	zones = slices.Clone(zones)
	if cat != nil {
		zones = append(zones, cat.Name())
	}
	return x.notifier.AfterStart(zones)
}
