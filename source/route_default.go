package source

import (
	"slices"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Default Gateways (GEP-3793, experimental channel since Gateway API v1.6):
// a route that sets spec.useDefaultGateways is attached by the Gateway
// implementation to the Gateways whose spec.defaultScope is that scope. The
// binding is written only in the route's status.parents, never in
// spec.parentRefs. The plugin keeps those status parents as extra
// parentRefs, and publishes through one only while the Gateway's
// defaultScope still matches, with the usual listener rules (sectionName,
// port, allowedRoutes, hostnames).

// addDefaultParents appends to the route's parentRefs the Gateways that
// status.parents names as Accepted and spec.parentRefs does not list, when
// the route asks for default Gateways of scope.
func (rt *route) addDefaultParents(scope gwv1.GatewayDefaultScope, parents []gwv1.RouteParentStatus) {
	if scope == "" || scope == gwv1.GatewayDefaultScopeNone {
		return
	}
	routeNS := rt.GetNamespace()
	specRefs := len(rt.parentRefs)
	for _, p := range parents {
		ref := p.ParentRef
		if !isGatewayRef(ref) || !parentAccepted(p) {
			continue
		}
		ns := parentNamespace(ref, routeNS)
		// Listed in spec.parentRefs, or twice in the status: already kept.
		if slices.ContainsFunc(rt.parentRefs, func(known gwv1.ParentReference) bool {
			return sameParent(ref, known, routeNS, parentNamespace(known, routeNS))
		}) {
			continue
		}
		var kept gwv1.ParentReference
		ref.DeepCopyInto(&kept)
		if kept.Namespace == nil || *kept.Namespace == "" {
			n := gwv1.Namespace(ns)
			kept.Namespace = &n
		}
		shareGroupKind(&kept)
		rt.parentRefs = append(rt.parentRefs, kept)
		rt.accepted = append(rt.accepted, true)
	}
	if rt.defaults = len(rt.parentRefs) - specRefs; rt.defaults > 0 {
		rt.defaultScope = scope
	}
}

// scopeOf returns the default scope a parentRef binds the route through: ""
// for spec.parentRefs, the route's useDefaultGateways for default Gateways.
func (rt *route) scopeOf(i int) gwv1.GatewayDefaultScope {
	if i < len(rt.parentRefs)-rt.defaults {
		return ""
	}
	return rt.defaultScope
}
