package gateway

import (
	"context"
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
// acmeupdate). This file and update_owners.go are all the plugin adds for
// it, besides fields of Gateway, a case of parseOption, a call in setup and
// two in ServeDNS.

// eventUpdateRefused is the reason of the Event a refused update gives.
const eventUpdateRefused = "DNSUpdateRefused"

// updatesLines are where the updates block and its cluster line are, for
// the errors of the setup.
type updatesLines struct {
	file          string
	block, clusOp int
}

// errAt returns an error naming line of the Corefile.
func (l updatesLines) errAt(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d - Error during parsing: updates: %s", l.file, line, fmt.Sprintf(format, args...))
}

// parseUpdates reads the updates block; its options are one a line. The
// cluster line is the plugin's; the others are acmeupdate's.
func parseUpdates(c *caddy.Controller, g *Gateway) error {
	if g.updateOpts != nil {
		return c.Err("updates is given twice")
	}
	g.updatesAt = updatesLines{file: c.File(), block: c.Line()}
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
		if line[0] == "cluster" {
			if len(line) != 2 {
				return g.updatesAt.errAt(at, "want cluster NAME, got %d argument(s)", len(line)-1)
			}
			g.updatesCluster, g.updatesAt.clusOp = line[1], at
			line = nil
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

// localOptions returns the options of the local cluster: the one holding
// the keys' Secrets and the challenges' DNSEndpoints, whose namespaces the
// keys are bound to. Without cluster blocks it is the block's one cluster;
// with them, the updates block must name one (cluster NAME), so that the
// keys, Secrets and DNSEndpoints are all in one cluster and ownership reads
// its namespaces.
func (g *Gateway) localOptions() (clusterOptions, error) {
	at := g.updatesAt
	if len(g.clusters) == 0 {
		if g.updatesCluster != "" {
			return clusterOptions{}, at.errAt(at.clusOp, "cluster %s: there are no cluster blocks; the keys and challenges are in the block's own cluster", g.updatesCluster)
		}
		return g.clusterOptions, nil
	}
	if g.updatesCluster == "" {
		return clusterOptions{}, at.errAt(at.block, "with cluster blocks, name the cluster that holds the keys' Secrets and the challenges: cluster NAME")
	}
	for _, s := range g.clusters {
		if s.name == g.updatesCluster {
			return s.resolved(g.clusterOptions), nil
		}
	}
	return clusterOptions{}, at.errAt(at.clusOp, "cluster %s: no cluster block of that name", g.updatesCluster)
}

// setupUpdates runs the updates service with the plugin, when the option is
// on. UPDATE messages come on the service's own listen address (see package
// acmeupdate: a MAC covers bytes that CoreDNS does not hand a plugin), never
// through CoreDNS, which answers them NOTIMP.
func (g *Gateway) setupUpdates(c *caddy.Controller) error {
	if g.updateOpts == nil {
		return nil
	}
	local, err := g.localOptions()
	if err != nil {
		return err
	}
	if !slices.Contains(local.resources, "DNSEndpoint") {
		return g.updatesAt.errAt(g.updatesAt.block, "the challenges are DNSEndpoints: add DNSEndpoint to resources")
	}
	if g.discovery != nil || g.clusterAPI != nil {
		if g.ownership != index.Union && g.viewFilters() {
			return g.updatesAt.errAt(g.updatesAt.block, "with clusterapi, ownership cannot be read past the block's namespaces, label, class and address filters: remove them or use ownership union")
		}
	}
	if g.owners, err = g.newOwnerView(g.kubeconfigAPI); err != nil {
		return fmt.Errorf("updates: %w", err)
	}
	g.newUpdates()
	c.OnStartup(func() error {
		cfg, err := watch.RestConfig(local.kubeconfig, local.kubecontext)
		if err != nil {
			return fmt.Errorf("updates: %w", err)
		}
		if g.owners != nil {
			g.owners.start()
		}
		return g.updates.Start(cfg)
	})
	c.OnShutdown(func() error {
		g.updates.Stop()
		if g.owners != nil {
			g.owners.stop()
		}
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
		Authorizer: updateAuthorizer{g},
		OnReject:   g.updateRefused,
	})
}

// localCluster returns the local cluster (see localOptions) among the
// clusters the block reads, or nil.
func (g *Gateway) localCluster() *fleet.Cluster {
	for _, cl := range g.fleet.List() {
		if cl.Name == g.updatesCluster {
			return cl
		}
	}
	return nil
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
func (g *Gateway) overlayTXT(qname string, answer, ns []dns.RR, res index.Result) ([]dns.RR, []dns.RR, index.Result) {
	if g.updates == nil || res == index.Delegation || res == index.ServerFailure {
		return answer, ns, res
	}
	rrs, ok := g.updates.Answer(qname, answer)
	if !ok {
		return answer, ns, res
	}
	return rrs, nil, index.Success // the overlay only adds: never empty
}
