package gateway

import (
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/coredns/caddy"

	"github.com/seed-e581d630/k8s_gateway/persist"
)

// How options combine. Options that touch the same data either work
// together (docs/combinations.md says how, and names the test that shows
// it) or are refused together, with an error that names both lines:
// optionConflicts within one block, corefileClaims across the blocks of
// one Corefile (two views of a zone, say). TestCombinationsTable holds the
// page and these tables to each other.

// optionLines are where a block's options are: the line of each, by its
// canonical name, in file.
type optionLines struct {
	file  string
	lines map[string]int
}

// at returns "FILE:LINE" of option, or "" when the block does not set it.
func (l optionLines) at(option string) string {
	if n, ok := l.lines[option]; ok {
		return fmt.Sprintf("%s:%d", l.file, n)
	}
	return ""
}

// optionConflict is a pair of options of one block that do not work
// together: the Corefile is refused at the line of option, naming the line
// of other, with why.
type optionConflict struct {
	option, other string
	both          func(g *Gateway) bool
	why           string
}

// optionConflicts are the pairs of options the plugin refuses together.
var optionConflicts = []optionConflict{
	{"cluster_zones", "clusterapi", func(g *Gateway) bool { return g.clusterZones && g.clusterAPI != nil },
		"cluster_zones: the clusters that clusterapi finds join at run time, and a zone cannot be added to a running block: use cluster blocks"},
	{"cluster_zones", "cds", func(g *Gateway) bool { return g.clusterZones && g.cds.on },
		"cluster_zones: the dnssec plugin signs the cluster zones as part of the block's zone, with no keys of their own for cds to publish: not supported together"},
	{"kubeconfig", "cluster", func(g *Gateway) bool { return len(g.clusters) > 0 && g.kubeconfig != "" && g.clusterAPI == nil },
		"kubeconfig: with cluster blocks, each cluster block names its own kubeconfig (the block's names the Cluster API management cluster, with clusterapi)"},
}

// checkConflicts refuses the first pair of optionConflicts the block sets.
func checkConflicts(_ *caddy.Controller, g *Gateway, at optionLines) (string, error) {
	for _, p := range optionConflicts {
		if p.both(g) {
			return p.option, fmt.Errorf("%s (with %s at %s)", p.why, p.other, at.at(p.other))
		}
	}
	return "", nil
}

// corefileClaim is something that one block of a Corefile may hold and no
// other: each block claims it with option, the second claim is refused
// with why, naming the line of the first, unless both blocks may share it.
type corefileClaim struct {
	option string
	// claims returns what the block holds with the option (none without it).
	claims func(g *Gateway) ([]string, error)
	// share reports whether blocks a and b may both hold a claim; nil:
	// never.
	share func(a, b *Gateway) bool
	why   string
}

// corefileClaims are what the blocks of one Corefile may not share.
var corefileClaims = []corefileClaim{
	{"persist", persistClaims, nil,
		"each block, and each view, needs a directory of its own: the two would overwrite each other's copy, and a restart would answer one view from the other's records"},
	{"parent", parentClaims, nil,
		"the parent holds one delegation of a zone, and two blocks (two views) would make its glue flip between their addresses: keep parent in the one block whose nameserver addresses the parent is to give"},
	{"updates", updatesClaims, sameUpdates,
		"the second block's service would answer the first's messages, and refuse them: give each block an address of its own, or the same zones, ownership and updates options (views of one zone alike)"},
}

// claimsKey keys, in the storage of one Corefile's instance, what its blocks
// claimed: the claim → the first block that holds it. A reload is another
// instance, with claims of its own.
type claimsKey struct{}

// heldClaim is a claim's first block, and where its option is.
type heldClaim struct {
	at string // FILE:LINE
	g  *Gateway
}

// checkClaims refuses a block that claims what another block of the same
// Corefile holds (corefileClaims), and records its claims.
func checkClaims(c *caddy.Controller, g *Gateway, at optionLines) (string, error) {
	held, _ := c.Get(claimsKey{}).(map[string]heldClaim)
	if held == nil {
		held = map[string]heldClaim{}
		c.Set(claimsKey{}, held)
	}
	mine := map[string]heldClaim{}
	for _, row := range corefileClaims {
		claims, err := row.claims(g)
		if err != nil {
			return row.option, err
		}
		for _, claim := range claims {
			first, ok := held[claim]
			if ok && (row.share == nil || !row.share(first.g, g)) {
				return row.option, fmt.Errorf("%s: %s by the block of %s already: %s", row.option, claim, first.at, row.why)
			}
			if !ok {
				mine[claim] = heldClaim{at.at(row.option), g}
			}
		}
	}
	maps.Copy(held, mine)
	return "", nil
}

// persistClaims are the copy files of the persist option: one per zone.
func persistClaims(g *Gateway) ([]string, error) {
	if g.persist.dir == "" {
		return nil, nil
	}
	dir, err := filepath.Abs(g.persist.dir)
	if err != nil {
		return nil, fmt.Errorf("persist %s: %v", g.persist.dir, err)
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	var out []string
	for _, zone := range g.Zones {
		out = append(out, fmt.Sprintf("the copy of zone %s is kept in %s", zone, persist.Path(dir, zone)))
	}
	return out, nil
}

// parentClaims are the delegations the parent option keeps in the parent:
// one per zone.
func parentClaims(g *Gateway) ([]string, error) {
	if !g.parent.on {
		return nil, nil
	}
	var out []string
	for _, zone := range g.Zones {
		out = append(out, "the delegation of zone "+zone+" is kept in its parent")
	}
	return out, nil
}

// sameUpdates reports whether the updates of blocks a and b may share an
// address: with the same zones, ownership and updates options (the views
// of one zone, as the chart renders them), whichever block's service
// answers a message, it answers as the other's would.
func sameUpdates(a, b *Gateway) bool {
	za, zb := slices.Sorted(slices.Values(a.Zones)), slices.Sorted(slices.Values(b.Zones))
	return slices.Equal(za, zb) && a.ownership == b.ownership && a.updates.cluster == b.updates.cluster &&
		reflect.DeepEqual(a.indexDomains(), b.indexDomains()) && reflect.DeepEqual(*a.updates.opts, *b.updates.opts)
}

// updatesClaims is the address the updates option reads messages on.
func updatesClaims(g *Gateway) ([]string, error) {
	if g.updates.opts == nil {
		return nil, nil
	}
	addr := g.updates.opts.Listen
	if _, port, err := net.SplitHostPort(addr); err == nil && port == "0" {
		return nil, nil // a port of its own each time
	}
	return []string{"UPDATE messages are read on " + addr}, nil
}
