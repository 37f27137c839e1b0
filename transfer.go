package gateway

import (
	"slices"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
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

// transfers reports whether zone (lower case, fully qualified) is one the
// plugin transfers: a zone of the block or its catalog.
func (g *Gateway) transfers(zone string) bool {
	return slices.Contains(g.Zones, zone) || g.catalog.zone != nil && zone == g.catalog.zone.Name()
}

// guardTransfers puts xfr.Guard in front of the transfer plugin of the
// server block cfg: it is handed, in its place, to the plugin before it in
// the chain (the plugins set up so far; the transfer plugin's directive
// comes before the plugin's), or stands first when it is first. The
// transfer plugin itself stays in the chain's registry under its name.
func guardTransfers(cfg *dnsserver.Config, ours func(zone string) bool) {
	for i, p := range cfg.Plugin {
		cfg.Plugin[i] = func(next plugin.Handler) plugin.Handler { return p(xfr.Guard(next, ours)) }
	}
	cfg.Plugin = slices.Insert(cfg.Plugin, 0, func(next plugin.Handler) plugin.Handler { return xfr.Guard(next, ours) })
}
