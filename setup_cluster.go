package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/coredns/caddy"
	"github.com/miekg/dns"
	"k8s.io/client-go/dynamic"

	"github.com/seed-e581d630/k8s_gateway/fleet"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch"
)

// clusterSpec is one cluster block of a Corefile:
//
//	cluster NAME {
//	    kubeconfig FILE [CONTEXT]
//	    subdomain [LABEL]
//	    ...filters, delegate, events
//	}
type clusterSpec struct {
	name string
	// subdomain: the cluster publishes under <subdomain>.<zone> only; empty:
	// merged into the zones.
	subdomain string
	opts      clusterOptions
	set       map[string]bool // the options the block sets; the others are the k8s_gateway block's
	line      int             // of the cluster line, for errors
}

// parseCluster reads a cluster block; c is at the cluster token. The block
// holds one option a line; `cluster NAME { OPTION ARGS }` on one line holds one.
func parseCluster(c *caddy.Controller, g *Gateway) error {
	spec := clusterSpec{opts: newClusterOptions(), set: map[string]bool{}, line: c.Line()}
	args := c.RemainingArgs()
	if len(args) != 1 {
		return argCountErr(c, "cluster NAME [{ ... }]", args)
	}
	spec.name = args[0]
	if err := checkClusterName(spec.name); err != nil {
		return c.Errf("cluster %q: %v", spec.name, err)
	}
	if slices.ContainsFunc(g.clusters, func(s clusterSpec) bool { return s.name == spec.name }) {
		return c.Errf("cluster %q is named twice", spec.name)
	}
	lines, err := blockLines(c)
	if err != nil {
		return err
	}
	for _, l := range lines {
		opt, args := l.tokens[0], l.tokens[1:]
		if err := spec.setOption(opt, args); err != nil {
			return fmt.Errorf("%s:%d - Error during parsing: cluster %s: %v", c.File(), l.line, spec.name, err)
		}
		spec.set[canonicalOption(opt)] = true
	}
	g.clusters = append(g.clusters, spec)
	return nil
}

// setOption applies one option of a cluster block.
func (s *clusterSpec) setOption(opt string, args []string) error {
	if opt == "subdomain" {
		if len(args) > 1 {
			return usageErr("subdomain [LABEL]", args)
		}
		s.subdomain = s.name
		if len(args) == 1 {
			if err := checkClusterName(args[0]); err != nil {
				return fmt.Errorf("subdomain %q: %v", args[0], err)
			}
			s.subdomain = args[0]
		}
		return nil
	}
	err := setClusterOption(&s.opts, opt, args)
	if errors.Is(err, errUnknownOption) {
		return fmt.Errorf("unknown property %q", opt)
	}
	return err
}

// optionLine is one option of a nested block with its arguments.
type optionLine struct {
	tokens []string
	line   int
}

// blockLines reads the nested block that opens after the cluster name, if
// any, up to its closing brace. A line holds one option.
func blockLines(c *caddy.Controller) ([]optionLine, error) {
	if !c.NextArg() {
		return nil, nil // no block: every option is the k8s_gateway block's
	}
	if c.Val() != "{" {
		return nil, c.Errf("unexpected %q after the cluster name; want {", c.Val())
	}
	var out []optionLine
	for c.Next() {
		switch tok := c.Val(); tok {
		case "}":
			return out, nil
		case "{":
			return nil, c.Err("a cluster block cannot nest another block")
		default:
			if n := len(out); n > 0 && out[n-1].line == c.Line() {
				out[n-1].tokens = append(out[n-1].tokens, tok)
				continue
			}
			out = append(out, optionLine{tokens: []string{tok}, line: c.Line()})
		}
	}
	return nil, c.Err("cluster block not closed: missing }")
}

// checkClusterName accepts a lower-case DNS label: a cluster's name is a
// label of its subdomain, and the prefix of its object keys.
func checkClusterName(name string) error {
	if len(name) == 0 || len(name) > 63 {
		return errors.New("must be a DNS label of 1 to 63 characters")
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case r == '-' && i > 0 && i < len(name)-1:
		default:
			return errors.New("must be a lower-case DNS label: a-z, 0-9 and inner '-'")
		}
	}
	return nil
}

// resolved returns the cluster's options with those it does not set taken
// from the block's; delegations add to the block's.
func (s *clusterSpec) resolved(block clusterOptions) clusterOptions {
	o := s.opts
	for name, row := range clusterOptionTable {
		if row.inherit != nil && !s.set[name] {
			row.inherit(&o, &block)
		}
	}
	o.delegations = cloneMap(block.delegations)
	for ns, ds := range s.opts.delegations {
		for _, d := range ds {
			if !slices.Contains(o.delegations[ns], d) {
				o.delegations[ns] = append(slices.Clip(o.delegations[ns]), d)
			}
		}
	}
	return o
}

// zones returns the zones the cluster publishes in: the block's, or with a
// subdomain, <subdomain>.<zone> of each forward zone (reverse zones stay).
func (s *clusterSpec) zones(block []string) []string {
	if s.subdomain == "" {
		return block
	}
	out := make([]string, 0, len(block))
	for _, z := range block {
		if source.IsReverseZone(z) {
			out = append(out, z)
			continue
		}
		sub := s.subdomain + "." + z
		if _, ok := dns.IsDomainName(sub); ok && len(sub) <= 254 {
			out = append(out, sub)
		}
	}
	return out
}

// setupReaders makes the clusters the block reads (addClusters), and the
// discovery of the clusterapi option.
func setupReaders(_ *caddy.Controller, g *Gateway) error {
	if err := g.addClusters(&g.readers, g.kubeconfigAPI); err != nil {
		return err
	}
	if g.clusterAPI == nil {
		return nil
	}
	cfg, err := g.restConfig(g.kubeconfig, g.kubecontext)
	if err != nil {
		return fmt.Errorf("clusterapi: %w", err)
	}
	mgmt, err := watch.NewRestAPI(cfg)
	if err != nil {
		return fmt.Errorf("clusterapi: %w", err)
	}
	g.discovery = g.newDiscovery(mgmt.Dynamic, mgmt.ServedResources, func(kubeconfig []byte) (watch.API, error) {
		return fleet.KubeconfigBytesAPI(kubeconfig, g.apiLimits)
	})
	return nil
}

// indexDomains returns the domains delegated by configuration, by tenant: a
// namespace, or with cluster blocks "<cluster>/<namespace>".
func (g *Gateway) indexDomains() map[string][]string {
	if len(g.clusters) == 0 {
		return g.delegations
	}
	out := map[string][]string{}
	for _, s := range g.clusters {
		for ns, ds := range s.resolved(g.clusterOptions).delegations {
			out[s.name+"/"+ns] = ds
		}
	}
	return out
}

// clusterAPIConfig is the clusterapi option.
type clusterAPIConfig struct {
	namespaces []string // read Clusters in these namespaces; all when empty
}

// newDiscovery returns the Cluster API discovery of the clusterapi option:
// Clusters read with dyn and served, each workload cluster read with the API
// client apiOf makes of its kubeconfig.
func (g *Gateway) newDiscovery(dyn dynamic.Interface, served func(context.Context, string) ([]string, error), apiOf func([]byte) (watch.API, error)) *fleet.Discovery {
	return fleet.NewDiscovery(fleet.DiscoveryConfig{
		Dynamic: dyn, Served: served, APIOf: apiOf, Namespaces: g.clusterAPI.namespaces,
		Reprobe: g.timing.reprobe, ClusterWait: g.timing.clusterWait, Health: g.healthTiming(), Guard: g.timing.guard,
		Members: &g.fleet, Join: g.joinCluster,
	})
}

// joinCluster makes the cluster of the Cluster API Cluster namespace/name,
// read with api, under the subdomain of its name.
func (g *Gateway) joinCluster(namespace, name string, api watch.API) (*fleet.Cluster, error) {
	spec := clusterSpec{name: name, subdomain: name}
	if _, ok := dns.IsDomainName(name + "." + g.Zones[0]); !ok || checkClusterName(name) != nil {
		return nil, errors.New("its name is not a DNS label: not published")
	}
	cfg := g.controllerConfigOf(&g.clusterOptions, spec.zones(g.blockZones()), false)
	return fleet.NewCluster(namespace+"."+name, cfg, api, g.index, g.emitEvents), nil
}
