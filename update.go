package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/coredns/caddy"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/acmeupdate"
	"github.com/seed-e581d630/k8s_gateway/fleet"
	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/watch"
)

// The updates option: RFC 2136 UPDATE of ACME DNS-01 challenges (package
// acmeupdate). This file is all the plugin adds for it, besides a field of
// Gateway, a case of parseOption, a call in setup and two in ServeDNS.

// eventUpdateRefused is the reason of the Event a refused update gives.
const eventUpdateRefused = "DNSUpdateRefused"

// parseUpdates reads the updates block; its options are one a line.
func parseUpdates(c *caddy.Controller, g *Gateway) error {
	if g.updateOpts != nil {
		return c.Err("updates is given twice")
	}
	if !c.NextArg() || c.Val() != "{" {
		return c.Err("updates: want updates { ... } with its options inside the braces")
	}
	opts := acmeupdate.NewOptions()
	var line []string
	at := 0
	flush := func() error {
		if len(line) == 0 {
			return nil
		}
		if err := opts.Set(line[0], line[1:]); err != nil {
			return fmt.Errorf("%s:%d - Error during parsing: updates: %v", c.File(), at, err)
		}
		line = nil
		return nil
	}
	for c.Next() {
		switch tok := c.Val(); {
		case tok == "}":
			if err := flush(); err != nil {
				return err
			}
			if err := opts.Check(); err != nil {
				return c.Err(err.Error())
			}
			g.updateOpts = opts
			return nil
		case tok == "{":
			return c.Err("updates: a nested block is not allowed")
		case len(line) > 0 && c.Line() == at:
			line = append(line, tok)
		default:
			if err := flush(); err != nil {
				return err
			}
			line, at = []string{tok}, c.Line()
		}
	}
	return c.Err("updates block not closed: missing }")
}

// setupUpdates runs the updates service with the plugin, when the option is
// on. UPDATE messages come on the service's own listen address (see package
// acmeupdate: a MAC covers bytes that CoreDNS does not hand a plugin), never
// through CoreDNS, which answers them NOTIMP.
func (g *Gateway) setupUpdates(c *caddy.Controller) error {
	if g.updateOpts == nil {
		return nil
	}
	if !slices.Contains(g.resources, "DNSEndpoint") {
		return errors.New("updates: the challenges are DNSEndpoints: add DNSEndpoint to resources")
	}
	g.newUpdates()
	c.OnStartup(func() error {
		cfg, err := watch.RestConfig(g.kubeconfig, g.kubecontext)
		if err != nil {
			return fmt.Errorf("updates: %w", err)
		}
		return g.updates.Start(cfg)
	})
	c.OnShutdown(func() error {
		g.updates.Stop()
		return nil
	})
	return nil
}

// newUpdates makes the updates service of the block: the index is its zone,
// the block's ownership policy its authorizer.
func (g *Gateway) newUpdates() {
	g.updates = acmeupdate.NewService(g.updateOpts, acmeupdate.Wiring{
		Zones:      g.Zones,
		Zone:       acmeupdate.IndexZone(g.Zones, g.snapshot),
		Authorizer: acmeupdate.AuthorizerFunc(g.mayChallenge),
		OnReject:   g.updateRefused,
	})
}

// localCluster returns the cluster of the block's own kubeconfig: the
// unnamed one, else the first.
func (g *Gateway) localCluster() *fleet.Cluster {
	clusters := g.fleet.List()
	for _, cl := range clusters {
		if cl.Name == "" {
			return cl
		}
	}
	if len(clusters) > 0 {
		return clusters[0]
	}
	return nil
}

// mayChallenge applies the ownership policy to a challenge of a key's
// namespace (acmeupdate.Ownership). The keys' namespaces are those of the
// local cluster: with cluster blocks, the index knows them by the cluster's
// name, "<cluster>/<namespace>".
func (g *Gateway) mayChallenge(namespace, zone, name string) (bool, string) {
	if g.ownership == index.Union {
		return true, "" // anywhere: no cluster needed to say so
	}
	cl := g.localCluster()
	if cl == nil || cl.Controller == nil {
		return false, "the cluster is not read yet"
	}
	prefix := ""
	if cl.Name != "" {
		prefix = cl.Name + "/"
	}
	own := acmeupdate.Ownership{
		Policy: g.ownership,
		Owners: func(_, name string) []string { return g.index.OwnersBelow(name) },
		MayPublish: func(ns, name string) bool {
			return cl.Controller.MayPublish(strings.TrimPrefix(ns, prefix), name)
		},
	}
	return own.MayChallenge(prefix+namespace, zone, name)
}

// updateRefused gives the tenant an Event (with the events option) on the
// Secret of its key, or its Namespace for a Corefile key.
func (g *Gateway) updateRefused(r acmeupdate.Rejection) {
	if r.Namespace == "" {
		return // no key: no tenant to tell
	}
	cl := g.localCluster()
	if cl == nil {
		return
	}
	e := cl.Events.Load()
	if e == nil {
		return
	}
	ref := watch.ObjectRef{ApiVersion: "v1", Kind: "Namespace", Namespace: r.Namespace, Name: r.Namespace}
	if name, ok := strings.CutPrefix(r.Source, "Secret/"+r.Namespace+"/"); ok {
		ref = watch.ObjectRef{ApiVersion: "v1", Kind: "Secret", Namespace: r.Namespace, Name: name}
	}
	msg := fmt.Sprintf("DNS update with key %s refused (%s): %s", strings.TrimSuffix(r.Key, "."), dns.RcodeToString[r.Rcode], r.Detail)
	if r.Name != "" {
		msg = fmt.Sprintf("DNS update of %s with key %s refused (%s): %s", strings.TrimSuffix(r.Name, "."), strings.TrimSuffix(r.Key, "."), dns.RcodeToString[r.Rcode], r.Detail)
	}
	e.Warning(ref, eventUpdateRefused, msg)
}

// serveUpdate answers an UPDATE that reached CoreDNS (another plugin of the
// server lets them in): NOTIMP, updates are read on their own address.
func (g *Gateway) serveUpdate(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) {
	return dns.RcodeNotImplemented, nil
}

// overlayTXT puts the challenges this replica took, and the informer has not
// brought back yet, into a TXT answer (see acmeupdate.Overlay).
func (g *Gateway) overlayTXT(snap *index.Snapshot, zi int, qname string, answer, ns []dns.RR, res index.Result) ([]dns.RR, []dns.RR, index.Result) {
	if g.updates == nil || res == index.Delegation || res == index.ServerFailure {
		return answer, ns, res
	}
	rrs, ok := g.updates.Answer(qname, answer)
	if !ok {
		return answer, ns, res
	}
	if len(rrs) > 0 {
		return rrs, nil, index.Success
	}
	if res != index.Success {
		return answer, ns, res // gone, and the zone agrees there is no TXT
	}
	// Deleted here, still in the zone: NODATA with the zone's SOA.
	soa, _, _, _ := snap.Lookup(zi, g.Zones[zi], dns.TypeSOA)
	return nil, soa, index.NoData
}
