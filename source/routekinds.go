package source

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1a2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwv1a3 "sigs.k8s.io/gateway-api/apis/v1alpha3"
)

// The route kinds: a row each, read at gateway.networking.k8s.io/v1 or at
// the older versions given, newest first. An older version's converter turns
// its objects into the v1 type, so that each kind has one reader.
var (
	httpRouteKind = routeKind("HTTPRoute", "httproutes", &gwv1.HTTPRouteList{}, func(o *gwv1.HTTPRoute) routeParts {
		var refs []gwv1.BackendRef
		for _, r := range o.Spec.Rules {
			for _, b := range r.BackendRefs {
				refs = append(refs, b.BackendRef)
			}
		}
		return routeParts{&o.ObjectMeta, o.Spec.Hostnames, &o.Spec.CommonRouteSpec, o.Status.Parents, refs}
	})
	grpcRouteKind = routeKind("GRPCRoute", "grpcroutes", &gwv1.GRPCRouteList{}, func(o *gwv1.GRPCRoute) routeParts {
		var refs []gwv1.BackendRef
		for _, r := range o.Spec.Rules {
			for _, b := range r.BackendRefs {
				refs = append(refs, b.BackendRef)
			}
		}
		return routeParts{&o.ObjectMeta, o.Spec.Hostnames, &o.Spec.CommonRouteSpec, o.Status.Parents, refs}
	},
		olderVersion("v1alpha2", &gwv1a2.GRPCRouteList{}, func(o *gwv1a2.GRPCRoute) *gwv1.GRPCRoute { return (*gwv1.GRPCRoute)(o) }))
	tlsRouteKind = routeKind("TLSRoute", "tlsroutes", &gwv1.TLSRouteList{}, func(o *gwv1.TLSRoute) routeParts {
		var refs []gwv1.BackendRef
		for _, r := range o.Spec.Rules {
			refs = append(refs, r.BackendRefs...)
		}
		return routeParts{&o.ObjectMeta, o.Spec.Hostnames, &o.Spec.CommonRouteSpec, o.Status.Parents, refs}
	},
		olderVersion("v1alpha3", &gwv1a3.TLSRouteList{}, func(o *gwv1a3.TLSRoute) *gwv1.TLSRoute { return (*gwv1.TLSRoute)(o) }),
		olderVersion("v1alpha2", &gwv1a2.TLSRouteList{}, func(o *gwv1a2.TLSRoute) *gwv1.TLSRoute {
			return &gwv1.TLSRoute{ObjectMeta: o.ObjectMeta, Status: gwv1.TLSRouteStatus(o.Status), Spec: gwv1.TLSRouteSpec{
				CommonRouteSpec: o.Spec.CommonRouteSpec, Hostnames: o.Spec.Hostnames, Rules: convertRules(o.Spec.Rules, func(r gwv1a2.TLSRouteRule) gwv1.TLSRouteRule { return gwv1.TLSRouteRule(r) })}}
		}))
	tcpRouteKind = routeKind("TCPRoute", "tcproutes", &gwv1.TCPRouteList{}, func(o *gwv1.TCPRoute) routeParts {
		var refs []gwv1.BackendRef
		for _, r := range o.Spec.Rules {
			refs = append(refs, r.BackendRefs...)
		}
		return routeParts{&o.ObjectMeta, nil, &o.Spec.CommonRouteSpec, o.Status.Parents, refs}
	},
		olderVersion("v1alpha2", &gwv1a2.TCPRouteList{}, func(o *gwv1a2.TCPRoute) *gwv1.TCPRoute {
			return &gwv1.TCPRoute{ObjectMeta: o.ObjectMeta, Status: gwv1.TCPRouteStatus(o.Status), Spec: gwv1.TCPRouteSpec{
				CommonRouteSpec: o.Spec.CommonRouteSpec, Rules: convertRules(o.Spec.Rules, func(r gwv1a2.TCPRouteRule) gwv1.TCPRouteRule { return gwv1.TCPRouteRule(r) })}}
		}))
	udpRouteKind = routeKind("UDPRoute", "udproutes", &gwv1.UDPRouteList{}, func(o *gwv1.UDPRoute) routeParts {
		var refs []gwv1.BackendRef
		for _, r := range o.Spec.Rules {
			refs = append(refs, r.BackendRefs...)
		}
		return routeParts{&o.ObjectMeta, nil, &o.Spec.CommonRouteSpec, o.Status.Parents, refs}
	},
		olderVersion("v1alpha2", &gwv1a2.UDPRouteList{}, func(o *gwv1a2.UDPRoute) *gwv1.UDPRoute {
			return &gwv1.UDPRoute{ObjectMeta: o.ObjectMeta, Status: gwv1.UDPRouteStatus(o.Status), Spec: gwv1.UDPRouteSpec{
				CommonRouteSpec: o.Spec.CommonRouteSpec, Rules: convertRules(o.Spec.Rules, func(r gwv1a2.UDPRouteRule) gwv1.UDPRouteRule { return gwv1.UDPRouteRule(r) })}}
		}))
)

// routeParts is what the plugin reads of a route, whatever its kind.
type routeParts struct {
	meta      *metav1.ObjectMeta
	hostnames []gwv1.Hostname
	spec      *gwv1.CommonRouteSpec
	parents   []gwv1.RouteParentStatus
	backends  []gwv1.BackendRef
}

// routeKind returns the row of a route kind whose v1 objects are T, read by
// read. Each older version's Convert turns its objects into a T first.
func routeKind[T any](name, resource string, list runtime.Object, read func(*T) routeParts, older ...*Kind) *Kind {
	k := &Kind{
		Name: name, GroupVersion: gwv1.GroupVersion.String(), Resource: resource,
		Object: any(new(T)).(runtime.Object), List: list,
		Route:   asRoute,
		Records: func(obj any, c *Config, ctx Context) Result { return routeRecords(asRoute(obj), ctx, c) },
		Parents: func(obj any) ([]string, []string) {
			rt := asRoute(obj)
			return routeGateways(rt), routeListenerSets(rt)
		},
		Backends: routeBackends,
		Health:   routeHealth,
	}
	k.Transform = routeTransform(name, read, nil)
	for _, o := range older {
		v := *k
		v.GroupVersion, v.Object, v.List, v.Convert, v.Older = o.GroupVersion, o.Object, o.List, o.Convert, nil
		v.Transform = routeTransform(name, read, o.Convert)
		k.Older = append(k.Older, &v)
	}
	return k
}

// olderVersion describes an older version of a route kind for routeKind:
// its objects are O, converted to the v1 type T.
func olderVersion[O, T any](version string, list runtime.Object, convert func(*O) *T) *Kind {
	return &Kind{
		GroupVersion: gwv1.GroupName + "/" + version, Object: any(new(O)).(runtime.Object), List: list,
		Convert: func(obj any) any {
			if o, ok := obj.(*O); ok {
				return convert(o)
			}
			return obj
		},
	}
}

// convertRules converts the rules of an older version into the v1 type.
func convertRules[To, From any](rules []From, convert func(From) To) []To {
	out := make([]To, len(rules))
	for i, r := range rules {
		out[i] = convert(r)
	}
	return out
}

// routeTransform is the transform of one version of a route kind: the
// route that the plugin keeps, with its backend Services and whether a
// parent says ResolvedRefs False. Anything else, such as a
// cache.DeletedFinalStateUnknown, passes unchanged.
func routeTransform[T any](kind string, read func(*T) routeParts, convert func(any) any) func(any) (any, error) {
	return func(obj any) (any, error) {
		if convert != nil {
			obj = convert(obj)
		}
		o, ok := obj.(*T)
		if !ok {
			return obj, nil
		}
		p := read(o)
		rt := newRoute(kind, p.meta, p.hostnames, p.spec, p.parents)
		for _, b := range p.backends {
			if b.Group != nil && *b.Group != "" || b.Kind != nil && *b.Kind != "Service" {
				continue
			}
			ns := p.meta.Namespace
			if b.Namespace != nil && *b.Namespace != "" {
				ns = string(*b.Namespace)
			}
			rt.backends = append(rt.backends, ns+"/"+string(b.Name))
		}
		rt.backends = sortedUnique(rt.backends)
		for _, ps := range p.parents {
			rt.unresolved = rt.unresolved || slices.ContainsFunc(ps.Conditions, func(c metav1.Condition) bool {
				return c.Type == string(gwv1.RouteConditionResolvedRefs) && c.Status == metav1.ConditionFalse
			})
		}
		return rt, nil
	}
}
