package watch

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

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
		for _, w := range c.running("Ingress") {
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
	c.mu.Lock()
	defer c.mu.Unlock()
	var routes []*watched
	for _, w := range c.informers {
		if w.Kind.Route != nil {
			routes = append(routes, w)
		}
	}
	return routes
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
	for _, w := range c.running(source.ListenerSetKind.Name) {
		objs, _ := w.informer.GetIndexer().ByIndex(index, value)
		for _, obj := range objs {
			if m, ok := obj.(metav1.Object); ok {
				keys = append(keys, m.GetNamespace()+"/"+m.GetName())
			}
		}
	}
	return keys
}

// ListenerSet implements Context.
func (c *Controller) ListenerSet(namespace, name string) *source.ListenerSet {
	w, obj := c.getObject(source.ListenerSetKind.Name, namespace, name)
	if _, ok := obj.(*gwv1.ListenerSet); !ok {
		return nil
	}
	return w.Version.ListenerSet(obj)
}

// Gateway implements Context.
func (c *Controller) Gateway(namespace, name string) *gwv1.Gateway {
	_, obj := c.getObject(source.GatewayKind.Name, namespace, name)
	gw, _ := obj.(*gwv1.Gateway)
	return gw
}

// DefaultIngressClass implements Context.
func (c *Controller) DefaultIngressClass() string {
	w := c.informerFor(source.IngressClassKind.Name, "")
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

// NamespaceLabels implements Context.
func (c *Controller) NamespaceLabels(name string) (map[string]string, bool) {
	ns, ok := c.getNamespace(name).(*metav1.PartialObjectMetadata)
	if !ok {
		return nil, false
	}
	return ns.Labels, true
}
