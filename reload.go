package gateway

import (
	"slices"
	"sync"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// A Corefile reload without side effects. CoreDNS starts the new instance
// of every block before it stops the old one. When the new one publishes its
// zones (the index's first Flush), each zone that the old instance serves on
// the same listener and view takes over from it: with the same content, its
// serial (nothing moves, no transfer follows); with other content, a serial
// past it, and the IXFR from the old serials stays incremental, as the
// history of what the old instance's transfers served goes on in the new
// one (xfr.Histories.Adopt).

// servedZone identifies a zone across reloads: the listener of its server
// block, its view and its name.
type servedZone struct{ listener, view, zone string }

// handoff holds the zones the running instances serve, once published.
var handoff = struct {
	sync.Mutex
	zones map[servedZone]*Gateway
}{zones: map[servedZone]*Gateway{}}

// servedZones returns the zones of g as servedZone.
func (g *Gateway) servedZones() []servedZone {
	out := make([]servedZone, len(g.Zones))
	for i, z := range g.Zones {
		out[i] = servedZone{g.listener, g.view, z}
	}
	return out
}

// serve registers g as the instance that serves its zones.
func (g *Gateway) serve() {
	handoff.Lock()
	defer handoff.Unlock()
	for _, k := range g.servedZones() {
		handoff.zones[k] = g
	}
}

// unserve takes g off the zones it still serves (those no newer instance took).
func (g *Gateway) unserve() {
	handoff.Lock()
	defer handoff.Unlock()
	for _, k := range g.servedZones() {
		if handoff.zones[k] == g {
			delete(handoff.zones, k)
		}
	}
}

// previous is the index's Config.Previous: the serial of zone zi in the
// instance g replaces, and whether s holds the same zone; it adopts that
// instance's transfer history of the zone.
func (g *Gateway) previous(zi int, s *index.Snapshot) (uint32, bool) {
	handoff.Lock()
	old := handoff.zones[servedZone{g.listener, g.view, g.Zones[zi]}]
	handoff.Unlock()
	if old == nil || old == g {
		return 0, false
	}
	oi := slices.Index(old.Zones, g.Zones[zi])
	if oi < 0 {
		return 0, false
	}
	os := old.snapshot(oi)
	if os == nil {
		return 0, false
	}
	g.xfer.ixfr.Adopt(g.Zones[zi], &old.xfer.ixfr)
	return os.Serial(oi), sameZone(os, oi, s, zi)
}
