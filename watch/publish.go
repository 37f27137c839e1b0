package watch

import (
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// publisher is the event path of a controller: its informers' handlers
// turn each object into records (its kind's source), give them a claim
// (owner, priority, weight, location, health) and put them into the sink;
// they log what the source found wrong (warnings.go), tell Config.Refused
// of the names refused, and apply Namespaces' delegated domains. A change
// that others depend on publishes them again (routeGraph), and so does a
// Service whose health flips (health).
type publisher struct {
	cfg    *Config
	out    Sink
	stores *stores
	routes *routeGraph
	health *health
	synced <-chan struct{} // closed once the controller has synced

	// selectorsMu serializes the events of a kind listed with several label
	// selectors (selectors.go), when no other lock of lock() does.
	selectorsMu sync.Mutex

	mu       sync.Mutex
	warnings map[string]string   // object key → last warnings logged
	refused  map[string][]string // object key → names refused before the index (Result.Refused)
}

func newPublisher(cfg *Config, out Sink, s *stores, h *health, synced <-chan struct{}) *publisher {
	p := &publisher{cfg: cfg, out: out, stores: s, health: h, synced: synced, warnings: map[string]string{}, refused: map[string][]string{}}
	p.routes = &routeGraph{stores: s, ingressClasses: len(cfg.Sources.IngressClasses) > 0, publish: p.publish}
	return p
}

// handler returns the event handler of the informer w.
func (p *publisher) handler(w *watched) cache.ResourceEventHandler {
	if w.Kind == source.EndpointSliceKind {
		return cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { p.sliceChanged(w, nil, obj) },
			UpdateFunc: func(old, obj any) { p.sliceChanged(w, old, obj) },
			DeleteFunc: func(obj any) {
				if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = d.Obj
				}
				p.sliceChanged(w, obj, nil)
			},
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.update(w, obj) },
		UpdateFunc: func(_, obj any) { p.update(w, obj) },
		DeleteFunc: func(obj any) { p.remove(w, obj) },
	}
}

// lock takes the lock that serializes an event of w's kind with the others
// that publish its objects, and returns its unlock: the route graph's for
// the kinds whose records depend on other objects (a Namespace included),
// else, with the health option, health's, since a flip publishes an object
// again from the store.
func (p *publisher) lock(w *watched) (unlock func()) {
	switch {
	case p.routes.dependent(w.Kind):
		p.routes.mu.Lock()
		return p.routes.mu.Unlock
	case p.cfg.Health:
		p.health.mu.Lock()
		return p.health.mu.Unlock
	case len(p.cfg.LabelSelectors[w.Kind.Name]) > 1:
		p.selectorsMu.Lock()
		return p.selectorsMu.Unlock
	}
	return func() {}
}

// update publishes the records of an added or changed object.
func (p *publisher) update(w *watched, obj any) {
	p.change(w, obj, func(meta metav1.Object) {
		if w.Kind == source.NamespaceKind {
			p.delegate(meta, false)
		}
		p.publish(w, meta, obj)
	})
}

// remove withdraws the records of a deleted object.
func (p *publisher) remove(w *watched, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p.change(w, obj, func(meta metav1.Object) {
		// An object that another of its kind's label selectors still lists
		// is published from there instead (selectors.go).
		if w.records != nil && !p.publishFromOtherSelector(w, meta) {
			key := w.key(meta)
			p.logWarnings(key, nil)
			p.report(key, nil)
			p.out.UpdateClaim(key, index.Claim{}, nil)
			p.health.dropPart(w, key)
			p.health.note(key, false, true)
		}
		if w.Kind == source.NamespaceKind {
			p.delegate(meta, true)
		}
	})
}

// change applies a change of an object of w, unless w is retired: counted,
// timed and under the lock of its kind's events, then the objects that
// depend on it refreshed.
func (p *publisher) change(w *watched, obj any, apply func(meta metav1.Object)) {
	meta, ok := obj.(metav1.Object)
	if !ok || w.retired.Load() {
		return
	}
	defer p.observeProgramming(w.Kind.Name, time.Now())
	p.counted(w)
	defer p.lock(w)()
	apply(meta)
	p.routes.refreshDependents(w.Kind, meta)
}

// counted counts an event of an informer.
func (p *publisher) counted(w *watched) {
	objectChanges.Inc(w.Kind.Name)
	if p.cfg.Cluster != "" {
		clusterChanges.Inc(p.cfg.Cluster)
	}
}

// observeProgramming records how long an object change of kind took to
// publish, once the controller has synced (before, nothing is published).
func (p *publisher) observeProgramming(kind string, start time.Time) {
	select {
	case <-p.synced:
		programmingDuration.WithLabelValues(kind).Observe(time.Since(start).Seconds())
	default:
	}
}

// publish computes and indexes the records of one object.
func (p *publisher) publish(w *watched, meta metav1.Object, obj any) {
	if w.records == nil {
		return
	}
	key := w.key(meta)
	if !w.nameserver && !p.namespaceAllowed(meta.GetNamespace()) {
		p.out.UpdateClaim(key, index.Claim{}, nil)
		p.health.dropPart(w, key)
		return
	}
	res := recordsOf(w, obj)
	claim := claimOf(w, meta, p.cfg.Nameservers)
	if !claim.Plugin() {
		claim.Priority = p.cfg.Priority
		res.Warnings = append(res.Warnings, p.steer(meta, &claim)...)
	}
	p.logWarnings(key, res.Warnings)
	p.report(key, res.Refused)
	if p.cfg.Reverse {
		res.RRs = source.WithPTR(res.RRs)
	}
	if p.cfg.Health {
		res.RRs = p.health.mark(w, key, obj, &claim, res.RRs)
	}
	p.out.UpdateClaim(key, claim, res.RRs)
}

// namespaceAllowed applies the namespaces option to an object's namespace.
func (p *publisher) namespaceAllowed(ns string) bool {
	return len(p.cfg.Namespaces) == 0 || ns == "" || slices.Contains(p.cfg.Namespaces, ns)
}

// claimOf returns who claims the records of an object: its namespace, in the
// order of creation. The nameservers' own Services (nameservers holds their
// "namespace/name") are the plugin's, under either informer.
func claimOf(w *watched, meta metav1.Object, nameservers []string) index.Claim {
	ns := meta.GetNamespace()
	if w.nameserver || w.Kind.Name == "Service" && slices.Contains(nameservers, ns+"/"+meta.GetName()) {
		return index.Claim{}
	}
	if ns == "" {
		// Cluster-scoped objects still belong to a tenant, one that no namespace can be.
		ns = "/"
	}
	return index.Claim{Namespace: ns, Created: meta.GetCreationTimestamp().UnixNano()}
}

// steer sets the weight and location of an object's claim: its
// annotations' (source.Steering), with the cluster's (Config.Weight,
// Config.Location). The weight is the object's times the cluster's, each 1
// when unset, and stays unset when both are; the object's location wins
// over the cluster's. The cluster's alone are kept apart too, which steer
// at a name several tenants publish (index.Claim.ClusterWeight). It
// returns what is wrong with the annotations.
func (p *publisher) steer(meta metav1.Object, claim *index.Claim) []string {
	weight, loc, warnings := source.Steering(meta)
	if weight != 0 || p.cfg.Weight != 0 {
		claim.Weight = max(weight, 1) * max(p.cfg.Weight, 1)
	}
	claim.Location = loc
	if loc.IsZero() {
		claim.Location = p.cfg.Location
	}
	claim.ClusterWeight, claim.ClusterLocation = p.cfg.Weight, p.cfg.Location
	return warnings
}

// delegate applies a Namespace's domains annotation to the index.
func (p *publisher) delegate(meta metav1.Object, deleted bool) {
	if p.cfg.Ownership != index.Delegated {
		return
	}
	key := "Namespace/" + meta.GetName()
	if deleted {
		p.logWarnings(key, nil)
		p.out.SetDomains(meta.GetName(), nil)
		return
	}
	domains, warnings := source.NamespaceDomains(meta)
	p.logWarnings(key, warnings)
	p.out.SetDomains(meta.GetName(), domains)
}

// sliceChanged applies a slice going from old to cur (either may be nil)
// to the counts of its Service, and publishes the Service, and what it
// backs, again when its health flips.
func (p *publisher) sliceChanged(w *watched, old, cur any) {
	if w.retired.Load() {
		return
	}
	p.counted(w)
	o, _ := old.(*source.EndpointSlice)
	n, _ := cur.(*source.EndpointSlice)
	ingressDependent := p.routes.dependent(source.KindByName("Ingress"))
	p.health.mu.Lock()
	flipped := p.health.slice(o, n)
	for _, key := range flipped {
		ns, name, _ := strings.Cut(key, "/")
		if sw, obj := p.stores.getObject("Service", ns, name); obj != nil {
			p.publish(sw, obj.(metav1.Object), obj)
		}
		if !ingressDependent {
			p.republishBackendUsers("Ingress", key)
		}
	}
	p.health.mu.Unlock()
	if len(flipped) == 0 {
		return
	}
	// Routes, and Ingresses under ingressClasses, are published under the
	// route lock: republished there, after the counts changed.
	p.routes.mu.Lock()
	defer p.routes.mu.Unlock()
	for _, key := range flipped {
		for _, k := range source.Kinds {
			if k.Route != nil || k.Name == "Ingress" && ingressDependent {
				p.republishBackendUsers(k.Name, key)
			}
		}
	}
}

// republishBackendUsers publishes again the objects of kind whose backends
// include the Service key.
func (p *publisher) republishBackendUsers(kind, key string) {
	for _, w := range p.stores.ofKind(kind) {
		objs, err := w.informer.GetIndexer().ByIndex(backendIndex, key)
		if err != nil {
			continue
		}
		for _, obj := range objs {
			if m, ok := obj.(metav1.Object); ok {
				p.publish(w, m, obj)
			}
		}
	}
}
