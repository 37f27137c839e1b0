// Package gateway implements the k8s_gateway CoreDNS plugin: authoritative DNS
// for the external addresses of a Kubernetes cluster's Ingresses, Services and
// Gateway API routes, answered from client-go informers.
package gateway

import (
	"context"
	"net/netip"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/fall"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
	"github.com/seed-e581d630/k8s_gateway/persist"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch"
)

// timing is how long the plugin and its controllers wait. Tests shorten it.
type timing struct {
	// startupWait is how long OnStartup waits for the first sync, so that a
	// restart or reload does not answer SERVFAIL while the informers list.
	startupWait time.Duration
	// reprobe is how often a kind that the cluster does not serve, or that
	// RBAC forbids, is tried again.
	reprobe time.Duration
	// refusalGrace is how long a kind never listed retries a refusal (403,
	// 401) before it is disabled: a starting API server refuses until its
	// authorizer is ready.
	refusalGrace time.Duration
	// clusterWait is how long the plugin waits, after the first of several
	// clusters has synced, for the others before it becomes ready.
	clusterWait time.Duration
	// health is how often a named cluster's contact with its API server is
	// checked; a cluster without contact for unreachableAfter is reported.
	health, unreachableAfter time.Duration
	// guard are the retry waits of the informers' list and watch calls, and
	// of the first probe.
	guard watch.GuardTiming
	// persist is when the copies of the persist option are written.
	persist persist.Timing
}

// defaultTiming is the timing of a running plugin.
var defaultTiming = timing{
	startupWait: 5 * time.Second, reprobe: 10 * time.Second, refusalGrace: 10 * time.Second, clusterWait: 10 * time.Second,
	health: 2 * time.Second, unreachableAfter: 10 * time.Second, guard: watch.DefaultGuardTiming,
	persist: persist.Timing{Interval: time.Second, Refresh: soaRefresh * time.Second},
}

// Gateway is the plugin handler. Each k8s_gateway block of a Corefile makes
// its own Gateway, with its own informers and index. The table of
// setup_options.go parses the block's options into the values below; the
// core of each feature is a package of its own (xfr, catalog, delegation,
// persist, acmeupdate), and a file of the root wires it in.
type Gateway struct {
	Next  plugin.Handler
	Zones []string // fully qualified, lower case
	Fall  fall.F

	// zoneOptions make the zones' SOA and NS records (apex.go).
	zoneOptions
	// clusterOptions are the block's: those of its one cluster, and the
	// defaults of the clusters that cluster blocks name.
	clusterOptions
	ownership   index.Policy         // who may publish at a name
	tenantQuota int                  // records a namespace may publish: 0 any number, -1 the policy's default (quota.go)
	addresses   source.AddressFilter // the include and exclude options
	clusters    []clusterSpec        // the cluster blocks, in order; none: the block reads one cluster
	// clusterAPI: the clusterapi option; the readers' discovery then finds clusters.
	clusterAPI      *clusterAPIConfig
	apiLimits       watch.ClientLimits // the API clients' rate limits (apiserver_qps, apiserver_burst)
	defaultLocation index.Location     // the default_location option (steering.go)
	view            string             // the server block's view (the view plugin), a label of the per-zone gauges
	listener        string             // the server block's listener (reload.go, listenerOf)

	// readers are the block's index and the clusters that feed it (readers.go).
	readers
	timing timing
	now    func() time.Time // the clock of the zones' serials; time.Now when nil
	// runState is what start and stop share (lifecycle.go).
	runState

	// The features: each is a value of its own, zero without its option.
	xfer      transfers      // zone transfers and NOTIFY (transfer.go)
	catalog   catalogFeature // the catalog option (catalog.go)
	cds       cdsFeature     // the cds option (cds.go)
	parent    parentFeature  // the parent option (parent.go)
	updates   updatesFeature // the updates option (update.go)
	persist   persistFeature // the persist option (persist.go)
	tlsReload []string       // the CERT and KEY of the tls_reload option (tlsreload.go); nil without
}

// zoneOptions are the options that make the SOA and NS records of the
// zones, and say which zones are the block's own.
type zoneOptions struct {
	ttl       uint32
	apex      string // nameserver name, relative to each zone or absolute
	secondary string // peer nameserver name, same form; may be empty
	// apexAddrs, secondaryAddrs: the names' addresses given in the Corefile
	// (nameserver_static.go); none: a Service's, or none.
	apexAddrs, secondaryAddrs []netip.Addr
	// clusterZones: the cluster_zones option (clusterzones.go); ownZones is
	// then the number of the block's own zones, which come first in Zones.
	clusterZones bool
	ownZones     int
}

// newGateway returns a Gateway with the defaults of the original plugin.
func newGateway() *Gateway {
	return &Gateway{
		zoneOptions:    zoneOptions{ttl: defaultTTL, apex: defaultApex},
		clusterOptions: newClusterOptions(),
		timing:         defaultTiming,
		tenantQuota:    -1,
	}
}

// buildIndex prepares the index, the NS records and the features that read
// the zones, once the configuration is complete.
func (g *Gateway) buildIndex() {
	var serials []uint32
	if g.persist.dir != "" {
		g.persist.copies, serials = persist.Load(persist.LoadConfig{Dir: g.persist.dir, Zones: g.Zones, SOA: g.newSOA, NS: g.nsRecords, Now: g.now})
	}
	// The blocks that read one cluster (the views of a split horizon) share
	// what their indexes can; the cluster is the kubeconfig and context as
	// written (the in-cluster account when empty).
	shared, release := index.AcquireShared(g.kubeconfig + "\x00" + g.kubecontext)
	g.readers = readers{release: release, index: g.newIndex(index.Config{Shared: shared, Listener: indexListener{g}, Serials: serials, Previous: g.previous})}
	// The catalog's serial is the time of the start: a reload that changes
	// the members gives a larger one.
	g.catalog.build(g.Zones, g.ttl, uint32(g.clock().Unix()))
	g.parent.build(g)
}

// newIndex returns an index of the block's zones, with their SOA and NS
// records, clock, ownership policy and delegated domains, and cfg's Shared,
// Listener and Serials: the block's own (buildIndex), or its owner view's
// (update_owners.go).
func (g *Gateway) newIndex(cfg index.Config) *index.Index {
	cfg.Zones, cfg.SOA, cfg.NS, cfg.Now = g.Zones, g.newSOA, g.nsRecords, g.now
	cfg.Policy, cfg.Domains, cfg.Quota = g.ownership, g.indexDomains(), g.quota()
	return index.New(cfg)
}

// clock returns the time of the plugin's clock.
func (g *Gateway) clock() time.Time {
	if g.now != nil {
		return g.now()
	}
	return time.Now()
}

// snapshot returns what zone zi is answered from: the index once the
// informers have synced, before that the zone's copy from disk while it is
// fresh; nil when neither (SERVFAIL).
func (g *Gateway) snapshot(zi int) *index.Snapshot {
	if g.ready.Load() {
		return g.index.Snapshot()
	}
	if g.persist.copies != nil {
		return g.persist.copies.Answering(zi, g.clock())
	}
	return nil
}

// Name implements plugin.Handler.
func (g *Gateway) Name() string { return metrics.Plugin }

// Ready implements ready.Readiness: true once every enabled kind has synced,
// and before that while every zone has a fresh copy from disk (see persist).
func (g *Gateway) Ready() bool {
	if g.ready.Load() {
		return true
	}
	return g.persist.copies != nil && g.persist.copies.AllFresh(g.clock())
}

// ServeDNS implements plugin.Handler: it finds the zone of the query (one
// of the block's, or its catalog), checks the request once (request.go),
// then answers from the catalog, the CDS records or the zone's snapshot.
func (g *Gateway) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	state := request.Request{W: w, Req: r}
	qname := queryName(&state)
	zi := index.ZoneOf(g.Zones, qname)
	var apex string
	switch {
	case zi >= 0:
		apex = g.Zones[zi]
	case g.catalog.serves(r, qname):
		apex = g.catalog.zone.Name()
	default:
		return plugin.NextOrFailure(g.Name(), g.Next, ctx, w, r)
	}
	if rcode, done := checkRequest(w, r, &state, qname, apex); done {
		return rcode, nil
	}
	qtype := state.QType()
	if zi < 0 {
		answer, ns, nxdomain := g.catalog.lookup(qname, qtype)
		return writeAuthoritative(w, r, qname, answer, ns, nxdomain)
	}
	if rrs := g.cds.answer(zi, qname, qtype); rrs != nil {
		return writeAuthoritative(w, r, qname, rrs, nil, false)
	}
	return g.answer(ctx, w, r, &state, zi, qname, qtype)
}

// answer answers a query of zone zi from its snapshot.
func (g *Gateway) answer(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, state *request.Request, zi int, qname string, qtype uint16) (int, error) {
	snap := g.snapshot(zi)
	if snap == nil {
		return dns.RcodeServerFailure, nil
	}
	client := g.client(ctx)
	answer, ns, extra, res := snap.LookupFor(zi, qname, qtype, &client)
	if qtype == dns.TypeTXT {
		answer, ns, res = g.updates.overlayTXT(qname, answer, ns, res)
	}
	switch res {
	case index.ServerFailure:
		return dns.RcodeServerFailure, nil
	case index.NameError:
		if len(answer) == 0 && g.Fall.Through(qname) {
			return plugin.NextOrFailure(g.Name(), g.Next, ctx, w, r)
		}
	}

	m := new(dns.Msg)
	m.SetReply(r)
	// A referral is not authoritative, but CNAMEs of the zone before it are
	// (RFC 1035 §4.1.1: AA is about the first owner name of the answer).
	m.Authoritative = res != index.Delegation || len(answer) > 0
	m.Answer, m.Ns, m.Extra = withQueryCase(answer, qname, r.Question[0].Name), ns, extra
	if res == index.NameError {
		m.Rcode = dns.RcodeNameError
	}
	echoSubnet(r, m, client.Located)
	if res == index.Success {
		fitAdditional(state, m) // with the echo's OPT, when there is one
	}
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
}
