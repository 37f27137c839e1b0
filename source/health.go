package source

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The health option (see the README's "Health"): what makes an object's
// addresses unhealthy. These functions only read objects; the watch layer
// keeps the EndpointSlice counts and marks the claims.

// gatewayUnprogrammed reports whether the Gateway's Programmed condition is
// False: its addresses do not serve. No condition (a controller that has not
// written one yet) is not False: unknown is not down.
func gatewayUnprogrammed(gw *gwv1.Gateway) bool {
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

// routeUnhealthy reports whether a route's addresses are unhealthy: no
// backend Service of it is healthy (see routeBackendsUnhealthy), or every
// Gateway that it publishes through (directly or through a ListenerSet, of
// the parents that accepted it) is not Programmed. A route with no such
// Gateway and no backend Service is not unhealthy.
func routeUnhealthy(obj any, ctx Context, health ServiceHealth) bool {
	rt := asRoute(obj)
	if routeBackendsUnhealthy(rt, health) {
		return true
	}
	gateways := 0
	for i, ref := range rt.parentRefs {
		if !rt.accepted[i] {
			continue
		}
		gw := routeGateway(rt, ref, ctx)
		if gw == nil {
			continue
		}
		if !gatewayUnprogrammed(gw) {
			return false
		}
		gateways++
	}
	return gateways > 0
}

// routeGateway returns the Gateway that a parentRef of the route names,
// directly or through a ListenerSet, or nil.
func routeGateway(rt *route, ref gwv1.ParentReference, ctx Context) *gwv1.Gateway {
	ns, name := parentNamespace(ref, rt.GetNamespace()), string(ref.Name)
	switch {
	case isGatewayRef(ref):
	case isListenerSetRef(ref):
		ls := ctx.ListenerSet(ns, name)
		if ls == nil {
			return nil
		}
		var ok bool
		if ns, name, ok = ls.GatewayKey(); !ok {
			return nil
		}
	default:
		return nil
	}
	return ctx.Gateway(ns, name)
}

// routeDownRecords returns, for a route attached through several parents,
// what tells its records that point only at parents whose Gateway is not
// Programmed (while others are): those records are unhealthy, the route's
// others are not. Nil when no record is.
func routeDownRecords(obj any, ctx Context, c *Config) func(dns.RR) bool {
	rt := asRoute(obj)
	var r Result // warnings were given when the records were made
	var up, down targets
	for i, ref := range rt.parentRefs {
		p, ok := resolveParent(&r, rt, ref, rt.accepted[i], rt.scopeOf(i), ctx, c)
		if !ok {
			continue
		}
		if gw := routeGateway(rt, ref, ctx); gw != nil && gatewayUnprogrammed(gw) {
			down.unite(p.targets)
		} else {
			up.unite(p.targets)
		}
	}
	if up.empty() {
		return nil // every parent is down: the route is unhealthy as a whole
	}
	ips := slices.DeleteFunc(down.ips, func(ip netip.Addr) bool { return slices.Contains(up.ips, ip) })
	hosts := slices.DeleteFunc(down.hosts, func(h string) bool { return slices.Contains(up.hosts, h) })
	if len(ips) == 0 && len(hosts) == 0 {
		return nil
	}
	return func(rr dns.RR) bool {
		switch v := rr.(type) {
		case *dns.A:
			ip, ok := netip.AddrFromSlice(v.A)
			return ok && slices.Contains(ips, ip.Unmap())
		case *dns.AAAA:
			ip, ok := netip.AddrFromSlice(v.AAAA)
			return ok && slices.Contains(ips, ip.Unmap())
		case *dns.CNAME:
			return slices.Contains(hosts, strings.ToLower(v.Target))
		}
		return false
	}
}

// ServiceLoadBalancer reports whether svc is a LoadBalancer Service: the
// Services whose addresses have a health (the others publish none, or a
// CNAME of an ExternalName).
func ServiceLoadBalancer(svc *Service) bool { return svc.typ == loadBalancerService }

// The Health functions of the rows (see Kind.Health).

func serviceHealth(obj any, h HealthContext) (bool, func(dns.RR) bool) {
	svc := obj.(*Service)
	_, healthy := h.Service(svc.GetNamespace(), svc.GetName())
	return ServiceLoadBalancer(svc) && !healthy, nil
}

// ingressHealth: the records of the hosts whose backends are all unhealthy
// are; the Ingress is when all its hosts are (see unhealthyHosts).
func ingressHealth(obj any, h HealthContext) (bool, func(dns.RR) bool) {
	hosts, all := unhealthyHosts(obj.(*Ingress), h.Service)
	if len(hosts) == 0 {
		return all, nil
	}
	return all, func(rr dns.RR) bool { return slices.Contains(hosts, strings.ToLower(rr.Header().Name)) }
}

// routeHealth: a route is unhealthy as routeUnhealthy says; when it is not,
// the records that point only at Gateways not Programmed are (routeDownRecords).
func routeHealth(obj any, h HealthContext) (bool, func(dns.RR) bool) {
	if routeUnhealthy(obj, h.Context, h.Service) {
		return true, nil
	}
	return false, routeDownRecords(obj, h.Context, h.Config)
}

// listenerSetParents: a ListenerSet hangs on its Gateway.
func listenerSetParents(ls *ListenerSet) ([]string, []string) {
	if ns, name, ok := ls.GatewayKey(); ok {
		return []string{ns + "/" + name}, nil
	}
	return nil, nil
}
