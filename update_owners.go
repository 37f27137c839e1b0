package gateway

import (
	"slices"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// Who may answer a challenge is decided on what the cluster publishes, not
// on what this block's view shows: a challenge is a DNSEndpoint that every
// view serves, so a name whose addresses the view's exclude removes, or
// whose object its namespaces, label or class filters leave out, must not
// look free. When the block filters, an owner view reads the same clusters
// without those filters into an index of its own, which only the ownership
// decision reads (readers, with the owner flag). Without filters the
// block's index is that view.
//
// Nor may a name look free because the block does not read the kind that
// publishes it: the challenge is served by every block that reads
// DNSEndpoints, which may read Ingresses where this one does not. The
// owner view reads every kind that any block of the Corefile publishes
// from the cluster (recordKinds), and a block that reads fewer has one.

// filters reports whether options o publish less than the cluster has.
func (o *clusterOptions) filters() bool {
	return len(o.namespaces) > 0 || o.labelSelector != "" || len(o.labelSelectors) > 0 ||
		len(o.ingressClasses) > 0 || len(o.gatewayClasses) > 0
}

// unfiltered returns o without the options that hide objects.
func (o clusterOptions) unfiltered() clusterOptions {
	o.namespaces, o.labelSelector, o.labelSelectors = nil, "", map[string][]string{}
	o.ingressClasses, o.gatewayClasses = nil, nil
	o.health, o.emitEvents = false, false
	return o
}

// ownerOptions returns o as the owner view reads the cluster: unfiltered,
// every kind that a block of the Corefile publishes from it.
func (g *Gateway) ownerOptions(o clusterOptions) clusterOptions {
	o = o.unfiltered()
	for kind := range g.updates.kinds[clusterID(&o)] {
		if !slices.Contains(o.resources, kind) {
			o.resources = append(slices.Clip(o.resources), kind)
		}
	}
	slices.Sort(o.resources)
	return o
}

// readOptions returns the options of each cluster the block reads.
func (g *Gateway) readOptions() []clusterOptions {
	if len(g.clusters) == 0 {
		return []clusterOptions{g.clusterOptions}
	}
	out := make([]clusterOptions, 0, len(g.clusters))
	for _, s := range g.clusters {
		out = append(out, s.resolved(g.clusterOptions))
	}
	return out
}

// viewFilters reports whether the block or one of its clusters filters, or
// reads fewer kinds than the blocks of the Corefile publish from it.
func (g *Gateway) viewFilters() bool {
	if len(g.addresses.Include) > 0 || len(g.addresses.Exclude) > 0 {
		return true
	}
	for _, o := range g.readOptions() {
		if o.filters() || len(g.ownerOptions(o).resources) > len(o.resources) {
			return true
		}
	}
	return false
}

// newOwnerView returns the owner view of a block that filters, nil when the
// block's own index shows everything (or under union, which reads no owner).
func newOwnerView(g *Gateway, apiOf apiFunc) (*readers, error) {
	if g.ownership == index.Union || !g.viewFilters() {
		return nil, nil
	}
	v := &readers{owner: true, index: g.newIndex(index.Config{Shared: g.index.Shared()})}
	if err := g.addClusters(v, apiOf); err != nil {
		return nil, err
	}
	return v, nil
}
