package gateway

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/seed-e581d630/k8s_gateway/acmeupdate"
	"github.com/seed-e581d630/k8s_gateway/fleet"
	"github.com/seed-e581d630/k8s_gateway/index"
)

// updateAuthorizer is the block's acmeupdate.Authorizer and Completer.
type updateAuthorizer struct {
	g       *Gateway
	flushed sync.Once // the owner view's first Flush
}

// view returns what the decision reads: the owner view, or the block's
// own readers.
func (a *updateAuthorizer) view() *readers {
	if v := a.g.updates.owners; v != nil {
		return v
	}
	return &a.g.readers
}

// Complete implements acmeupdate.Completer: every cluster the decision
// reads has listed every kind, none is refused, and each is in contact.
// Union reads no owner: it is always complete.
func (a *updateAuthorizer) Complete() (bool, string) {
	g := a.g
	if g.ownership == index.Union {
		return true, ""
	}
	clusters := a.view().fleet.List()
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
	if v := g.updates.owners; v != nil {
		a.flushed.Do(v.index.Flush) // the policy's verdicts, once everything is read
	}
	return true, ""
}

// MayChallenge implements acmeupdate.Authorizer with the ownership policy
// (acmeupdate.Ownership), on the view. The keys' namespaces are the local
// cluster's: with cluster blocks, "<cluster>/<namespace>" in the index.
func (a *updateAuthorizer) MayChallenge(namespace, zone, name string) (bool, string) {
	g := a.g
	own := acmeupdate.Ownership{Policy: g.ownership, Zones: g.Zones, Nameservers: g.nameserverNames()}
	if g.ownership == index.Union {
		return own.MayChallenge(namespace, zone, name) // no cluster needed to say so
	}
	var cl *fleet.Cluster
	v := a.view()
	for _, c := range v.fleet.List() {
		if c.Name == g.updates.cluster {
			cl = c
		}
	}
	if cl == nil || cl.Controller == nil {
		return false, "the cluster is not read yet"
	}
	prefix := ""
	if cl.Name != "" {
		prefix = cl.Name + "/"
	}
	own.Owners = func(_, name string) []string { return v.index.OwnersBelow(name) }
	own.MayPublish = func(ns, name string) bool {
		return cl.Controller.MayPublish(strings.TrimPrefix(ns, prefix), name)
	}
	return own.MayChallenge(prefix+namespace, zone, name)
}
