package watch

import (
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// switchVersion replaces the informer of w by one that reads version v, and
// returns it once it has synced: the records stay published meanwhile.
func (c *Controller) switchVersion(w *watched, v *source.Kind) (*watched, bool) {
	nw := &watched{Kind: w.Kind, Version: v, Namespace: w.Namespace, alt: w.alt, Options: w.Options, key: w.key, records: w.records}
	if !c.waitForSync([]cache.InformerSynced{c.startInformer(nw, false)}) {
		return nil, false
	}
	c.stores.register(nw)
	w.retired.Store(true)
	close(w.stop)
	// Withdraw what only the old informer had (deleted meanwhile).
	for _, obj := range w.informer.GetStore().List() {
		if _, ok, _ := nw.informer.GetStore().Get(obj); !ok {
			c.pub.remove(nw, obj)
		}
	}
	if w.Kind == source.ListenerSetKind {
		// Another kind of object altogether (XListenerSet → ListenerSet):
		// every route through a ListenerSet may change.
		c.routes.refreshAll()
	}
	log.Infof("%s read at %s (was %s)", w.what(), v.GroupVersion, w.Version.GroupVersion)
	return nw, true
}

// syncPoll is how often waitForSync checks the informers; client-go's
// WaitForCacheSync checks every 100 ms, a tenth of a second lost at startup.
const syncPoll = 5 * time.Millisecond

// waitForSync waits until every informer has synced, or the controller stops.
func (c *Controller) waitForSync(syncs []cache.InformerSynced) bool {
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

// startInformer starts the informer of w, or joins the one another
// controller runs for the same key (shared.go), and returns its synced
// function. With register, lookups of the kind (Gateways, ListenerSets,
// Namespaces) read its store from now on.
func (c *Controller) startInformer(w *watched, register bool) cache.InformerSynced {
	key, s := c.share.acquire(w)
	inf, state := s.informer, s.guard.State()
	w.api = state
	c.mu.Lock()
	c.states = append(c.states, state)
	c.mu.Unlock()
	w.informer = inf
	w.stop = make(chan struct{})
	if register && !w.nameserver {
		c.stores.register(w)
	}
	if w.Version != w.Kind || len(w.Kind.Older) > 0 {
		log.Infof("%s read at %s", w.what(), w.Version.GroupVersion)
	}
	q := newQueued(c.pub.handler(w))
	reg, _ := inf.AddEventHandler(q)
	synced := q.synced(reg.HasSynced)
	c.stores.setSynced(w, synced)
	unsubscribe := state.Subscribe(c.guardChanged(w))
	unregister := func() {}
	if !w.nameserver {
		unregister = registerGuard(state, c.cfg.ZonesLabel, w.Kind.Name)
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		select {
		case <-c.stopCh:
		case <-w.stop:
		}
		_ = inf.RemoveEventHandler(reg)
		q.stop()
		unsubscribe()
		unregister()
		release(key, s)
	}()
	return synced
}

// guardChanged is what a controller does when the API server starts or
// stops refusing the kind of its informer w: log it, and set kind_enabled
// (the nameservers' own Services excepted).
func (c *Controller) guardChanged(w *watched) func(allowed bool, err error) {
	zones := c.cfg.ZonesLabel
	return func(allowed bool, err error) {
		if w.retired.Load() {
			return // replaced by the informer of a newer version, which reports
		}
		if allowed {
			log.Infof("%s: the API server answers again", w.what())
		} else {
			log.Warningf("%s: the API server refuses it: %v; retrying", w.what(), err)
		}
		if !w.nameserver {
			off := ""
			if !allowed {
				off = offReason(err) // refused, or its CRD gone (404)
			}
			setKindEnabled(zones, w, w.Version.GroupVersion, off)
		}
	}
}

// what names the informer in log lines: its kind, and its namespace if it
// reads only one.
func (w *watched) what() string {
	switch {
	case w.Namespace == "" || w.nameserver:
		return w.Kind.Name
	case w.Kind.Cluster:
		return w.Kind.Name + " " + w.Namespace
	}
	return w.Kind.Name + " in namespace " + w.Namespace
}

// watches returns the informers the configuration asks for: with the
// namespaces option, one per listed namespace for each namespaced kind, and
// one per listed Namespace object, so that Roles in those namespaces are all
// the reading it needs (IngressClasses excepted).
func (c *Controller) watches() []*watched {
	var ws []*watched
	routes := false
	scopes := []string{""}
	if len(c.cfg.Namespaces) > 0 {
		scopes = slices.Compact(slices.Sorted(slices.Values(c.cfg.Namespaces)))
	}
	add := func(k *source.Kind, sel string, alt int) {
		in := scopes
		if k.Cluster && !k.ByName {
			in = []string{""}
		}
		for _, ns := range in {
			w := &watched{
				Kind:      k,
				Version:   k,
				Namespace: ns,
				alt:       alt,
				Options:   func(o *metav1.ListOptions) { o.LabelSelector = sel },
				key: func(o metav1.Object) string {
					if key := source.KeyOf(o); key != "" && c.cfg.Prefix == "" {
						return key // one string for every view (source.WithKey)
					}
					return c.cfg.Prefix + k.Name + "/" + o.GetNamespace() + "/" + o.GetName()
				},
			}
			if k.Records != nil {
				w.records = func(obj any) source.Result { return k.RecordsOf(obj, &c.cfg.Sources, c.stores) }
			}
			ws = append(ws, w)
		}
	}
	for _, name := range c.cfg.Resources {
		k := source.KindByName(name)
		routes = routes || k.Route != nil
		if !c.api.Reads(k) {
			continue // no client for it (unit tests with a fake core client)
		}
		sels, ok := c.cfg.LabelSelectors[name]
		if !ok {
			sels = []string{c.cfg.LabelSelector}
		}
		for alt, sel := range sels {
			add(k, sel, alt)
		}
	}
	if slices.Contains(c.cfg.Resources, "Ingress") && len(c.cfg.Sources.IngressClasses) > 0 && c.api.Reads(source.IngressClassKind) {
		// A class-less Ingress has the default IngressClass.
		add(source.IngressClassKind, "", 0)
	}
	if c.readsEndpointSlices() {
		add(source.EndpointSliceKind, "", 0)
	}
	namespaces := false
	if routes && c.api.Reads(source.GatewayKind) {
		// Routes publish through the kinds they depend on.
		for _, k := range routeContextKinds {
			add(k, "", 0)
		}
		namespaces = true
	}
	if !namespaces && c.cfg.Ownership == index.Delegated && c.api.Reads(source.NamespaceKind) {
		// Namespaces carry their delegated domains.
		add(source.NamespaceKind, "", 0)
	}
	// The nameserver's own Services publish the NS names and their glue.
	svc := source.KindByName("Service")
	nsSources := c.cfg.Sources
	if c.cfg.NameserverZones != nil {
		nsSources.Zones = c.cfg.NameserverZones
	}
	for _, nsName := range c.cfg.Nameservers {
		namespace, name, _ := strings.Cut(nsName, "/")
		ws = append(ws, &watched{
			Kind:      svc,
			Version:   svc,
			Namespace: namespace,
			Options:   func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + name },
			key: func(o metav1.Object) string {
				return c.cfg.Prefix + "Nameserver/" + o.GetNamespace() + "/" + o.GetName()
			},
			records:    func(obj any) source.Result { return source.NameserverRecords(obj.(*source.Service), &nsSources) },
			nameserver: true,
		})
	}
	return ws
}

// countKinds returns how many kinds ws read: with the namespaces option a
// kind has several informers.
func countKinds(ws []*watched) int {
	names := map[string]bool{}
	for _, w := range ws {
		names[w.Kind.Name] = true
	}
	return len(names)
}

// readsEndpointSlices reports whether the health option needs EndpointSlices:
// for the health of Services, and of the Ingresses and routes they back.
func (c *Controller) readsEndpointSlices() bool {
	return c.cfg.Health && c.api.Reads(source.EndpointSliceKind) && slices.ContainsFunc(c.cfg.Resources, func(r string) bool {
		return r == "Service" || r == "Ingress" || source.KindByName(r).Route != nil
	})
}
