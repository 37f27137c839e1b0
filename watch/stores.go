package watch

import (
	"slices"
	"sync"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// stores are a controller's running informers, by kind and namespace, and
// the lookups that sources make in their caches: stores implement
// source.Context. With the namespaces option, each namespaced kind has one
// informer per listed namespace, and so has the Namespace kind (each reads
// the Namespace of that name); IngressClasses, and every kind without the
// option, have one for all namespaces, registered under the namespace "".
type stores struct {
	ownership   index.Policy        // Config.Ownership
	delegations map[string][]string // Config.Delegations

	// mu guards informers, and the synced of each (set once its handler is
	// added, read by the controller's Complete).
	mu        sync.Mutex
	informers map[informerKey]*watched
}

var _ source.Context = (*stores)(nil)

func newStores(cfg *Config) *stores {
	return &stores{ownership: cfg.Ownership, delegations: cfg.Delegations, informers: map[informerKey]*watched{}}
}

// informerKey names a running informer: its kind and namespace, and which
// of the kind's label selectors it lists with.
type informerKey struct {
	Kind, namespace string
	alt             int
}

func keyOf(w *watched) informerKey { return informerKey{w.Kind.Name, w.Namespace, w.alt} }

// register makes the lookups of w's kind read its store, in place of the
// informer of the same kind and namespace registered before, if any.
func (s *stores) register(w *watched) {
	s.mu.Lock()
	s.informers[keyOf(w)] = w
	s.mu.Unlock()
}

// setSynced sets the synced function of w, once its handler is added.
func (s *stores) setSynced(w *watched, synced cache.InformerSynced) {
	s.mu.Lock()
	w.synced = synced
	s.mu.Unlock()
}

// informerFor returns the running informer of kind that holds the objects of
// namespace: the one of that namespace, else the one of all namespaces; nil
// when no informer reads that namespace.
func (s *stores) informerFor(kind, namespace string) *watched {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.informers[informerKey{kind, namespace, 0}]; w != nil {
		return w
	}
	return s.informers[informerKey{kind, "", 0}]
}

// readVersion returns the group version at which the informer of kind in
// namespace reads, "" when none runs.
func (s *stores) readVersion(kind, namespace string) string {
	if w := s.informerFor(kind, namespace); w != nil {
		return w.Version.GroupVersion
	}
	return ""
}

// running returns the running informers for which match is true.
func (s *stores) running(match func(w *watched) bool) []*watched {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ws []*watched
	for _, w := range s.informers {
		if match(w) {
			ws = append(ws, w)
		}
	}
	return ws
}

// ofKind returns every running informer of kind.
func (s *stores) ofKind(kind string) []*watched {
	return s.running(func(w *watched) bool { return w.Kind.Name == kind })
}

// check calls f on every running informer, under the lock (f may read
// synced), until f returns something other than "", which it returns.
func (s *stores) check(f func(w *watched) string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.informers {
		if msg := f(w); msg != "" {
			return msg
		}
	}
	return ""
}

// getObject returns the object namespace/name of kind from the informer
// that reads its namespace, or nil.
func (s *stores) getObject(kind, namespace, name string) (*watched, any) {
	return s.getKey(kind, namespace, namespace+"/"+name)
}

// getNamespace returns the Namespace name from the informer that reads it.
func (s *stores) getNamespace(name string) any {
	_, obj := s.getKey(source.NamespaceKind.Name, name, name)
	return obj
}

// getKey returns the object of kind with the store key, from the informer
// that reads namespace (from the first of its label selectors' informers
// that holds it), or nil.
func (s *stores) getKey(kind, namespace, key string) (*watched, any) {
	for _, w := range s.alternatives(s.informerFor(kind, namespace)) {
		if obj, ok, _ := w.informer.GetStore().GetByKey(key); ok {
			return w, obj
		}
	}
	return nil, nil
}

// alternatives returns w and the informers of the kind's other label
// selectors in the same namespace, in their order; none when w is nil.
func (s *stores) alternatives(w *watched) []*watched {
	if w == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var ws []*watched
	for alt := 0; ; alt++ {
		o := s.informers[informerKey{w.Kind.Name, w.Namespace, alt}]
		if o == nil {
			return ws
		}
		ws = append(ws, o)
	}
}

// ListenerSet implements source.Context.
func (s *stores) ListenerSet(namespace, name string) *source.ListenerSet {
	w, obj := s.getObject(source.ListenerSetKind.Name, namespace, name)
	if _, ok := obj.(*gwv1.ListenerSet); !ok {
		return nil
	}
	return w.Version.ListenerSet(obj)
}

// Gateway implements source.Context.
func (s *stores) Gateway(namespace, name string) *gwv1.Gateway {
	_, obj := s.getObject(source.GatewayKind.Name, namespace, name)
	gw, _ := obj.(*gwv1.Gateway)
	return gw
}

// DefaultIngressClass implements source.Context.
func (s *stores) DefaultIngressClass() string {
	w := s.informerFor(source.IngressClassKind.Name, "")
	if w == nil {
		return ""
	}
	var classes []*metav1.PartialObjectMetadata
	for _, obj := range w.informer.GetStore().List() {
		if ic, ok := obj.(*metav1.PartialObjectMetadata); ok {
			classes = append(classes, ic)
		}
	}
	return source.DefaultIngressClass(classes)
}

// NamespaceLabels implements source.Context.
func (s *stores) NamespaceLabels(name string) (map[string]string, bool) {
	ns, ok := s.getNamespace(name).(*metav1.PartialObjectMetadata)
	if !ok {
		return nil, false
	}
	return ns.Labels, true
}

// MayPublish implements source.Context: under the delegated policy, a
// namespace may publish only at or below the domains the Corefile or its
// Namespace's annotation gives it.
func (s *stores) MayPublish(namespace, name string) bool {
	if s.ownership != index.Delegated {
		return true
	}
	within := func(domains []string) bool {
		return slices.ContainsFunc(domains, func(d string) bool { return dns.IsSubDomain(d, name) })
	}
	if within(s.delegations[namespace]) {
		return true
	}
	meta, ok := s.getNamespace(namespace).(metav1.Object)
	if !ok {
		return false
	}
	domains, _ := source.NamespaceDomains(meta)
	return within(domains)
}
