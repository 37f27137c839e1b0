package source

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The health option (see the README's "Health"): what makes an object's
// addresses unhealthy. These functions only read objects; the watch layer
// keeps the EndpointSlice counts and marks the claims.

// GatewayUnprogrammed reports whether the Gateway's Programmed condition is
// False: its addresses do not serve. No condition (a controller that has not
// written one yet) is not False: unknown is not down.
func GatewayUnprogrammed(gw *gwv1.Gateway) bool {
	return slices.ContainsFunc(gw.Status.Conditions, func(c metav1.Condition) bool {
		return c.Type == string(gwv1.GatewayConditionProgrammed) && c.Status == metav1.ConditionFalse
	})
}

// programmedCondition keeps, of a Gateway's conditions, its Programmed one.
func programmedCondition(cs []metav1.Condition) []metav1.Condition {
	for _, c := range cs {
		if c.Type == string(gwv1.GatewayConditionProgrammed) {
			return []metav1.Condition{{Type: c.Type, Status: c.Status}}
		}
	}
	return nil
}

// RouteUnhealthy reports whether a route's addresses are unhealthy: no
// backend Service of it is healthy (see routeBackendsUnhealthy), or every
// Gateway that it publishes through (directly or through a ListenerSet, of
// the parents that accepted it) is not Programmed. A route with no such
// Gateway and no backend Service is not unhealthy.
func RouteUnhealthy(obj any, ctx sourceContext, health ServiceHealth) bool {
	rt := asRoute(obj)
	if routeBackendsUnhealthy(rt, health) {
		return true
	}
	gateways := 0
	for i, ref := range rt.parentRefs {
		if !rt.accepted[i] {
			continue
		}
		ns, name := parentNamespace(ref, rt.GetNamespace()), string(ref.Name)
		switch {
		case isGatewayRef(ref):
		case isListenerSetRef(ref):
			ls := ctx.ListenerSet(ns, name)
			var ok bool
			if ls == nil {
				continue
			}
			if ns, name, ok = ls.GatewayKey(); !ok {
				continue
			}
		default:
			continue
		}
		gw := ctx.Gateway(ns, name)
		if gw == nil {
			continue
		}
		if !GatewayUnprogrammed(gw) {
			return false
		}
		gateways++
	}
	return gateways > 0
}

// ServiceLoadBalancer reports whether svc is a LoadBalancer Service: the
// Services whose addresses have a health (the others publish none, or a
// CNAME of an ExternalName).
func ServiceLoadBalancer(svc *Service) bool { return svc.typ == loadBalancerService }
