package gateway

import (
	"path/filepath"

	"github.com/coredns/caddy"
)

// clusterKindsKey keys, in the storage of one Corefile's instance, the
// kinds its blocks publish from each cluster: clusterID → kind → true.
type clusterKindsKey struct{}

// clusterID names the cluster that o reads: its kubeconfig file, absolute,
// and context; empty for the in-cluster or default one.
func clusterID(o *clusterOptions) string {
	if o.kubeconfig == "" {
		return ""
	}
	path, err := filepath.Abs(o.kubeconfig)
	if err != nil {
		path = o.kubeconfig
	}
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	return path + "\x00" + o.kubecontext
}

// recordKinds adds the kinds the block publishes from each cluster it
// reads to the Corefile's, which the owner view of a block with updates
// reads once every block is set up (newOwnerView runs at the start).
func recordKinds(c *caddy.Controller, g *Gateway, _ optionLines) (string, error) {
	kinds, _ := c.Get(clusterKindsKey{}).(map[string]map[string]bool)
	if kinds == nil {
		kinds = map[string]map[string]bool{}
		c.Set(clusterKindsKey{}, kinds)
	}
	for _, o := range g.readOptions() {
		id := clusterID(&o)
		if kinds[id] == nil {
			kinds[id] = map[string]bool{}
		}
		for _, k := range o.resources {
			kinds[id][k] = true
		}
	}
	g.updates.kinds = kinds
	return "", nil
}
