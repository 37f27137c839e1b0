package gateway

import (
	"errors"
	"slices"

	"github.com/coredns/caddy"

	"github.com/seed-e581d630/k8s_gateway/source"
)

// parseClusterZones reads `cluster_zones`: the subdomain of each cluster
// block is served as a zone of its own (SOA, NS, transfers, a member of the
// catalog), nested in the block's zone, which delegates it.
func parseClusterZones(c *caddy.Controller, g *Gateway, _ string, args []string) error {
	if len(args) != 0 {
		return argCountErr(c, "cluster_zones", args)
	}
	g.clusterZones = true
	return nil
}

// addClusterZones adds to the block's zones, after its own, the subdomain
// zones of its cluster blocks (<subdomain>.<zone> of each forward zone). The
// clusters keep publishing where they did; the index now answers those
// names from their own zone, and the block's zone holds the delegation.
func (g *Gateway) addClusterZones() error {
	if !g.clusterZones {
		return nil
	}
	// Refused with clusterapi and cds before (optionConflicts).
	own := slices.Clone(g.Zones)
	added := 0
	for _, s := range g.clusters {
		if s.subdomain == "" {
			continue
		}
		for _, z := range s.zones(own) {
			if source.IsReverseZone(z) || slices.Contains(g.Zones, z) {
				continue
			}
			g.Zones = append(g.Zones, z)
			added++
		}
	}
	if added == 0 {
		return errors.New("cluster_zones: no cluster block has a subdomain: there is no zone to add")
	}
	g.ownZones = len(own)
	return nil
}

// blockZones returns the zones the block names (without those of
// cluster_zones): the zones the clusters' subdomains are made under.
func (g *Gateway) blockZones() []string {
	if g.ownZones == 0 {
		return g.Zones
	}
	return g.Zones[:g.ownZones]
}
