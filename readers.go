package gateway

import (
	"fmt"

	"github.com/seed-e581d630/k8s_gateway/fleet"
	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/watch"
)

// readers are an index and the clusters that feed it: the block's own, and
// the owner view of the updates option (update_owners.go), which reads the
// same clusters without the block's filters.
type readers struct {
	index *index.Index
	fleet fleet.Fleet
	// discovery: the clusterapi option's, which adds clusters to fleet; nil
	// without.
	discovery *fleet.Discovery
	// owner: the owner view's, which runs no health watch, Events or
	// metrics of its own: the block's clusters have those.
	owner bool
	// release ends the use of the index's Shared (index.AcquireShared);
	// nil when the readers hold none.
	release func()
}

// apiFunc returns the API client of a kubeconfig and context (both empty:
// in the cluster, or the default kubeconfig); it does not contact the API
// server.
type apiFunc func(kubeconfig, context string) (watch.API, error)

// addClusters adds to r the clusters of the block: the block's one cluster,
// or one for each cluster block, read with the API clients of apiOf. The
// owner view reads them unfiltered, tells no refusals and sends no Events.
func (g *Gateway) addClusters(r *readers, apiOf apiFunc) error {
	add := func(name string, o clusterOptions, zones []string, nameservers bool) error {
		api, err := apiOf(o.kubeconfig, o.kubecontext)
		if err != nil {
			return err
		}
		if r.owner {
			o = g.ownerOptions(o)
		}
		cfg := g.controllerConfigOf(&o, zones, nameservers)
		if r.owner {
			cfg.Sources.Addresses = nil
			cfg.Refused = nil // told by the block's own controllers
		}
		r.fleet.Add(fleet.NewCluster(name, cfg, api, r.index, o.emitEvents))
		return nil
	}
	if len(g.clusters) == 0 {
		return add("", g.clusterOptions, g.Zones, true)
	}
	for i, s := range g.clusters {
		// The nameservers' own Services are read from the first cluster.
		if err := add(s.name, s.resolved(g.clusterOptions), s.zones(g.blockZones()), i == 0); err != nil {
			return fmt.Errorf("cluster %s: %w", s.name, err)
		}
	}
	return nil
}

// start starts the clusters' controllers (and, but in the owner view,
// their Events and health watch, with timing h) and the discovery.
func (r *readers) start(h fleet.HealthTiming) error {
	for _, cl := range r.fleet.List() {
		if r.owner {
			cl.Controller.Start()
			continue
		}
		if err := cl.Start(h); err != nil {
			return err
		}
	}
	if r.discovery != nil {
		r.discovery.Start()
	}
	return nil
}

// stop stops what start started.
func (r *readers) stop() {
	if r.discovery != nil {
		r.discovery.Stop()
	}
	for _, cl := range r.fleet.List() {
		if r.owner {
			cl.Controller.Stop()
		} else {
			cl.Stop()
		}
	}
}
