package gateway

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// route is what the plugin reads of any Gateway API route kind.
type route struct {
	kind       string // HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute
	meta       *metav1.ObjectMeta
	hostnames  []gwv1.Hostname
	parentRefs []gwv1.ParentReference
	parents    []gwv1.RouteParentStatus
}

// routeRecords returns the records a route publishes, following the Gateway
// API as external-dns reads it: for every parentRef that is a Gateway whose
// class passes the filter and that accepted the route, the route's hostnames,
// intersected with those of the listeners the parentRef selects and whose
// allowedRoutes admit the route, point at the Gateway's addresses.
func routeRecords(rt *route, ctx sourceContext, c *sourceConfig) result {
	var r result
	if ignored(rt.meta) {
		return r
	}
	ttl := objectTTL(&r, rt.meta, c.ttl)
	extra := annotationHostnames(&r, rt.meta, c.zones)
	// The targets of every name, united over the parents that publish it, so
	// that a route attached through several listeners or Gateways publishes
	// each record once and never both a CNAME and addresses for one name.
	var order []string
	byName := map[string]*targets{}
	for _, ref := range rt.parentRefs {
		if !isGatewayRef(ref) {
			continue // e.g. a Service parent (GAMMA): no external address
		}
		ns := parentNamespace(ref, rt.meta.Namespace)
		gw := ctx.gateway(ns, string(ref.Name))
		if gw == nil || !gatewayClassAllowed(gw, c.gatewayClasses) || !accepted(rt, ref, ns) {
			continue
		}
		t := gatewayTargets(&r, gw)
		if t.empty() {
			continue
		}
		var names []string
		admitted := false
		for i := range gw.Spec.Listeners {
			l := &gw.Spec.Listeners[i]
			if !listenerSelected(l, ref) || !routeAllowed(l, gw, rt, ctx) {
				continue
			}
			admitted = true
			for _, h := range listenerHostnames(l.Hostname, rt.hostnames) {
				names = append(names, zoneNames(&r, h, c.zones, false, "hostname")...)
			}
		}
		if admitted {
			names = append(names, extra...)
		}
		for _, name := range names {
			nt := byName[name]
			if nt == nil {
				nt = &targets{}
				byName[name] = nt
				order = append(order, name)
			}
			nt.unite(t)
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
		r.publish(names, *byName[names[0]], ttl)
	}
	return r
}

// routeGateways returns the namespace/name keys of the Gateways a route names as parents.
func routeGateways(rt *route) []string {
	var keys []string
	for _, ref := range rt.parentRefs {
		if !isGatewayRef(ref) {
			continue
		}
		keys = append(keys, parentNamespace(ref, rt.meta.Namespace)+"/"+string(ref.Name))
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

// accepted reports whether the route's status says that the Gateway of ref
// (in namespace ns) accepted it.
func accepted(rt *route, ref gwv1.ParentReference, ns string) bool {
	for _, p := range rt.parents {
		if !sameParent(p.ParentRef, ref, rt.meta.Namespace, ns) {
			continue
		}
		for _, cond := range p.Conditions {
			if cond.Type == string(gwv1.RouteConditionAccepted) && cond.Status == metav1.ConditionTrue {
				return true
			}
		}
	}
	return false
}

// sameParent compares a status parentRef with a spec parentRef, with defaults applied.
func sameParent(status, spec gwv1.ParentReference, routeNS, specNS string) bool {
	if !isGatewayRef(status) || status.Name != spec.Name {
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

// routeAllowed applies the listener's allowedRoutes to the route's namespace and kind.
func routeAllowed(l *gwv1.Listener, gw *gwv1.Gateway, rt *route, ctx sourceContext) bool {
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
		if rt.meta.Namespace != gw.Namespace {
			return false
		}
	case gwv1.NamespacesFromSelector:
		if selector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(selector)
		if err != nil {
			return false
		}
		nsLabels, ok := ctx.namespaceLabels(rt.meta.Namespace)
		if !ok || !sel.Matches(labels.Set(nsLabels)) {
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

// listenerHostnames intersects a route's hostnames with a listener's hostname,
// wildcard-aware as the Gateway API defines it ("*.example.com" matches any
// name below example.com). A route without hostnames takes the listener's.
func listenerHostnames(listener *gwv1.Hostname, routeHosts []gwv1.Hostname) []string {
	if len(routeHosts) == 0 {
		if listener == nil || *listener == "" {
			return nil
		}
		return []string{string(*listener)}
	}
	var out []string
	for _, h := range routeHosts {
		if name, ok := intersectHostnames(string(h), listener); ok {
			out = append(out, name)
		}
	}
	return out
}

func intersectHostnames(routeHost string, listener *gwv1.Hostname) (string, bool) {
	routeHost = strings.ToLower(routeHost)
	if listener == nil || *listener == "" {
		return routeHost, true
	}
	l := strings.ToLower(string(*listener))
	switch {
	case routeHost == l:
		return routeHost, true
	case hostMatches(l, routeHost):
		return routeHost, true // the route is narrower
	case hostMatches(routeHost, l):
		return l, true // the listener is narrower
	}
	return "", false
}

// hostMatches reports whether pattern (maybe "*.suffix") covers name, which
// may itself be a wildcard.
func hostMatches(pattern, name string) bool {
	suffix, ok := strings.CutPrefix(pattern, "*.")
	if !ok {
		return false
	}
	name = strings.TrimPrefix(name, "*.")
	return name != suffix && dns.IsSubDomain(suffix+".", name+".")
}

// slimRoute keeps a route's hostnames, parentRefs and parent statuses.
func slimRoute(obj any) (any, error) {
	switch o := obj.(type) {
	case *gwv1.HTTPRoute:
		out := &gwv1.HTTPRoute{ObjectMeta: slimMeta(o.ObjectMeta)}
		out.Spec.Hostnames, out.Spec.ParentRefs, out.Status.Parents = o.Spec.Hostnames, o.Spec.ParentRefs, slimParents(o.Status.Parents)
		return out, nil
	case *gwv1.GRPCRoute:
		out := &gwv1.GRPCRoute{ObjectMeta: slimMeta(o.ObjectMeta)}
		out.Spec.Hostnames, out.Spec.ParentRefs, out.Status.Parents = o.Spec.Hostnames, o.Spec.ParentRefs, slimParents(o.Status.Parents)
		return out, nil
	case *gwv1.TLSRoute:
		out := &gwv1.TLSRoute{ObjectMeta: slimMeta(o.ObjectMeta)}
		out.Spec.Hostnames, out.Spec.ParentRefs, out.Status.Parents = o.Spec.Hostnames, o.Spec.ParentRefs, slimParents(o.Status.Parents)
		return out, nil
	case *gwv1.TCPRoute:
		out := &gwv1.TCPRoute{ObjectMeta: slimMeta(o.ObjectMeta)}
		out.Spec.ParentRefs, out.Status.Parents = o.Spec.ParentRefs, slimParents(o.Status.Parents)
		return out, nil
	case *gwv1.UDPRoute:
		out := &gwv1.UDPRoute{ObjectMeta: slimMeta(o.ObjectMeta)}
		out.Spec.ParentRefs, out.Status.Parents = o.Spec.ParentRefs, slimParents(o.Status.Parents)
		return out, nil
	}
	return obj, nil
}

// slimParents keeps the parentRef and the Accepted condition of each parent status.
func slimParents(parents []gwv1.RouteParentStatus) []gwv1.RouteParentStatus {
	out := make([]gwv1.RouteParentStatus, 0, len(parents))
	for _, p := range parents {
		s := gwv1.RouteParentStatus{ParentRef: p.ParentRef}
		for _, c := range p.Conditions {
			if c.Type == string(gwv1.RouteConditionAccepted) {
				s.Conditions = append(s.Conditions, metav1.Condition{Type: c.Type, Status: c.Status})
			}
		}
		out = append(out, s)
	}
	return out
}
