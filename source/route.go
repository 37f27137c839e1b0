package source

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// route is what the plugin keeps of a Gateway API route of any kind and
// version: its row's transform makes it (routekinds.go), the route informers store it, and
// routeRecords reads it. Rules, filters and backends are left out, and of the
// status only the parents that accepted the route: an HTTPRoute kept as its
// API type took three times the memory (BenchmarkCacheBytes).
type route struct {
	objectMeta
	kind      string // HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute
	hostnames []gwv1.Hostname
	// parentRefs are spec.parentRefs, followed by the default Gateways the
	// route is bound to (see route_default.go).
	parentRefs []gwv1.ParentReference
	// accepted tells, for each parentRef, whether an entry of status.parents
	// for it has an Accepted condition that is True.
	accepted []bool
	// defaultScope is spec.useDefaultGateways when the route is bound to
	// default Gateways: the last defaults of parentRefs are those bindings.
	defaultScope gwv1.GatewayDefaultScope
	defaults     int
	// For the health option (backends.go): the route's backend Services,
	// and whether a parent says ResolvedRefs False.
	backends   []string
	unresolved bool
}

// asRoute returns the route an informer of a route kind stores.
func asRoute(obj any) *route { return obj.(*route) }

// The group and kind that the CRDs' defaults write into nearly every
// parentRef, shared by the routes instead of a copy each: nothing may write
// through a parentRef's Group or Kind.
var (
	parentGroupGateway = gwv1.Group(gwv1.GroupName)
	parentKindGateway  = gwv1.Kind("Gateway")
)

// newRoute keeps of a route's metadata, hostnames, parentRefs and status
// parents what a route holds.
func newRoute(kind string, m *metav1.ObjectMeta, hostnames []gwv1.Hostname, spec *gwv1.CommonRouteSpec, parents []gwv1.RouteParentStatus) *route {
	refs := spec.ParentRefs
	rt := &route{objectMeta: newObjectMeta(m), kind: kind, hostnames: slices.Clip(hostnames), parentRefs: slices.Clone(refs)}
	if len(refs) > 0 {
		rt.accepted = make([]bool, len(refs))
	}
	for i := range rt.parentRefs {
		ref := &rt.parentRefs[i]
		ns := parentNamespace(*ref, m.Namespace)
		rt.accepted[i] = slices.ContainsFunc(parents, func(p gwv1.RouteParentStatus) bool {
			return sameParent(p.ParentRef, *ref, m.Namespace, ns) && parentAccepted(p)
		})
		shareGroupKind(ref)
	}
	rt.addDefaultParents(spec.UseDefaultGateways, parents)
	return rt
}

// parentAccepted reports whether a status parent has Accepted=True.
func parentAccepted(p gwv1.RouteParentStatus) bool {
	return slices.ContainsFunc(p.Conditions, func(c metav1.Condition) bool {
		return c.Type == string(gwv1.RouteConditionAccepted) && c.Status == metav1.ConditionTrue
	})
}

// shareGroupKind points a parentRef's group and kind at the shared values
// when they are the defaults.
func shareGroupKind(ref *gwv1.ParentReference) {
	if ref.Group != nil && *ref.Group == parentGroupGateway {
		ref.Group = &parentGroupGateway
	}
	if ref.Kind != nil && *ref.Kind == parentKindGateway {
		ref.Kind = &parentKindGateway
	}
}

// DeepCopyObject implements runtime.Object.
func (in *route) DeepCopyObject() runtime.Object {
	out := *in
	out.objectMeta = in.objectMeta.deepCopy()
	out.hostnames = slices.Clone(in.hostnames)
	out.accepted = slices.Clone(in.accepted)
	// defaultScope, defaults and unresolved are copied with out := *in.
	out.backends = slices.Clone(in.backends)
	if in.parentRefs != nil {
		out.parentRefs = make([]gwv1.ParentReference, len(in.parentRefs))
		for i := range in.parentRefs {
			in.parentRefs[i].DeepCopyInto(&out.parentRefs[i])
		}
	}
	return &out
}

// routeRecords returns the records a route publishes, following the Gateway
// API as external-dns reads it: for every parentRef that is a Gateway whose
// class passes the filter and that accepted the route (or a ListenerSet
// attached to such a Gateway), the route's hostnames and hostname
// annotations, intersected with those of the listeners the parentRef selects
// and whose allowedRoutes admit the route, point at the parent's addresses.
func routeRecords(rt *route, ctx Context, c *Config) Result {
	var r Result
	if rt.ignored() {
		return r
	}
	ttl := objectTTL(&r, rt, c.TTL)
	extra := annotationHostnames(&r, rt, c.Zones)
	// The targets of every name, united over the parents that publish it, so
	// that a route attached through several listeners or Gateways publishes
	// each record once and never both a CNAME and addresses for one name.
	var order []string
	byName := map[string]*targets{}
	for i, ref := range rt.parentRefs {
		p, ok := resolveParent(&r, rt, ref, rt.accepted[i], rt.scopeOf(i), ctx, c)
		if !ok || p.targets.empty() {
			continue
		}
		var names []string
		for i := range p.listeners {
			l := &p.listeners[i]
			if !listenerSelected(l, ref) || !routeAllowed(l, p.namespace, rt, ctx) {
				continue
			}
			hostname := listenerHostname(l)
			for _, h := range listenerHostnames(hostname, rt.hostnames) {
				names = append(names, zoneNames(&r, h, c.Zones, false, "hostname")...)
			}
			names = append(names, narrowNames(extra, hostname)...)
		}
		if p.listenerSet != "" {
			names = listenerSetNames(&r, names, p, ctx)
		}
		for _, name := range names {
			nt := byName[name]
			if nt == nil {
				nt = &targets{}
				byName[name] = nt
				order = append(order, name)
			}
			nt.unite(p.targets)
		}
	}
	// Publish names with equal targets together, so that a warning about the
	// targets is given once.
	var groups [][]string
	groupOf := map[string]int{} // targets key → position in groups
	for _, name := range order {
		k := byName[name].key()
		i, ok := groupOf[k]
		if !ok {
			i = len(groups)
			groupOf[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], name)
	}
	for _, names := range groups {
		c.publish(&r, names, *byName[names[0]], ttl)
	}
	return r
}

// parent is what a route publishes through: a Gateway, or a ListenerSet
// attached to one.
type parent struct {
	listeners []gwv1.Listener
	namespace string // of the Gateway or ListenerSet: what allowedRoutes' Same means
	targets   targets
	// ListenerSet is "namespace/name" of the ListenerSet, or "" for a Gateway.
	listenerSet string
}

// listenerSetNames keeps the names that the ListenerSet's namespace may
// publish at: a tenant's ListenerSet adds listeners to a shared Gateway only
// for hostnames of its own, whatever the namespace of the route using them.
func listenerSetNames(r *Result, names []string, p parent, ctx Context) []string {
	kept := names[:0]
	for _, name := range names {
		if ctx.MayPublish(p.namespace, name) {
			kept = append(kept, name)
			continue
		}
		r.warnf("%s: not published through ListenerSet %s: outside the domains delegated to namespace %s", name, p.listenerSet, p.namespace)
		if !slices.Contains(r.Refused, name) {
			r.Refused = append(r.Refused, name)
		}
	}
	return kept
}

// resolveParent returns the parent a parentRef names, when it publishes the
// route: a Gateway whose class passes the filter, or a ListenerSet attached
// to such a Gateway, whose status.parents entry in the route says Accepted.
// A default Gateway binding (scope not empty) needs a Gateway whose
// defaultScope is scope.
func resolveParent(r *Result, rt *route, ref gwv1.ParentReference, accepted bool, scope gwv1.GatewayDefaultScope, ctx Context, c *Config) (parent, bool) {
	ns := parentNamespace(ref, rt.GetNamespace())
	switch {
	case isGatewayRef(ref):
		gw := ctx.Gateway(ns, string(ref.Name))
		if gw == nil || !gatewayClassAllowed(gw, c.GatewayClasses) || !accepted || scope != "" && gw.Spec.DefaultScope != scope {
			return parent{}, false
		}
		return parent{listeners: gw.Spec.Listeners, namespace: gw.Namespace, targets: gatewayTargets(r, gw)}, true
	case isListenerSetRef(ref) && scope == "":
		ls := ctx.ListenerSet(ns, string(ref.Name))
		if ls == nil || !accepted {
			return parent{}, false
		}
		if group, kind := refGroupKind(ref); group != ls.group || kind != ls.kind {
			return parent{}, false // e.g. an XListenerSet ref while ListenerSets are read
		}
		gwNS, gwName, ok := ls.GatewayKey()
		if !ok {
			return parent{}, false
		}
		gw := ctx.Gateway(gwNS, gwName)
		if gw == nil || !gatewayClassAllowed(gw, c.GatewayClasses) || !listenerSetAttached(ls, gw, ctx.NamespaceLabels) {
			return parent{}, false
		}
		// A target annotation on the ListenerSet wins over the Gateway's addresses.
		t, ok := annotationTargets(r, apiMeta{ls.meta})
		if !ok {
			t = gatewayTargets(r, gw)
		}
		return parent{listeners: ls.gatewayListeners(), namespace: ls.meta.Namespace, targets: t,
			listenerSet: ls.meta.Namespace + "/" + ls.meta.Name}, true
	}
	return parent{}, false // e.g. a Service parent (GAMMA): no external address
}

// routeGateways returns the namespace/name keys of the Gateways a route names as parents.
func routeGateways(rt *route) []string {
	return routeParents(rt, isGatewayRef)
}

// routeListenerSets returns the namespace/name keys of the ListenerSets a route names as parents.
func routeListenerSets(rt *route) []string {
	return routeParents(rt, isListenerSetRef)
}

func routeParents(rt *route, is func(gwv1.ParentReference) bool) []string {
	var keys []string
	for _, ref := range rt.parentRefs {
		if is(ref) {
			keys = append(keys, parentNamespace(ref, rt.GetNamespace())+"/"+string(ref.Name))
		}
	}
	return keys
}

// parentNamespace is the namespace of the parent ref names: its own, or by
// default the route's.
func parentNamespace(ref gwv1.ParentReference, routeNS string) string {
	if ref.Namespace != nil && *ref.Namespace != "" {
		return string(*ref.Namespace)
	}
	return routeNS
}

// sameParent compares a status parentRef with a spec parentRef, with defaults applied.
func sameParent(status, spec gwv1.ParentReference, routeNS, specNS string) bool {
	statusGroup, statusKind := refGroupKind(status)
	specGroup, specKind := refGroupKind(spec)
	if statusGroup != specGroup || statusKind != specKind || status.Name != spec.Name {
		return false
	}
	return parentNamespace(status, routeNS) == specNS &&
		ptrEqual(status.SectionName, spec.SectionName) &&
		ptrEqual(status.Port, spec.Port)
}

func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// listenerSelected reports whether the parentRef's sectionName and port select the listener.
func listenerSelected(l *gwv1.Listener, ref gwv1.ParentReference) bool {
	if ref.SectionName != nil && *ref.SectionName != l.Name {
		return false
	}
	return ref.Port == nil || *ref.Port == l.Port
}

// routeAllowed applies the listener's allowedRoutes to the route's namespace
// and kind; namespace is that of the listener's Gateway or ListenerSet.
func routeAllowed(l *gwv1.Listener, namespace string, rt *route, ctx Context) bool {
	from := gwv1.NamespacesFromSame
	var selector *metav1.LabelSelector
	var kinds []gwv1.RouteGroupKind
	if a := l.AllowedRoutes; a != nil {
		if a.Namespaces != nil {
			if a.Namespaces.From != nil {
				from = *a.Namespaces.From
			}
			selector = a.Namespaces.Selector
		}
		kinds = a.Kinds
	}
	switch from {
	case gwv1.NamespacesFromAll:
	case gwv1.NamespacesFromSame:
		if rt.GetNamespace() != namespace {
			return false
		}
	case gwv1.NamespacesFromSelector:
		if !selectorMatchesNamespace(selector, rt.GetNamespace(), ctx.NamespaceLabels) {
			return false
		}
	default:
		return false
	}
	if len(kinds) == 0 {
		return slices.Contains(protocolRouteKinds(l.Protocol), rt.kind)
	}
	for _, k := range kinds {
		if (k.Group == nil || *k.Group == gwv1.GroupName) && string(k.Kind) == rt.kind {
			return true
		}
	}
	return false
}

// protocolRouteKinds are the route kinds a listener admits when its
// allowedRoutes name no kinds.
func protocolRouteKinds(p gwv1.ProtocolType) []string {
	switch p {
	case gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType:
		return []string{"HTTPRoute", "GRPCRoute"}
	case gwv1.TLSProtocolType:
		return []string{"TLSRoute", "TCPRoute"}
	case gwv1.TCPProtocolType:
		return []string{"TCPRoute"}
	case gwv1.UDPProtocolType:
		return []string{"UDPRoute"}
	}
	return []string{"HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute"}
}
