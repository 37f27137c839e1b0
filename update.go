package gateway

import (
	"fmt"
	"strings"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/acmeupdate"
	"github.com/seed-e581d630/k8s_gateway/fleet"
	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/watch"
)

// The updates option: RFC 2136 UPDATE of ACME DNS-01 challenges (package
// acmeupdate), parsed and set up in setup_updates.go, its ownership decided
// in update_owners.go and update_authorizer.go.

const eventUpdateRefused = "DNSUpdateRefused" // the reason of the Event of a refused update

// updatesFeature is the updates option.
type updatesFeature struct {
	opts *acmeupdate.Options // the updates block; nil without
	at   updatesLines        // where the block is, for errors
	// cluster: the cluster of the keys, Secrets and challenges ("" for the
	// block's one cluster).
	cluster string
	service *acmeupdate.Service
	// owners: the unfiltered owner view (update_owners.go); nil when the
	// block's own readers show everything.
	owners *readers
	// kinds: what the blocks of the Corefile publish, by cluster
	// (recordKinds); complete once every block is set up.
	kinds map[string]map[string]bool
}

// newUpdateService makes the updates service of the block: the index is its
// zone, the block's ownership policy its authorizer.
func newUpdateService(g *Gateway) *acmeupdate.Service {
	return acmeupdate.NewService(g.updates.opts, acmeupdate.Wiring{
		Zones:      g.Zones,
		Zone:       acmeupdate.IndexZone(g.Zones, g.snapshot),
		Authorizer: &updateAuthorizer{g: g},
		OnReject:   func(r acmeupdate.Rejection) { updateRefused(g, r) },
	})
}

// localCluster returns the local cluster (see localOptions) among the
// clusters the block reads, or nil.
func localCluster(g *Gateway) *fleet.Cluster {
	for _, cl := range g.fleet.List() {
		if cl.Name == g.updates.cluster {
			return cl
		}
	}
	return nil
}

// updateRefused gives the tenant an Event (with the events option) on the
// Secret of its key, or its Namespace for a Corefile key.
func updateRefused(g *Gateway, r acmeupdate.Rejection) {
	if r.Namespace == "" {
		return // no key: no tenant to tell
	}
	cl := localCluster(g)
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

// overlayTXT puts the challenges this replica took, and the informer has not
// brought back yet, into a TXT answer (see acmeupdate.Overlay).
func (f *updatesFeature) overlayTXT(qname string, answer, ns []dns.RR, res index.Result) ([]dns.RR, []dns.RR, index.Result) {
	if f.service == nil || res == index.Delegation || res == index.ServerFailure {
		return answer, ns, res
	}
	rrs, ok := f.service.Answer(qname, answer)
	if !ok {
		return answer, ns, res
	}
	return rrs, nil, index.Success // the overlay only adds: never empty
}
