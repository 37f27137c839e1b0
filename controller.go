package gateway

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// Timing of the controller; variables so that tests can shorten them.
var (
	// startupWait is how long OnStartup waits for the first sync, so that a
	// restart or reload does not answer SERVFAIL while the informers list.
	startupWait = 5 * time.Second
	// reprobeInterval is how often a kind that the cluster does not serve, or
	// that RBAC forbids, is tried again.
	reprobeInterval = 10 * time.Second
)

// controller runs the informers of one plugin instance and feeds the index.
type controller struct {
	g       *Gateway
	api     apiClient
	reverse bool // reverse zones are configured: publish PTR records
	sources sourceConfig
	// nameservers are the nameservers' own Services, "namespace/name": their
	// claims are the plugin's under every ownership policy.
	nameservers []string
	// noStartupWait: start returns at once instead of waiting for the sync.
	noStartupWait bool
	// guardTiming are the retry waits of the informers' list and watch calls.
	guardTiming guardTiming

	mu        sync.Mutex
	warnings  map[string]string   // object key → last warnings logged
	informers map[string]*watched // running informers by kind name
	stopCh    chan struct{}
	wg        sync.WaitGroup

	// routeMu serializes the Gateway API kinds, whose records depend on other
	// objects: a route is computed from the Gateway and Namespace stores, and a
	// Gateway or Namespace change recomputes its routes. With one lock, the
	// last computation always sees the newest stores.
	routeMu sync.Mutex
}

// watched is one informer the controller runs.
type watched struct {
	kind      *kind // as configured
	version   *kind // the version of kind read: kind or one of kind.older
	namespace string
	options   func(*metav1.ListOptions)
	key       func(obj metav1.Object) string
	records   func(obj any) result
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

// Index names of the Gateway API informers: routes by the Gateways and
// ListenerSets they name as parents, ListenerSets by their Gateway.
const (
	gatewayIndex     = "gateway"
	listenerSetIndex = "listenerset"
)

func newController(g *Gateway, api apiClient) *controller {
	// Checked by the setup; an invalid selector here selects nothing.
	gwSel, err := labels.Parse(g.labelSelector)
	if err != nil {
		gwSel = labels.Nothing()
	}
	return &controller{
		g:   g,
		api: api,
		sources: sourceConfig{
			zones:           g.Zones,
			ttl:             g.ttl,
			ingressClasses:  g.ingressClasses,
			gatewayClasses:  g.gatewayClasses,
			gatewaySelector: gwSel,
		},
		guardTiming: defaultGuardTiming,
		warnings:    map[string]string{},
		informers:   map[string]*watched{},
		reverse:     len(forwardZones(g.Zones)) < len(g.Zones),
		nameservers: g.nameserverServices(),
	}
}

// restConfig returns the client configuration: the kubeconfig when given, else
// the in-cluster configuration, else the default kubeconfig loading rules
// (KUBECONFIG, ~/.kube/config).
func restConfig(kubeconfig, context string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
		overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	} else if cfg, err = rest.InClusterConfig(); err != nil {
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
		if err != nil {
			err = fmt.Errorf("not running in a cluster and no kubeconfig found: %w", err)
		}
	}
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "k8s_gateway"
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// watches returns the informers the configuration asks for.
func (c *controller) watches() []*watched {
	var ws []*watched
	routes := false
	add := func(k *kind, sel string) {
		w := &watched{
			kind:    k,
			version: k,
			options: func(o *metav1.ListOptions) { o.LabelSelector = sel },
			key:     func(o metav1.Object) string { return k.name + "/" + o.GetNamespace() + "/" + o.GetName() },
		}
		if k.records != nil {
			w.records = func(obj any) result { return k.records(obj, &c.sources, c) }
		}
		ws = append(ws, w)
	}
	for _, name := range c.g.resources {
		k := kindByName(name)
		routes = routes || k.route != nil
		if !c.api.reads(k) {
			continue // no client for it (unit tests with a fake core client)
		}
		sel, ok := c.g.labelSelectors[name]
		if !ok {
			sel = c.g.labelSelector
		}
		add(k, sel)
	}
	if slices.Contains(c.g.resources, "Ingress") && len(c.g.ingressClasses) > 0 && c.api.reads(ingressClassKind) {
		// A class-less Ingress has the default IngressClass.
		add(ingressClassKind, "")
	}
	namespaces := false
	if routes && c.api.reads(gatewayKind) {
		// Routes publish through Gateways and ListenerSets, which admit them
		// by namespace labels.
		add(gatewayKind, "")
		add(listenerSetKind, "")
		add(namespaceKind, "")
		namespaces = true
	}
	if !namespaces && c.g.ownership == index.Delegated && c.api.reads(namespaceKind) {
		// Namespaces carry their delegated domains.
		add(namespaceKind, "")
	}
	// The nameserver's own Services publish the NS names and their glue.
	svc := kindByName("Service")
	for _, nsName := range c.g.nameserverServices() {
		namespace, name, _ := strings.Cut(nsName, "/")
		ws = append(ws, &watched{
			kind:       svc,
			version:    svc,
			namespace:  namespace,
			options:    func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + name },
			key:        func(o metav1.Object) string { return "Nameserver/" + o.GetNamespace() + "/" + o.GetName() },
			records:    func(obj any) result { return nameserverRecords(obj.(*corev1.Service), &c.sources) },
			nameserver: true,
		})
	}
	return ws
}

// start runs the informers and waits a little for them to sync, unless
// the server starts for the first time (see setup).
func (c *controller) start() error {
	if c.g.emitEvents {
		if es, ok := c.api.(eventSinker); ok {
			sink, err := es.eventSink()
			if err != nil {
				return err
			}
			c.g.events.Store(newEvents(sink))
		}
	}
	c.stopCh = make(chan struct{})
	synced := make(chan struct{})
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.run(synced)
	}()
	if c.noStartupWait {
		return nil
	}
	select {
	case <-synced:
	case <-time.After(startupWait):
		log.Warningf("starting with unsynced Kubernetes API; answering SERVFAIL until the informers have synced")
	}
	return nil
}

// stop stops every informer and waits for their goroutines.
func (c *controller) stop() {
	if c.stopCh == nil {
		return
	}
	close(c.stopCh)
	c.wg.Wait()
	c.stopCh = nil
	c.g.ready.Store(false)
	c.g.index.Close()
	if e := c.g.events.Swap(nil); e != nil {
		e.stop()
	}
}

// run probes every watched kind, starts the informers of those the cluster
// serves and allows, and marks the plugin ready when they have synced.
// Kinds that are not served or are forbidden are retried in the background,
// and kinds with several versions follow the newest the cluster serves.
func (c *controller) run(synced chan<- struct{}) {
	var syncs []cache.InformerSynced
	var running, disabled []*watched
	started := time.Now()
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
			log.Warningf("%s disabled: %v; retrying every %s", w.kind.name, err, reprobeInterval)
			disabled = append(disabled, w)
		}
	}
	if !c.waitForSync(syncs) {
		return
	}
	c.g.index.Flush()
	c.g.ready.Store(true)
	close(synced)
	log.Infof("synced %d kinds for zones %s: published %d names %s after the informers started",
		len(syncs), strings.Join(c.g.Zones, " "), c.g.index.Snapshot().Len(), time.Since(started).Round(time.Millisecond))
	setKindMetrics(c.g, running, disabled)
	// Decoding the initial lists is the process's biggest burst of garbage,
	// several times the size of what it keeps; give it back to the OS now
	// instead of over the next minutes.
	debug.FreeOSMemory()

	// Try the disabled kinds again from time to time, and look for newer
	// versions of the kinds that have several.
	for len(disabled) > 0 || slices.ContainsFunc(running, func(w *watched) bool { return len(w.kind.older) > 0 }) {
		select {
		case <-c.stopCh:
			return
		case <-time.After(reprobeInterval):
		}
		var still []*watched
		for _, w := range disabled {
			if err := c.probeOnce(w); err != nil {
				still = append(still, w)
				continue
			}
			log.Infof("%s enabled", w.kind.name)
			c.startInformer(w, true)
			running = append(running, w)
		}
		disabled = still
		// One discovery round for every kind with several versions.
		var versioned []*kind
		for _, w := range running {
			if len(w.kind.older) > 0 {
				versioned = append(versioned, w.kind)
			}
		}
		served, err := c.discover(versioned)
		for i, w := range running {
			if len(w.kind.older) == 0 || err != nil {
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
				log.Warningf("%s: cannot read %s yet, still reading %s: %v", w.kind.name, v.groupVersion, w.version.groupVersion, err)
				continue
			}
			nw, ok := c.switchVersion(w, v)
			if !ok {
				return // stopped
			}
			running[i] = nw
		}
		setKindMetrics(c.g, running, disabled)
	}
}

// switchVersion replaces the informer of w by one that reads version v, and
// returns it once it has synced: the records stay published meanwhile.
func (c *controller) switchVersion(w *watched, v *kind) (*watched, bool) {
	nw := &watched{kind: w.kind, version: v, namespace: w.namespace, options: w.options, key: w.key, records: w.records}
	if !c.waitForSync([]cache.InformerSynced{c.startInformer(nw, false)}) {
		return nil, false
	}
	c.mu.Lock()
	c.informers[w.kind.name] = nw
	c.mu.Unlock()
	w.retired.Store(true)
	close(w.stop)
	// Withdraw what only the old informer had (deleted meanwhile).
	for _, obj := range w.informer.GetStore().List() {
		if _, ok, _ := nw.informer.GetStore().Get(obj); !ok {
			c.remove(nw, obj)
		}
	}
	if w.kind == listenerSetKind {
		// Another kind of object altogether (XListenerSet → ListenerSet):
		// every route through a ListenerSet may change.
		c.refreshAllRoutes()
	}
	log.Infof("%s read at %s (was %s)", w.kind.name, v.groupVersion, w.version.groupVersion)
	return nw, true
}

// syncPoll is how often waitForSync checks the informers; client-go's
// WaitForCacheSync checks every 100 ms, a tenth of a second lost at startup.
const syncPoll = 5 * time.Millisecond

// waitForSync waits until every informer has synced, or the controller stops.
func (c *controller) waitForSync(syncs []cache.InformerSynced) bool {
	tick := time.NewTicker(syncPoll)
	defer tick.Stop()
	for {
		if !slices.ContainsFunc(syncs, func(s cache.InformerSynced) bool { return !s() }) {
			return true
		}
		select {
		case <-c.stopCh:
			return false
		case <-tick.C:
		}
	}
}

var errStopped = errors.New("stopped")

// probe lists one object of the kind, retrying transient errors until it
// works, the error is permanent (not served, forbidden), or the controller stops.
// The waits are the guard's (see apiGuard), so that a server started while
// the API server is down syncs within about a second of its return.
func (c *controller) probe(w *watched, giveUp <-chan struct{}) error {
	for n := 0; ; n++ {
		err := c.probeOnce(w)
		if err == nil || apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsUnauthorized(err) || errors.Is(err, errNotServed) {
			return err
		}
		wait := c.guardTiming.backoff(n, err)
		if n == 0 {
			log.Warningf("listing %s: %v; retrying until it works", w.kind.name, err)
		}
		select {
		case <-c.stopCh:
			return errStopped
		case <-giveUp:
			return fmt.Errorf("%w: %v", errSlow, err)
		case <-time.After(wait):
		}
	}
}

func (c *controller) probeOnce(w *watched) error {
	if len(w.kind.older) > 0 {
		v, err := c.servedVersion(w.kind)
		if err != nil {
			return err
		}
		if v == nil {
			return notServedError(w.kind)
		}
		w.version = v
	}
	return c.listOnce(w)
}

// listOnce lists one object of the version of w.
func (c *controller) listOnce(w *watched) error {
	list, _ := c.api.listWatch(w.version, w.namespace)
	opts := metav1.ListOptions{Limit: 1}
	w.options(&opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := list(ctx, opts)
	if apierrors.IsNotFound(err) {
		return c.notServed(w.version, err)
	}
	return err
}

// notServed explains a kind the API server does not serve: which versions of
// its group it does serve, if any (a CRD of another Gateway API release).
func (c *controller) notServed(k *kind, err error) error {
	group, version, found := strings.Cut(k.groupVersion, "/")
	if !found {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	groups, derr := c.api.serverGroups(ctx)
	if derr != nil {
		return err
	}
	for _, g := range groups.Groups {
		if g.Name != group {
			continue
		}
		var versions []string
		for _, v := range g.Versions {
			versions = append(versions, v.Version)
		}
		return fmt.Errorf("%w: %s is served only at versions %s, not %s (install CRDs that serve %s)", err, group, strings.Join(versions, ", "), version, k.groupVersion)
	}
	return fmt.Errorf("%w: API group %s is not installed", err, group)
}

// startInformer starts the informer of w and returns its synced function.
// With register, lookups of the kind (Gateways, ListenerSets, Namespaces)
// read its store from now on.
func (c *controller) startInformer(w *watched, register bool) cache.InformerSynced {
	list, watchFn := c.api.listWatch(w.version, w.namespace)
	guard := c.guard(w, list, watchFn)
	w.api = guard.state
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			w.options(&o)
			return guard.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w.options(&o)
			return guard.Watch(ctx, o)
		},
	}
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	if conv := w.kind.route; conv != nil {
		indexers[gatewayIndex] = func(obj any) ([]string, error) { return routeGateways(conv(obj)), nil }
		indexers[listenerSetIndex] = func(obj any) ([]string, error) { return routeListenerSets(conv(obj)), nil }
	}
	if conv := w.version.listenerSet; conv != nil {
		indexers[gatewayIndex] = func(obj any) ([]string, error) {
			if ns, name, ok := conv(obj).gatewayKey(); ok {
				return []string{ns + "/" + name}, nil
			}
			return nil, nil
		}
	}
	// Like the generated informers, tell the reflector whether the client
	// supports WatchList: client-go's fake clients do not, and an informer
	// that waits for WatchList's initial-events bookmark on them never syncs.
	inf := cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, c.api),
		w.version.object, cache.SharedIndexInformerOptions{Indexers: indexers})
	_ = inf.SetTransform(w.version.transform)
	guard.known = inf.GetStore().List
	w.informer = inf
	w.stop = make(chan struct{})
	if w.namespace == "" && register {
		c.mu.Lock()
		c.informers[w.kind.name] = w
		c.mu.Unlock()
	}
	if w.version != w.kind || len(w.kind.older) > 0 {
		log.Infof("%s read at %s", w.kind.name, w.version.groupVersion)
	}
	reg, _ := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.update(w, obj) },
		UpdateFunc: func(_, obj any) { c.update(w, obj) },
		DeleteFunc: func(obj any) { c.remove(w, obj) },
	})
	unregister := func() {}
	if !w.nameserver {
		unregister = registerGuard(guard.state, strings.Join(c.g.Zones, " "), w.kind.name)
	}
	stop := make(chan struct{})
	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		defer close(stop)
		select {
		case <-c.stopCh:
		case <-w.stop:
		}
	}()
	go func() {
		defer c.wg.Done()
		defer unregister()
		inf.Run(stop)
	}()
	return reg.HasSynced
}

// update publishes the records of an added or changed object.
func (c *controller) update(w *watched, obj any) {
	meta, ok := obj.(metav1.Object)
	if !ok || w.retired.Load() {
		return
	}
	eventsTotal.WithLabelValues(w.kind.name).Inc()
	if c.dependent(w.kind) {
		c.routeMu.Lock()
		defer c.routeMu.Unlock()
	}
	if w.kind == namespaceKind {
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
	eventsTotal.WithLabelValues(w.kind.name).Inc()
	if c.dependent(w.kind) {
		c.routeMu.Lock()
		defer c.routeMu.Unlock()
	}
	if w.records != nil {
		key := w.key(meta)
		c.logWarnings(key, nil)
		c.g.index.Update(key, nil)
	}
	if w.kind == namespaceKind {
		c.delegate(meta, true)
	}
	c.refreshDependents(w.kind, meta)
}

// publish computes and indexes the records of one object.
func (c *controller) publish(w *watched, meta metav1.Object, obj any) {
	if w.records == nil {
		return
	}
	key := w.key(meta)
	if !w.nameserver && !c.namespaceAllowed(meta.GetNamespace()) {
		c.g.index.Update(key, nil)
		return
	}
	res := w.records(obj)
	c.logWarnings(key, res.warnings)
	if c.reverse {
		res.rrs = withPTR(res.rrs)
	}
	c.g.index.UpdateClaim(key, claimOf(w, meta, c.nameservers), res.rrs)
}

// namespaceAllowed applies the namespaces option to an object's namespace.
func (c *controller) namespaceAllowed(ns string) bool {
	return len(c.g.namespaces) == 0 || ns == "" || slices.Contains(c.g.namespaces, ns)
}

// dependent reports whether the kind's records depend on other objects, or
// other objects' records on it: the Gateway API family, and Ingresses and
// IngressClasses when ingressClasses is set.
func (c *controller) dependent(k *kind) bool {
	return k.route != nil || k == gatewayKind || k == listenerSetKind || k == namespaceKind || k == ingressClassKind ||
		k.name == "Ingress" && len(c.g.ingressClasses) > 0
}

// refreshDependents recomputes the routes that depend on a Gateway, a
// ListenerSet or a Namespace: those that name it as a parent, or are in it,
// and those that name a ListenerSet that depends on it in turn (attached to
// the Gateway, or in the Namespace, whose labels allowedListeners read); and
// the Ingresses when an IngressClass changed.
func (c *controller) refreshDependents(k *kind, meta metav1.Object) {
	key := meta.GetNamespace() + "/" + meta.GetName()
	switch k {
	case ingressClassKind:
		c.mu.Lock()
		w := c.informers["Ingress"]
		c.mu.Unlock()
		if w == nil {
			return
		}
		for _, obj := range w.informer.GetStore().List() {
			if m, ok := obj.(metav1.Object); ok {
				c.publish(w, m, obj)
			}
		}
		return
	case gatewayKind:
		c.refreshRoutes(gatewayIndex, key)
		for _, ls := range c.listenerSets(gatewayIndex, key) {
			c.refreshRoutes(listenerSetIndex, ls)
		}
	case listenerSetKind:
		c.refreshRoutes(listenerSetIndex, key)
	case namespaceKind:
		c.refreshRoutes(cache.NamespaceIndex, meta.GetName())
		for _, ls := range c.listenerSets(cache.NamespaceIndex, meta.GetName()) {
			c.refreshRoutes(listenerSetIndex, ls)
		}
	}
}

// routeInformers returns the running informers of route kinds.
func (c *controller) routeInformers() []*watched {
	c.mu.Lock()
	defer c.mu.Unlock()
	var routes []*watched
	for _, w := range c.informers {
		if w.kind.route != nil {
			routes = append(routes, w)
		}
	}
	return routes
}

// refreshRoutes recomputes the routes whose index entry is value.
func (c *controller) refreshRoutes(index, value string) {
	for _, w := range c.routeInformers() {
		objs, _ := w.informer.GetIndexer().ByIndex(index, value)
		for _, obj := range objs {
			if m, ok := obj.(metav1.Object); ok {
				c.publish(w, m, obj)
			}
		}
	}
}

// refreshAllRoutes recomputes every route.
func (c *controller) refreshAllRoutes() {
	c.routeMu.Lock()
	defer c.routeMu.Unlock()
	for _, w := range c.routeInformers() {
		for _, obj := range w.informer.GetStore().List() {
			if m, ok := obj.(metav1.Object); ok {
				c.publish(w, m, obj)
			}
		}
	}
}

// listenerSets returns the namespace/name keys of the ListenerSets whose
// index entry is value.
func (c *controller) listenerSets(index, value string) []string {
	c.mu.Lock()
	w := c.informers[listenerSetKind.name]
	c.mu.Unlock()
	if w == nil {
		return nil
	}
	objs, _ := w.informer.GetIndexer().ByIndex(index, value)
	keys := make([]string, 0, len(objs))
	for _, obj := range objs {
		if m, ok := obj.(metav1.Object); ok {
			keys = append(keys, m.GetNamespace()+"/"+m.GetName())
		}
	}
	return keys
}

// listenerSet implements sourceContext.
func (c *controller) listenerSet(namespace, name string) *listenerSet {
	c.mu.Lock()
	w := c.informers[listenerSetKind.name]
	c.mu.Unlock()
	if w == nil {
		return nil
	}
	obj, ok, _ := w.informer.GetStore().GetByKey(namespace + "/" + name)
	if !ok {
		return nil
	}
	if _, ok := obj.(*gwv1.ListenerSet); !ok {
		return nil
	}
	return w.version.listenerSet(obj)
}

// gateway implements sourceContext.
func (c *controller) gateway(namespace, name string) *gwv1.Gateway {
	c.mu.Lock()
	w := c.informers[gatewayKind.name]
	c.mu.Unlock()
	if w == nil {
		return nil
	}
	obj, ok, _ := w.informer.GetStore().GetByKey(namespace + "/" + name)
	if !ok {
		return nil
	}
	gw, _ := obj.(*gwv1.Gateway)
	return gw
}

// defaultIngressClass implements sourceContext.
func (c *controller) defaultIngressClass() string {
	c.mu.Lock()
	w := c.informers[ingressClassKind.name]
	c.mu.Unlock()
	if w == nil {
		return ""
	}
	var classes []*networkingv1.IngressClass
	for _, obj := range w.informer.GetStore().List() {
		if ic, ok := obj.(*networkingv1.IngressClass); ok {
			classes = append(classes, ic)
		}
	}
	return defaultIngressClass(classes)
}

// namespaceLabels implements sourceContext.
func (c *controller) namespaceLabels(name string) (map[string]string, bool) {
	c.mu.Lock()
	w := c.informers[namespaceKind.name]
	c.mu.Unlock()
	if w == nil {
		return nil, false
	}
	obj, ok, _ := w.informer.GetStore().GetByKey(name)
	if !ok {
		return nil, false
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, false
	}
	return ns.Labels, true
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
