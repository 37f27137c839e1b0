package watch

import (
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/source"
)

// Index names of the Gateway API informers: routes by the Gateways and
// ListenerSets they name as parents, ListenerSets by their Gateway.
const (
	gatewayIndex     = "gateway"
	listenerSetIndex = "listenerset"
)

// routeContextKinds are the kinds the records of routes depend on: routes
// publish through Gateways and ListenerSets, which admit them by namespace
// labels. The controller watches them whenever it watches routes, and a
// change of one recomputes the routes that depend on it (refreshDependents).
var routeContextKinds = []*source.Kind{source.GatewayKind, source.ListenerSetKind, source.NamespaceKind}

// routeGraph knows which objects' records depend on which others (a route
// on its Gateways, ListenerSets and Namespace; an Ingress, under the
// ingressClasses option, on the default IngressClass), and publishes the
// dependents again when what they depend on changes. It reads the
// informers' indexes (indexers) in stores.
type routeGraph struct {
	stores         *stores
	ingressClasses bool                                       // the ingressClasses option is set
	publish        func(w *watched, m metav1.Object, obj any) // the controller's publish

	// mu serializes the dependent kinds (dependent): a route is computed
	// from the Gateway and Namespace stores, and a Gateway or Namespace
	// change recomputes its routes. With one lock, the last computation
	// always sees the newest stores. Their handlers hold it, as do the
	// health option's republications of routes.
	mu sync.Mutex
}

// dependent reports whether the kind's records depend on other objects, or
// other objects' records on it: the Gateway API family, and Ingresses and
// IngressClasses when ingressClasses is set.
func (g *routeGraph) dependent(k *source.Kind) bool {
	return k.Route != nil || slices.Contains(routeContextKinds, k) || k == source.IngressClassKind ||
		k.Name == "Ingress" && g.ingressClasses
}

// refreshDependents recomputes the routes that depend on a Gateway, a
// ListenerSet or a Namespace: those that name it as a parent, or are in it,
// and those that name a ListenerSet that depends on it in turn (attached to
// the Gateway, or in the Namespace, whose labels allowedListeners read); and
// the Ingresses when an IngressClass changed. The caller holds mu.
func (g *routeGraph) refreshDependents(k *source.Kind, meta metav1.Object) {
	key := meta.GetNamespace() + "/" + meta.GetName()
	switch k {
	case source.IngressClassKind:
		for _, w := range g.stores.ofKind("Ingress") {
			g.publishAll(w, w.informer.GetStore().List())
		}
	case source.GatewayKind:
		g.refreshRoutes(gatewayIndex, key)
		for _, ls := range g.listenerSets(gatewayIndex, key) {
			g.refreshRoutes(listenerSetIndex, ls)
		}
	case source.ListenerSetKind:
		g.refreshRoutes(listenerSetIndex, key)
	case source.NamespaceKind:
		g.refreshRoutes(cache.NamespaceIndex, meta.GetName())
		for _, ls := range g.listenerSets(cache.NamespaceIndex, meta.GetName()) {
			g.refreshRoutes(listenerSetIndex, ls)
		}
	}
}

// routes returns the running informers of route kinds.
func (g *routeGraph) routes() []*watched {
	return g.stores.running(func(w *watched) bool { return w.Kind.Route != nil })
}

// refreshRoutes recomputes the routes whose index entry is value.
func (g *routeGraph) refreshRoutes(index, value string) {
	for _, w := range g.routes() {
		objs, _ := w.informer.GetIndexer().ByIndex(index, value)
		g.publishAll(w, objs)
	}
}

// refreshAll recomputes every route.
func (g *routeGraph) refreshAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, w := range g.routes() {
		g.publishAll(w, w.informer.GetStore().List())
	}
}

// publishAll publishes again the objects objs of the informer w.
func (g *routeGraph) publishAll(w *watched, objs []any) {
	for _, obj := range objs {
		if m, ok := obj.(metav1.Object); ok {
			g.publish(w, m, obj)
		}
	}
}

// listenerSets returns the namespace/name keys of the ListenerSets whose
// index entry is value.
func (g *routeGraph) listenerSets(index, value string) []string {
	var keys []string
	for _, w := range g.stores.ofKind(source.ListenerSetKind.Name) {
		objs, _ := w.informer.GetIndexer().ByIndex(index, value)
		for _, obj := range objs {
			if m, ok := obj.(metav1.Object); ok {
				keys = append(keys, m.GetNamespace()+"/"+m.GetName())
			}
		}
	}
	return keys
}
