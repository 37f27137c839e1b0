// Package gateway implements the k8s_gateway CoreDNS plugin: authoritative DNS
// for the external addresses of a Kubernetes cluster's Ingresses, Services and
// Gateway API routes, answered from client-go informers.
package gateway

import (
	"context"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/fall"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/acmeupdate"
	"github.com/seed-e581d630/k8s_gateway/catalog"
	"github.com/seed-e581d630/k8s_gateway/delegation"
	"github.com/seed-e581d630/k8s_gateway/fleet"
	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
	"github.com/seed-e581d630/k8s_gateway/persist"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch"
	"github.com/seed-e581d630/k8s_gateway/xfr"
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
// its own Gateway, with its own informers and index.
type Gateway struct {
	Next  plugin.Handler
	Zones []string // fully qualified, lower case
	Fall  fall.F

	ttl       uint32
	apex      string // nameserver name, relative to each zone or absolute
	secondary string // peer nameserver name, same form; may be empty
	// apexAddrs, secondaryAddrs: the names' addresses given in the Corefile
	// (nameserver_static.go); none: a Service's, or none.
	apexAddrs, secondaryAddrs []netip.Addr

	// clusterOptions are the block's: those of its one cluster, and the
	// defaults of the clusters that cluster blocks name.
	clusterOptions
	ownership   index.Policy         // who may publish at a name
	addresses   source.AddressFilter // the include and exclude options
	clusters    []clusterSpec        // the cluster blocks, in order; none: the block reads one cluster
	fleet       fleet.Fleet          // the clusters the plugin reads, by key prefix
	persistDir  string               // the persist option: the copies of the zones on disk; "" without
	persistLine int                  // the line of the persist option
	view        string               // the server block's view (the view plugin), a label of the per-zone gauges
	// defaultLocation: the default_location option (steering.go).
	defaultLocation index.Location
	// clusterZones: the cluster_zones option (clusterzones.go); ownZones is
	// then the number of the block's own zones, which come first in Zones.
	clusterZones bool
	ownZones     int
	// clusterAPI: the clusterapi option; discovery then finds clusters.
	clusterAPI *clusterAPIConfig
	discovery  *fleet.Discovery

	index  *index.Index
	timing timing
	stopCh chan struct{} // closed by stop
	// noStartupWait: start returns at once instead of waiting for the sync.
	noStartupWait bool
	wg            sync.WaitGroup
	ready         atomic.Bool
	now           func() time.Time // the clock of the zones' serials; time.Now when nil
	notifier      xfr.Notifier     // NOTIFY through the server's transfer plugin
	ixfr          xfr.Histories    // what transfers served, for incremental IXFR
	// copies are the zones' copies in persistDir: read at startup, answered
	// until the informers sync; nil without persist.
	copies *persist.Copies
	// unregisterCopies takes the plugin off the copy metric; nil when not on it.
	unregisterCopies func()
	// unregisterSizes takes the plugin off the zone size metrics.
	unregisterSizes func()
	// apiLimits are the API clients' rate limits (apiserver_qps, apiserver_burst).
	apiLimits watch.ClientLimits
	// tlsReload: the CERT and KEY of the tls_reload option (tlsreload.go); nil without.
	tlsReload []string
	// updateOpts, updates: the updates option (update.go); nil without.
	updateOpts *acmeupdate.Options
	updates    *acmeupdate.Service
	updatesAt  updatesLines
	// updatesCluster: the cluster of the keys, Secrets and challenges ("" for
	// the block's one cluster); owners: the unfiltered view (update_owners.go).
	updatesCluster string
	owners         *ownerView
	// catalogOpt, catalog: the catalog option (catalog.go); nil without.
	catalogOpt *catalogOption
	catalog    *catalog.Zone
	// cdsOpt, cds: the cds option (cds.go); nil without.
	cdsOpt *cdsOption
	cds    atomic.Pointer[delegation.CDS]
	// parentOpt, parent: the parent option (parent.go); nil without.
	parentOpt *parentOption
	parent    *delegation.Syncer
	// releaseShared ends the block's use of its cluster's index.Shared
	// (index.AcquireShared); nil before buildIndex.
	releaseShared func()
}

// newGateway returns a Gateway with the defaults of the original plugin.
func newGateway() *Gateway {
	return &Gateway{
		ttl:            defaultTTL,
		apex:           defaultApex,
		clusterOptions: newClusterOptions(),
		timing:         defaultTiming,
	}
}

// buildIndex prepares the index and NS records once the configuration is complete.
func (g *Gateway) buildIndex() {
	var serials []uint32
	if g.persistDir != "" {
		g.copies, serials = persist.Load(persist.LoadConfig{Dir: g.persistDir, Zones: g.Zones, SOA: g.newSOA, NS: g.nsRecords, Now: g.now})
	}
	// The blocks that read one cluster (the views of a split horizon) share
	// what their indexes can; the cluster is the kubeconfig and context as
	// written (the in-cluster account when empty).
	shared, release := index.AcquireShared(g.kubeconfig + "\x00" + g.kubecontext)
	g.releaseShared = release
	g.index = index.New(index.Config{
		Shared:   shared,
		Zones:    g.Zones,
		SOA:      g.newSOA,
		NS:       g.nsRecords,
		Listener: indexListener{g},
		Now:      g.now,
		Policy:   g.ownership,
		Domains:  g.indexDomains(),
		Serials:  serials,
	})
	// The catalog's serial is the time of the start: a reload that changes
	// the members gives a larger one.
	g.buildCatalog(uint32(g.clock().Unix()))
	if g.parentOpt != nil {
		g.parent = g.newParentSyncer()
	}
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
	if g.copies != nil {
		return g.copies.Answering(zi, g.clock())
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
	return g.copies != nil && g.copies.AllFresh(g.clock())
}

// ServeDNS implements plugin.Handler.
func (g *Gateway) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	state := request.Request{W: w, Req: r}
	qname := queryName(&state)
	zi := index.ZoneOf(g.Zones, qname)
	if zi < 0 && g.catalog != nil && r.Opcode == dns.OpcodeQuery && dns.IsSubDomain(g.catalog.Name(), qname) {
		return g.serveCatalogQuery(w, r, &state, qname)
	}
	if zi < 0 {
		return plugin.NextOrFailure(g.Name(), g.Next, ctx, w, r)
	}
	if moreThanOneOPT(r) {
		// RFC 6891 §6.1.1: FORMERR. CoreDNS reads only the first OPT record.
		// The reply carries no OPT, as Knot's and BIND's: which one would it
		// echo? CoreDNS's writer adds the request's first OPT to a reply that
		// has none, so the request loses its OPT records first.
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeFormatError)
		r.Extra = slices.DeleteFunc(r.Extra, func(rr dns.RR) bool { return rr.Header().Rrtype == dns.TypeOPT })
		w.WriteMsg(m)
		return dns.RcodeSuccess, nil // written: CoreDNS must not write another
	}
	if badSubnet(r) {
		// RFC 7871 §6: FORMERR. CoreDNS's writer gives the reply the
		// request's OPT without its ECS option, as BIND's.
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeFormatError)
		w.WriteMsg(m)
		return dns.RcodeSuccess, nil
	}
	if r.Opcode == dns.OpcodeUpdate {
		return g.serveUpdate(ctx, w, r)
	}
	if r.Opcode != dns.OpcodeQuery {
		return dns.RcodeNotImplemented, nil
	}
	qtype := state.QType()
	if qtype == dns.TypeAXFR || qtype == dns.TypeIXFR {
		return refuseTransfer(w, r, qname, g.Zones[zi])
	}
	if c := state.QClass(); c != dns.ClassINET && c != dns.ClassANY {
		return dns.RcodeRefused, nil
	}
	if rrs := g.cds.Load().Answer(zi, qname, qtype); rrs != nil {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		m.Answer = withQueryCase(rrs, qname, r.Question[0].Name)
		w.WriteMsg(m)
		return dns.RcodeSuccess, nil
	}
	snap := g.snapshot(zi)
	if snap == nil {
		return dns.RcodeServerFailure, nil
	}

	client := g.client(ctx)
	answer, ns, extra, res := snap.LookupFor(zi, qname, qtype, &client)
	if qtype == dns.TypeTXT {
		answer, ns, res = g.overlayTXT(qname, answer, ns, res)
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
		fitAdditional(&state, m) // with the echo's OPT, when there is one
	}
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
}

// refuseTransfer answers a zone transfer that reaches the plugin: the
// transfer plugin, when configured, serves the zones' own. A name below an
// apex is no zone of this server: NOTAUTH (RFC 5936 §2.2.1), as BIND and Knot
// answer, written here (CoreDNS writes only SERVFAIL, REFUSED, FORMERR and
// NOTIMP for a plugin). A transfer of the zone itself is REFUSED: no transfer
// plugin, or one that does not serve it.
func refuseTransfer(w dns.ResponseWriter, r *dns.Msg, qname, apex string) (int, error) {
	if qname == apex {
		return dns.RcodeRefused, nil
	}
	m := new(dns.Msg)
	m.SetRcode(r, dns.RcodeNotAuth)
	w.WriteMsg(m)
	return dns.RcodeNotAuth, nil
}

// moreThanOneOPT reports whether a request carries two OPT records or more.
func moreThanOneOPT(r *dns.Msg) bool {
	n := 0
	for _, rr := range r.Extra {
		if rr.Header().Rrtype == dns.TypeOPT {
			n++
		}
	}
	return n > 1
}
