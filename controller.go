package gateway

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-e581d630/k8s_gateway/persist"

	"github.com/seed-e581d630/k8s_gateway/source"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// timing is how long the plugin and its controllers wait. Tests shorten it.
type timing struct {
	// startupWait is how long OnStartup waits for the first sync, so that a
	// restart or reload does not answer SERVFAIL while the informers list.
	startupWait time.Duration
	// reprobe is how often a kind that the cluster does not serve, or that
	// RBAC forbids, is tried again.
	reprobe time.Duration
	// clusterWait is how long the plugin waits, after the first of several
	// clusters has synced, for the others before it becomes ready.
	clusterWait time.Duration
	// health is how often a named cluster's contact with its API server is
	// checked; a cluster without contact for unreachableAfter is reported.
	health, unreachableAfter time.Duration
	// guard are the retry waits of the informers' list and watch calls, and
	// of the first probe.
	guard guardTiming
	// persist is when the copies of the persist option are written.
	persist persist.Timing
}

// defaultTiming is the timing of a running plugin.
var defaultTiming = timing{
	startupWait: 5 * time.Second, reprobe: 10 * time.Second, clusterWait: 10 * time.Second,
	health: 2 * time.Second, unreachableAfter: 10 * time.Second, guard: defaultGuardTiming,
	persist: persist.Timing{Interval: time.Second, Refresh: soaRefresh * time.Second},
}

// sink receives the records of objects; *index.Index is one.
type sink interface {
	// UpdateClaim replaces the records that the object key publishes, with
	// the claim of its owner; nil records remove them.
	UpdateClaim(key string, claim index.Claim, rrs []dns.RR)
	// SetDomains sets the domains delegated to a namespace.
	SetDomains(namespace string, domains []string)
}

// controllerConfig is what a controller reads from its cluster, and how.
type controllerConfig struct {
	sources         source.Config
	resources       []string            // kinds to publish
	labelSelector   string              // for every published kind ...
	labelSelectors  map[string]string   // ... unless set for the kind here
	namespaces      []string            // publish only from these; all when empty
	nameservers     []string            // "namespace/name" of the nameservers' own Services
	reverse         bool                // reverse zones are configured: publish PTR records
	ownership       index.Policy        // with Delegated, Namespaces carry their domains
	delegations     map[string][]string // with Delegated: namespace → domains of the Corefile
	prefix          string              // prefix of the object keys: the cluster's name and "/", or ""
	cluster         string              // the cluster's name, or "" for a block's one cluster
	nameserverZones []string            // the zones of the nameservers' names: the block's
	zonesLabel      string              // the zones label of its metrics
	timing          timing
}

// controller runs the informers of one cluster and puts the records of its
// objects into a sink. It knows nothing of the plugin, which waits for
// synced and then publishes.
type controller struct {
	cfg controllerConfig
	api apiClient
	out sink

	mu        sync.Mutex
	warnings  map[string]string        // object key → last warnings logged
	informers map[informerKey]*watched // running informers (registry.go)
	states    []*kindState             // of every informer started, for the cluster's health
	stopCh    chan struct{}
	wg        sync.WaitGroup
	syncedCh  chan struct{} // closed once every enabled kind has synced
	kinds     int           // informers running at the first sync

	// routeMu serializes the Gateway API kinds, whose records depend on other
	// objects: a route is computed from the Gateway and Namespace stores, and a
	// Gateway or Namespace change recomputes its routes. With one lock, the
	// last computation always sees the newest stores.
	routeMu sync.Mutex
}

// watched is one informer the controller runs.
type watched struct {
	kind      *source.Kind // as configured
	version   *source.Kind // the version of kind read: kind or one of kind.older
	namespace string
	options   func(*metav1.ListOptions)
	key       func(obj metav1.Object) string
	records   func(obj any) source.Result
	informer  cache.SharedIndexInformer // set once started
	stop      chan struct{}             // closed to stop this informer alone
	// retired is set when a newer version's informer has replaced this one:
	// its events are ignored from then on.
	retired atomic.Bool
	// nameserver marks the informers of the nameservers' own Services, which
	// give the NS names and glue whatever the namespaces option says.
	nameserver bool
	// api is what the informer's apiGuard knows of the API server; set once started.
	api *kindState
}

func newController(cfg controllerConfig, api apiClient, out sink) *controller {
	return &controller{
		cfg:       cfg,
		api:       api,
		out:       out,
		warnings:  map[string]string{},
		informers: map[informerKey]*watched{},
		syncedCh:  make(chan struct{}),
	}
}

// what names the informer in log lines: its kind, and its namespace if it
// reads only one.
func (w *watched) what() string {
	switch {
	case w.namespace == "" || w.nameserver:
		return w.kind.Name
	case w.kind.Cluster:
		return w.kind.Name + " " + w.namespace
	}
	return w.kind.Name + " in namespace " + w.namespace
}

// watches returns the informers the configuration asks for: with the
// namespaces option, one per listed namespace for each namespaced kind, and
// one per listed Namespace object, so that Roles in those namespaces are all
// the reading it needs (IngressClasses excepted).
func (c *controller) watches() []*watched {
	var ws []*watched
	routes := false
	scopes := []string{""}
	if len(c.cfg.namespaces) > 0 {
		scopes = slices.Compact(slices.Sorted(slices.Values(c.cfg.namespaces)))
	}
	add := func(k *source.Kind, sel string) {
		in := scopes
		if k.Cluster && !k.ByName {
			in = []string{""}
		}
		for _, ns := range in {
			w := &watched{
				kind:      k,
				version:   k,
				namespace: ns,
				options:   func(o *metav1.ListOptions) { o.LabelSelector = sel },
				key: func(o metav1.Object) string {
					return c.cfg.prefix + k.Name + "/" + o.GetNamespace() + "/" + o.GetName()
				},
			}
			if k.Records != nil {
				w.records = func(obj any) source.Result { return k.Records(obj, &c.cfg.sources, c) }
			}
			ws = append(ws, w)
		}
	}
	for _, name := range c.cfg.resources {
		k := source.KindByName(name)
		routes = routes || k.Route != nil
		if !c.api.reads(k) {
			continue // no client for it (unit tests with a fake core client)
		}
		sel, ok := c.cfg.labelSelectors[name]
		if !ok {
			sel = c.cfg.labelSelector
		}
		add(k, sel)
	}
	if slices.Contains(c.cfg.resources, "Ingress") && len(c.cfg.sources.IngressClasses) > 0 && c.api.reads(source.IngressClassKind) {
		// A class-less Ingress has the default IngressClass.
		add(source.IngressClassKind, "")
	}
	namespaces := false
	if routes && c.api.reads(source.GatewayKind) {
		// Routes publish through the kinds they depend on.
		for _, k := range routeContextKinds {
			add(k, "")
		}
		namespaces = true
	}
	if !namespaces && c.cfg.ownership == index.Delegated && c.api.reads(source.NamespaceKind) {
		// Namespaces carry their delegated domains.
		add(source.NamespaceKind, "")
	}
	// The nameserver's own Services publish the NS names and their glue.
	svc := source.KindByName("Service")
	nsSources := c.cfg.sources
	if c.cfg.nameserverZones != nil {
		nsSources.Zones = c.cfg.nameserverZones
	}
	for _, nsName := range c.cfg.nameservers {
		namespace, name, _ := strings.Cut(nsName, "/")
		ws = append(ws, &watched{
			kind:      svc,
			version:   svc,
			namespace: namespace,
			options:   func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + name },
			key: func(o metav1.Object) string {
				return c.cfg.prefix + "Nameserver/" + o.GetNamespace() + "/" + o.GetName()
			},
			records:    func(obj any) source.Result { return source.NameserverRecords(obj.(*source.Service), &nsSources) },
			nameserver: true,
		})
	}
	return ws
}

// start runs the informers in the background; synced tells when they have
// synced.
func (c *controller) start() {
	c.stopCh = make(chan struct{})
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.run()
	}()
}

// synced is closed once every kind the cluster serves and allows has synced.
func (c *controller) synced() <-chan struct{} { return c.syncedCh }

// stop stops every informer and waits for their goroutines.
func (c *controller) stop() {
	if c.stopCh == nil {
		return
	}
	close(c.stopCh)
	c.wg.Wait()
	c.stopCh = nil
}

// run probes every watched kind, starts the informers of those the cluster
// serves and allows, and closes syncedCh when they have synced.
// Kinds that are not served or are forbidden are retried in the background,
// and kinds with several versions follow the newest the cluster serves.
func (c *controller) run() {
	var syncs []cache.InformerSynced
	var running, disabled []*watched
	ws := c.watches()
	errs := c.probeAll(ws)
	for i, w := range ws {
		err := errs[i]
		switch {
		case err == nil:
			syncs = append(syncs, c.startInformer(w, true))
			running = append(running, w)
		case errors.Is(err, errStopped):
			return
		default:
			log.Warningf("%s disabled: %v; retrying every %s", w.what(), err, c.cfg.timing.reprobe)
			disabled = append(disabled, w)
		}
	}
	if !c.waitForSync(syncs) {
		return
	}
	c.kinds = countKinds(running)
	close(c.syncedCh)
	setKindMetrics(c.cfg.zonesLabel, running, disabled)

	// Try the disabled kinds again from time to time, and look for newer
	// versions of the kinds that have several.
	for len(disabled) > 0 || slices.ContainsFunc(running, func(w *watched) bool { return len(w.kind.Older) > 0 }) {
		select {
		case <-c.stopCh:
			return
		case <-time.After(c.cfg.timing.reprobe):
		}
		var still []*watched
		for _, w := range disabled {
			if err := c.probeOnce(w); err != nil {
				still = append(still, w)
				continue
			}
			log.Infof("%s enabled", w.what())
			c.startInformer(w, true)
			running = append(running, w)
		}
		disabled = still
		// One discovery round for every kind with several versions.
		var versioned []*source.Kind
		for _, w := range running {
			if len(w.kind.Older) > 0 {
				versioned = append(versioned, w.kind)
			}
		}
		served, err := c.discover(versioned)
		for i, w := range running {
			if len(w.kind.Older) == 0 || err != nil {
				continue
			}
			v := newestServed(w.kind, served)
			if v == nil || v == w.version {
				continue // a CRD that is gone keeps its informer, as any kind
			}
			// The new version must be listable (RBAC is per resource, and
			// XListenerSet and ListenerSet are two), else the informer
			// would never sync: keep the old one and try again later.
			if err := c.listOnce(&watched{kind: w.kind, version: v, namespace: w.namespace, options: w.options}); err != nil {
				log.Warningf("%s: cannot read %s yet, still reading %s: %v", w.what(), v.GroupVersion, w.version.GroupVersion, err)
				continue
			}
			nw, ok := c.switchVersion(w, v)
			if !ok {
				return // stopped
			}
			running[i] = nw
		}
		setKindMetrics(c.cfg.zonesLabel, running, disabled)
	}
}

// countKinds returns how many kinds ws read: with the namespaces option a
// kind has several informers.
func countKinds(ws []*watched) int {
	names := map[string]bool{}
	for _, w := range ws {
		names[w.kind.Name] = true
	}
	return len(names)
}

// update publishes the records of an added or changed object.
func (c *controller) update(w *watched, obj any) {
	meta, ok := obj.(metav1.Object)
	if !ok || w.retired.Load() {
		return
	}
	c.counted(w)
	if c.dependent(w.kind) {
		c.routeMu.Lock()
		defer c.routeMu.Unlock()
	}
	if w.kind == source.NamespaceKind {
		c.delegate(meta, false)
	}
	c.publish(w, meta, obj)
	c.refreshDependents(w.kind, meta)
}

// remove withdraws the records of a deleted object.
func (c *controller) remove(w *watched, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	meta, ok := obj.(metav1.Object)
	if !ok || w.retired.Load() {
		return
	}
	c.counted(w)
	if c.dependent(w.kind) {
		c.routeMu.Lock()
		defer c.routeMu.Unlock()
	}
	if w.records != nil {
		key := w.key(meta)
		c.logWarnings(key, nil)
		c.out.UpdateClaim(key, index.Claim{}, nil)
	}
	if w.kind == source.NamespaceKind {
		c.delegate(meta, true)
	}
	c.refreshDependents(w.kind, meta)
}

// counted counts an event of an informer.
func (c *controller) counted(w *watched) {
	eventsTotal.WithLabelValues(w.kind.Name).Inc()
	if c.cfg.cluster != "" {
		clusterEvents.WithLabelValues(c.cfg.cluster).Inc()
	}
}

// publish computes and indexes the records of one object.
func (c *controller) publish(w *watched, meta metav1.Object, obj any) {
	if w.records == nil {
		return
	}
	key := w.key(meta)
	if !w.nameserver && !c.namespaceAllowed(meta.GetNamespace()) {
		c.out.UpdateClaim(key, index.Claim{}, nil)
		return
	}
	res := w.records(obj)
	c.logWarnings(key, res.Warnings)
	if c.cfg.reverse {
		res.RRs = source.WithPTR(res.RRs)
	}
	c.out.UpdateClaim(key, claimOf(w, meta, c.cfg.nameservers), res.RRs)
}

// namespaceAllowed applies the namespaces option to an object's namespace.
func (c *controller) namespaceAllowed(ns string) bool {
	return len(c.cfg.namespaces) == 0 || ns == "" || slices.Contains(c.cfg.namespaces, ns)
}

// logWarnings logs what a source found wrong with an object, once per change.
func (c *controller) logWarnings(key string, warnings []string) {
	text := strings.Join(warnings, "; ")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.warnings[key] == text {
		return
	}
	if text == "" {
		delete(c.warnings, key)
		return
	}
	c.warnings[key] = text
	log.Warningf("%s: %s", key, text)
}
