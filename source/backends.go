package source

import (
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1a2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwv1a3 "sigs.k8s.io/gateway-api/apis/v1alpha3"
)

// The backend Services of Ingresses and routes, kept for the health option:
// "namespace/name" keys, sorted and without duplicates.

// ServiceHealth tells the health of the Service namespace/name: known
// when it has EndpointSlices, healthy when one of them has a ready endpoint
// or when it has none.
type ServiceHealth func(namespace, name string) (known, healthy bool)

// IngressUnhealthy reports whether no backend Service of the Ingress (of
// its rules or its default backend) is healthy. An Ingress without backend
// Services (resource backends only) is not unhealthy.
func IngressUnhealthy(ing *Ingress, health ServiceHealth) bool {
	return backendsUnhealthy(ing.backends, false, health)
}

// IngressBackends returns the backend Services of the Ingress.
func IngressBackends(ing *Ingress) []string { return ing.backends }

// RouteBackends returns the backend Services of the route.
func RouteBackends(obj any) []string { return asRoute(obj).backends }

// routeBackendsUnhealthy reports whether the route has backends and none is
// healthy. With ResolvedRefs False, a Service without EndpointSlices does
// not count as healthy: it may be the reference that did not resolve.
func routeBackendsUnhealthy(rt *route, health ServiceHealth) bool {
	if rt.unresolved && len(rt.backends) == 0 {
		return true
	}
	return backendsUnhealthy(rt.backends, rt.unresolved, health)
}

func backendsUnhealthy(backends []string, needKnown bool, health ServiceHealth) bool {
	if len(backends) == 0 {
		return false
	}
	for _, b := range backends {
		ns, name := splitKey(b)
		known, healthy := health(ns, name)
		if healthy && (known || !needKnown) {
			return false
		}
	}
	return true
}

func splitKey(key string) (namespace, name string) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}

// slimRouteBackends is the transform of the route kinds: slimRoute, and the
// route's backend Services and whether a parent says ResolvedRefs False.
func slimRouteBackends(obj any) (any, error) {
	out, err := slimRoute(obj)
	rt, ok := out.(*route)
	if err != nil || !ok {
		return out, err
	}
	m, _ := obj.(metav1.Object)
	var refs []gwv1.BackendRef
	var parents []gwv1.RouteParentStatus
	switch o := obj.(type) {
	case *gwv1.HTTPRoute:
		for _, r := range o.Spec.Rules {
			for _, b := range r.BackendRefs {
				refs = append(refs, b.BackendRef)
			}
		}
		parents = o.Status.Parents
	case *gwv1.GRPCRoute:
		refs, parents = grpcBackends(o), o.Status.Parents
	case *gwv1a2.GRPCRoute:
		refs, parents = grpcBackends((*gwv1.GRPCRoute)(o)), o.Status.Parents
	case *gwv1.TLSRoute:
		refs, parents = ruleBackends(o.Spec.Rules), o.Status.Parents
	case *gwv1a3.TLSRoute:
		refs, parents = ruleBackends(o.Spec.Rules), o.Status.Parents
	case *gwv1a2.TLSRoute:
		for _, r := range o.Spec.Rules {
			refs = append(refs, r.BackendRefs...)
		}
		parents = o.Status.Parents
	case *gwv1.TCPRoute:
		refs, parents = ruleBackends(o.Spec.Rules), o.Status.Parents
	case *gwv1a2.TCPRoute:
		for _, r := range o.Spec.Rules {
			refs = append(refs, r.BackendRefs...)
		}
		parents = o.Status.Parents
	case *gwv1.UDPRoute:
		refs, parents = ruleBackends(o.Spec.Rules), o.Status.Parents
	case *gwv1a2.UDPRoute:
		for _, r := range o.Spec.Rules {
			refs = append(refs, r.BackendRefs...)
		}
		parents = o.Status.Parents
	}
	for _, b := range refs {
		if b.Group != nil && *b.Group != "" || b.Kind != nil && *b.Kind != "Service" {
			continue
		}
		ns := m.GetNamespace()
		if b.Namespace != nil && *b.Namespace != "" {
			ns = string(*b.Namespace)
		}
		rt.backends = append(rt.backends, ns+"/"+string(b.Name))
	}
	rt.backends = sortedUnique(rt.backends)
	for _, p := range parents {
		rt.unresolved = rt.unresolved || slices.ContainsFunc(p.Conditions, func(c metav1.Condition) bool {
			return c.Type == string(gwv1.RouteConditionResolvedRefs) && c.Status == metav1.ConditionFalse
		})
	}
	return rt, nil
}

func grpcBackends(o *gwv1.GRPCRoute) []gwv1.BackendRef {
	var refs []gwv1.BackendRef
	for _, r := range o.Spec.Rules {
		for _, b := range r.BackendRefs {
			refs = append(refs, b.BackendRef)
		}
	}
	return refs
}

// ruleBackends returns the backendRefs of the rules of a TLS, TCP or UDP route.
func ruleBackends[R interface {
	gwv1.TLSRouteRule | gwv1.TCPRouteRule | gwv1.UDPRouteRule
}](rules []R) []gwv1.BackendRef {
	var refs []gwv1.BackendRef
	for _, r := range rules {
		switch r := any(r).(type) {
		case gwv1.TLSRouteRule:
			refs = append(refs, r.BackendRefs...)
		case gwv1.TCPRouteRule:
			refs = append(refs, r.BackendRefs...)
		case gwv1.UDPRouteRule:
			refs = append(refs, r.BackendRefs...)
		}
	}
	return refs
}

func sortedUnique(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	slices.Sort(s)
	return slices.Clip(slices.Compact(s))
}

// Field numbers of an Ingress's backends (k8s.io/api/networking/v1).
const (
	pbSpecDefaultBackend                 = 1
	pbRuleValue, pbRuleHTTP, pbHTTPPaths = 2, 1, 1
	pbPathBackend, pbBackendService      = 2, 4
	pbServiceBackendName                 = 1
)

// unmarshalIngressBackend returns the Service name of an IngressBackend, or "".
func unmarshalIngressBackend(b []byte) (string, error) {
	var name string
	err := pbFields(b, func(num protowire.Number, v []byte) error {
		if num != pbBackendService {
			return nil
		}
		return pbFields(v, func(num protowire.Number, v []byte) error {
			if num == pbServiceBackendName {
				name = string(v)
			}
			return nil
		})
	})
	return name, err
}

// unmarshalRuleBackends appends the backend Services of an IngressRuleValue.
func unmarshalRuleBackends(b []byte, out []string) ([]string, error) {
	err := pbFields(b, func(num protowire.Number, v []byte) error {
		if num != pbRuleHTTP {
			return nil
		}
		return pbFields(v, func(num protowire.Number, v []byte) error {
			if num != pbHTTPPaths {
				return nil
			}
			return pbFields(v, func(num protowire.Number, v []byte) error {
				if num != pbPathBackend {
					return nil
				}
				name, err := unmarshalIngressBackend(v)
				if name != "" {
					out = append(out, name)
				}
				return err
			})
		})
	})
	return out, err
}

// ingressBackendJSON is an IngressBackend in JSON.
type ingressBackendJSON struct {
	Service *struct {
		Name string `json:"name"`
	} `json:"service"`
}

// setBackends keeps names, the backend Services in the Ingress's namespace.
func (in *Ingress) setBackends(names []string) {
	for i, n := range names {
		names[i] = in.GetNamespace() + "/" + n
	}
	in.backends = sortedUnique(names)
}
