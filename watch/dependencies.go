package watch

import (
	"slices"

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

// dependent reports whether the kind's records depend on other objects, or
// other objects' records on it: the Gateway API family, and Ingresses and
// IngressClasses when ingressClasses is set.
func (c *Controller) dependent(k *source.Kind) bool {
	return k.Route != nil || slices.Contains(routeContextKinds, k) || k == source.IngressClassKind ||
		k.Name == "Ingress" && len(c.cfg.Sources.IngressClasses) > 0
}

// refreshDependents recomputes the routes that depend on a Gateway, a
// ListenerSet or a Namespace: those that name it as a parent, or are in it,
// and those that name a ListenerSet that depends on it in turn (attached to
// the Gateway, or in the Namespace, whose labels allowedListeners read); and
// the Ingresses when an IngressClass changed.
func (c *Controller) refreshDependents(k *source.Kind, meta metav1.Object) {
	key := meta.GetNamespace() + "/" + meta.GetName()
	switch k {
	case source.IngressClassKind:
		for _, w := range c.stores.ofKind("Ingress") {
			for _, obj := range w.informer.GetStore().List() {
				if m, ok := obj.(metav1.Object); ok {
					c.publish(w, m, obj)
				}
			}
		}
		return
	case source.GatewayKind:
		c.refreshRoutes(gatewayIndex, key)
		for _, ls := range c.listenerSets(gatewayIndex, key) {
			c.refreshRoutes(listenerSetIndex, ls)
		}
	case source.ListenerSetKind:
		c.refreshRoutes(listenerSetIndex, key)
	case source.NamespaceKind:
		c.refreshRoutes(cache.NamespaceIndex, meta.GetName())
		for _, ls := range c.listenerSets(cache.NamespaceIndex, meta.GetName()) {
			c.refreshRoutes(listenerSetIndex, ls)
		}
	}
}

// routeInformers returns the running informers of route kinds.
func (c *Controller) routeInformers() []*watched {
	return c.stores.running(func(w *watched) bool { return w.Kind.Route != nil })
}

// refreshRoutes recomputes the routes whose index entry is value.
func (c *Controller) refreshRoutes(index, value string) {
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
func (c *Controller) refreshAllRoutes() {
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
func (c *Controller) listenerSets(index, value string) []string {
	var keys []string
	for _, w := range c.stores.ofKind(source.ListenerSetKind.Name) {
		objs, _ := w.informer.GetIndexer().ByIndex(index, value)
		for _, obj := range objs {
			if m, ok := obj.(metav1.Object); ok {
				keys = append(keys, m.GetNamespace()+"/"+m.GetName())
			}
		}
	}
	return keys
}
