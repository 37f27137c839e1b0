package watch

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/informer"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// Timing is how long a controller waits.
type Timing struct {
	// StartupWait is how long the first probe of a kind keeps trying while
	// it fails for a reason that may pass.
	StartupWait time.Duration
	// Reprobe is how often a kind that the cluster does not serve, or that
	// RBAC forbids, is tried again.
	Reprobe time.Duration
	// RefusalGrace is how long the first probe of a kind that was never
	// listed retries a refusal (403, 401), as the API server's authorizer
	// may still be warming up, before it disables the kind.
	RefusalGrace time.Duration
	// Guard are the retry waits of the informers' list and watch calls, and
	// of the first probe.
	Guard GuardTiming
}

// Sink receives the records of objects; *index.Index is one.
type Sink interface {
	// UpdateClaim replaces the records that the object key publishes, with
	// the claim of its owner; nil records remove them.
	UpdateClaim(key string, claim index.Claim, rrs []dns.RR)
	// SetDomains sets the domains delegated to a namespace.
	SetDomains(namespace string, domains []string)
}

// Config is what a controller reads from its cluster, and how.
type Config struct {
	Sources         source.Config
	Resources       []string            // kinds to publish
	LabelSelector   string              // for every published kind ...
	LabelSelectors  map[string][]string // ... unless set for the kind here: any of these (informers.go)
	Namespaces      []string            // publish only from these; all when empty
	Nameservers     []string            // "namespace/name" of the nameservers' own Services
	Reverse         bool                // reverse zones are configured: publish PTR records
	Ownership       index.Policy        // with Delegated, Namespaces carry their domains
	Delegations     map[string][]string // with Delegated: namespace → domains of the Corefile
	Prefix          string              // prefix of the object keys: the cluster's name and "/", or ""
	Cluster         string              // the cluster's name, or "" for a block's one cluster
	NameserverZones []string            // the zones of the nameservers' names: the block's
	ZonesLabel      string              // the zones label of its metrics
	Health          bool                // the health option: claims carry Unhealthy (health.go)
	Priority        int32               // the cluster's priority, carried by every claim
	Weight          uint32              // the cluster's weight (publisher.steer); 0: unset
	Location        index.Location      // the cluster's location, for objects without one
	Failover        time.Duration       // for fleet: the cluster counts as unhealthy after this long silent; 0: never
	Timing          Timing
	// Refused, when set, hears of each name an object is newly refused
	// before its records reach the index (source.Result.Refused).
	Refused func(index.Rejection)
}

// Controller runs the informers of one cluster and puts the records of its
// objects into a sink. It knows nothing of the plugin, which waits for
// synced and then publishes.
type Controller struct {
	cfg Config
	api API

	mu       sync.Mutex
	states   []*informer.State  // of every informer started, for the cluster's health
	unread   map[*watched]error // the kinds not read, and why (complete.go)
	stopCh   chan struct{}
	wg       sync.WaitGroup
	syncedCh chan struct{} // closed once every enabled kind has synced
	kinds    int           // informers running at the first sync

	// The jobs the controller composes. Its own is the lifecycle: starting,
	// switching and stopping the informers (informer.go), and whether its
	// view is whole (complete.go).
	stores *stores     // the running informers, and source.Context over their caches (stores.go)
	routes *routeGraph // what depends on what, and its lock (dependencies.go)
	health *health     // the health tracker (health.go)
	pub    *publisher  // the event path: handlers → records → sink (publish.go, warnings.go)
	probes *prober     // set by Start (probe.go, versions.go)
	share  *sharer     // starts or joins the informers (shared.go)
}

// watched is one informer the controller runs.
type watched struct {
	Kind      *source.Kind // as configured
	Version   *source.Kind // the version of kind read: kind or one of kind.older
	Namespace string
	// alt numbers the informers of a kind listed with several label
	// selectors, one each: 0, 1, ... (selectors.go).
	alt      int
	Options  func(*metav1.ListOptions)
	key      func(obj metav1.Object) string
	records  func(obj any) source.Result
	informer cache.SharedIndexInformer // set once started
	synced   cache.InformerSynced      // this controller's handler has seen the first list; set once started
	stop     chan struct{}             // closed to stop this informer alone
	// retired is set when a newer version's informer has replaced this one:
	// its events are ignored from then on.
	retired atomic.Bool
	// nameserver marks the informers of the nameservers' own Services, which
	// give the NS names and glue whatever the namespaces option says.
	nameserver bool
	// api is what the informer's guard (internal/informer) knows of the API server; set once started.
	api *informer.State
	// off is why the kind is disabled (offReason), the reason of kind_enabled; "" once it runs.
	off string
}

// New returns the controller of cfg, which reads its cluster through api
// and puts the records of its objects into out once started.
func New(cfg Config, api API, out Sink) *Controller {
	c := &Controller{cfg: cfg, api: api, syncedCh: make(chan struct{})}
	c.stores = newStores(&c.cfg)
	c.share = &sharer{api: api, health: cfg.Health, guard: cfg.Timing.Guard}
	c.health = newHealth(&c.cfg, c.stores, out)
	c.pub = newPublisher(&c.cfg, out, c.stores, c.health, c.syncedCh)
	c.routes = c.pub.routes
	return c
}

// SetHealthHook sets what hears of objects (by key, without the cluster's
// prefix) whose addresses turn unhealthy or healthy again; for Events.
func (c *Controller) SetHealthHook(f func(key string, unhealthy bool)) { c.health.setHook(f) }

// SyncedKinds is the number of kinds that had synced when synced closed.
func (c *Controller) SyncedKinds() int { return c.kinds }

// Config is the controller's configuration.
func (c *Controller) Config() Config { return c.cfg }

// Start runs the informers in the background; synced tells when they have
// synced.
func (c *Controller) Start() {
	c.stopCh = make(chan struct{})
	c.probes = &prober{api: c.api, timing: c.cfg.Timing, stop: c.stopCh, joinable: c.share.joinable}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.run()
	}()
}

// Synced is closed once every kind the cluster serves and allows has synced.
func (c *Controller) Synced() <-chan struct{} { return c.syncedCh }

// Stop stops every informer and waits for their goroutines.
func (c *Controller) Stop() {
	if c.stopCh == nil {
		return
	}
	close(c.stopCh)
	c.wg.Wait()
	c.stopCh = nil
	c.pub.releaseWarnings()
}

// run probes every watched kind, starts the informers of those the cluster
// serves and allows, and closes syncedCh when they have synced.
// Kinds that are not served or are forbidden are retried in the background,
// and kinds with several versions follow the newest the cluster serves.
func (c *Controller) run() {
	var syncs []cache.InformerSynced
	var running, disabled []*watched
	ws := c.watches()
	errs := c.probes.all(ws)
	for i, w := range ws {
		err := errs[i]
		switch {
		case err == nil:
			syncs = append(syncs, c.startInformer(w, true))
			running = append(running, w)
		case errors.Is(err, errStopped):
			return
		default:
			log.Warningf("%s disabled: %v; retrying every %s", w.what(), err, c.cfg.Timing.Reprobe)
			w.off = offReason(err)
			disabled = append(disabled, w)
			c.setUnread(w, err)
		}
	}
	if !c.waitForSync(syncs) {
		return
	}
	c.kinds = countKinds(running)
	close(c.syncedCh)
	setKindMetrics(c.cfg.ZonesLabel, running, disabled)

	// Try the disabled kinds again from time to time, and look for newer
	// versions of the kinds that have several.
	for len(disabled) > 0 || slices.ContainsFunc(running, func(w *watched) bool { return len(w.Kind.Older) > 0 }) {
		select {
		case <-c.stopCh:
			return
		case <-time.After(c.cfg.Timing.Reprobe):
		}
		var still []*watched
		for _, w := range disabled {
			if err := c.probes.once(w); err != nil {
				w.off = offReason(err)
				still = append(still, w)
				c.setUnread(w, err)
				continue
			}
			w.off = ""
			// Started, and so registered with its synced function, before
			// it stops counting as unread: Complete never sees a moment in
			// which the kind is neither unread nor waiting for its sync.
			c.startInformer(w, true)
			c.setUnread(w, nil)
			log.Infof("%s enabled", w.what())
			running = append(running, w)
		}
		disabled = still
		// One discovery round for every kind with several versions.
		var versioned []*source.Kind
		for _, w := range running {
			if len(w.Kind.Older) > 0 {
				versioned = append(versioned, w.Kind)
			}
		}
		served, err := c.probes.discover(versioned)
		for i, w := range running {
			if len(w.Kind.Older) == 0 || err != nil {
				continue
			}
			v := newestServed(w.Kind, served)
			if v == nil || v == w.Version {
				continue // a CRD that is gone keeps its informer, as any kind
			}
			// The new version must be listable (RBAC is per resource, and
			// XListenerSet and ListenerSet are two), else the informer
			// would never sync: keep the old one and try again later.
			if err := c.probes.list(&watched{Kind: w.Kind, Version: v, Namespace: w.Namespace, Options: w.Options}); err != nil {
				log.Warningf("%s: cannot read %s yet, still reading %s: %v", w.what(), v.GroupVersion, w.Version.GroupVersion, err)
				continue
			}
			nw, ok := c.switchVersion(w, v)
			if !ok {
				return // stopped
			}
			running[i] = nw
		}
		setKindMetrics(c.cfg.ZonesLabel, running, disabled)
	}
}

// MayPublish reports whether objects of namespace may publish at name
// (source.Context's MayPublish): under the delegated policy, only at or
// below the domains the Corefile or its Namespace's annotation gives it.
func (c *Controller) MayPublish(namespace, name string) bool {
	return c.stores.MayPublish(namespace, name)
}
