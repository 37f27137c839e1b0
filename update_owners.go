package gateway

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/acmeupdate"
	"github.com/seed-e581d630/k8s_gateway/fleet"
	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/watch"
)

// Who may answer a challenge is decided on what the cluster publishes, not
// on what this block's view shows: a challenge is a DNSEndpoint that every
// view serves, so a name whose addresses the view's exclude removes, or
// whose object its namespaces, label or class filters leave out, must not
// look free. When the block filters, an owner view reads the same clusters
// without those filters into an index of its own, which only the ownership
// decision reads. Without filters the block's index is that view.

// ownerView is the unfiltered index of the ownership decision and the
// clusters feeding it.
type ownerView struct {
	index   *index.Index
	fleet   fleet.Fleet
	flushed sync.Once
}

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
func (g *Gateway) newOwnerView(apiOf func(kubeconfig, context string) (watch.API, error)) (*ownerView, error) {
	if g.ownership == index.Union || !g.viewFilters() {
		return nil, nil
	}
	v := &ownerView{index: index.New(index.Config{
		Shared: g.index.Shared(),
		Zones:  g.Zones, SOA: g.newSOA, NS: g.nsRecords, Now: g.now, Policy: g.ownership, Domains: g.indexDomains(),
	})}
	add := func(name string, o clusterOptions, zones []string, nameservers bool) error {
		api, err := apiOf(o.kubeconfig, o.kubecontext)
		if err != nil {
			return err
		}
		o = o.unfiltered()
		cfg := g.controllerConfigOf(&o, zones, nameservers)
		cfg.Sources.Addresses = nil
		cfg.Refused = nil // told by the block's own controllers
		v.fleet.Add(fleet.NewCluster(name, cfg, api, v.index, false))
		return nil
	}
	if len(g.clusters) == 0 {
		return v, add("", g.clusterOptions, g.Zones, true)
	}
	for i, s := range g.clusters {
		if err := add(s.name, s.resolved(g.clusterOptions), s.zones(g.blockZones()), i == 0); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", s.name, err)
		}
	}
	return v, nil
}

// start starts the view's controllers; stop stops them. They run no health
// watch, Events or metrics of their own: the block's clusters have those.
func (v *ownerView) start() {
	for _, cl := range v.fleet.List() {
		cl.Controller.Start()
	}
}

func (v *ownerView) stop() {
	for _, cl := range v.fleet.List() {
		cl.Controller.Stop()
	}
	v.index.Close()
}

// updateAuthorizer is the block's acmeupdate.Authorizer and Completer.
type updateAuthorizer struct{ g *Gateway }

// clusters returns the clusters the decision reads.
func (a updateAuthorizer) clusters() []*fleet.Cluster {
	if a.g.owners != nil {
		return a.g.owners.fleet.List()
	}
	return a.g.fleet.List()
}

// Complete implements acmeupdate.Completer: every cluster the decision
// reads has listed every kind, none is refused, and each is in contact.
// Union reads no owner: it is always complete.
func (a updateAuthorizer) Complete() (bool, string) {
	g := a.g
	if g.ownership == index.Union {
		return true, ""
	}
	clusters := a.clusters()
	if len(clusters) == 0 {
		return false, "no cluster is read"
	}
	for _, cl := range clusters {
		if ok, why := cl.Controller.Complete(g.timing.unreachableAfter); !ok {
			if cl.Name != "" {
				why = "cluster " + cl.Name + ": " + why
			}
			return false, why
		}
	}
	// A named cluster's API server may have gone silent without closing its
	// watches: the block's health watch pings it and knows.
	for _, cl := range g.fleet.List() {
		if cl.Name == "" {
			continue
		}
		if since, ok := cl.Controller.SinceContact(); !ok || since >= g.timing.unreachableAfter {
			return false, fmt.Sprintf("cluster %s: its API server has not answered for %s", cl.Name, since.Round(time.Second))
		}
	}
	if g.discovery != nil {
		select {
		case <-g.discovery.Synced():
		default:
			return false, "the Cluster API clusters are not listed yet"
		}
	}
	if v := g.owners; v != nil {
		v.flushed.Do(v.index.Flush) // the policy's verdicts, once everything is read
	}
	return true, ""
}

// MayChallenge implements acmeupdate.Authorizer with the ownership policy
// (acmeupdate.Ownership), on the owner view. The keys' namespaces are those
// of the local cluster: with cluster blocks, the index knows them by the
// cluster's name, "<cluster>/<namespace>".
func (a updateAuthorizer) MayChallenge(namespace, zone, name string) (bool, string) {
	g := a.g
	own := acmeupdate.Ownership{Policy: g.ownership, Zones: g.Zones, Nameservers: g.nameserverNames()}
	if g.ownership == index.Union {
		return own.MayChallenge(namespace, zone, name) // no cluster needed to say so
	}
	var cl *fleet.Cluster
	ix := g.index
	for _, c := range a.clusters() {
		if c.Name == g.updatesCluster {
			cl = c
		}
	}
	if g.owners != nil {
		ix = g.owners.index
	}
	if cl == nil || cl.Controller == nil {
		return false, "the cluster is not read yet"
	}
	prefix := ""
	if cl.Name != "" {
		prefix = cl.Name + "/"
	}
	own.Owners = func(_, name string) []string { return ix.OwnersBelow(name) }
	own.MayPublish = func(ns, name string) bool {
		return cl.Controller.MayPublish(strings.TrimPrefix(ns, prefix), name)
	}
	return own.MayChallenge(prefix+namespace, zone, name)
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
