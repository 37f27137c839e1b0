package gateway

import (
	"github.com/miekg/dns"

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

// viewFilters reports whether the block or one of its clusters filters.
func (g *Gateway) viewFilters() bool {
	if len(g.addresses.Include) > 0 || len(g.addresses.Exclude) > 0 {
		return true
	}
	if len(g.clusters) == 0 {
		return g.clusterOptions.filters()
	}
	for _, s := range g.clusters {
		if o := s.resolved(g.clusterOptions); o.filters() {
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

// nameserverNames returns the nameserver names of the block's zones.
func (g *Gateway) nameserverNames() []string {
	var out []string
	for _, z := range g.Zones {
		for _, rr := range g.nsRecords(z) {
			if ns, ok := rr.(*dns.NS); ok {
				out = append(out, dns.CanonicalName(ns.Ns))
			}
		}
	}
	return out
}
