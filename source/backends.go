package source

import (
	"slices"
	"strings"

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

// hostBackend is a backend Service of an Ingress: "namespace/name", and the
// host of its rule ("" for every host: a rule without host, or the default
// backend).
type hostBackend struct{ host, service string }

// IngressHealth tells which names of an Ingress are unhealthy. all: no
// backend Service of the Ingress is healthy, every name is. Otherwise hosts
// are the names (as published: lower case, fully qualified) of the hosts
// whose backends (those of their rules, of rules without host, and the
// default backend) are all unhealthy. A host without backend Services is
// not unhealthy; neither is an Ingress without any.
func IngressHealth(ing *Ingress, health ServiceHealth) (hosts []string, all bool) {
	if len(ing.backends) == 0 {
		return nil, false
	}
	healthy := make([]bool, len(ing.backends))
	any := false
	for i, b := range ing.backends {
		ns, name := splitKey(b.service)
		_, healthy[i] = health(ns, name)
		any = any || healthy[i]
	}
	if !any {
		return nil, true
	}
	for _, h := range ing.hosts {
		has, ok := false, false
		for i, b := range ing.backends {
			if b.host == "" || strings.EqualFold(b.host, h) {
				has, ok = true, ok || healthy[i]
			}
		}
		if !has || ok {
			continue
		}
		if name, err := CanonicalName(h, true); err == nil && !slices.Contains(hosts, name) {
			hosts = append(hosts, name)
		}
	}
	return hosts, false
}

// IngressBackends returns the backend Services of the Ingress, "namespace/name".
func IngressBackends(ing *Ingress) []string {
	var out []string
	for _, b := range ing.backends {
		out = append(out, b.service)
	}
	return sortedUnique(out)
}

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

// setBackends keeps bs, whose Services are in the Ingress's namespace.
func (in *Ingress) setBackends(bs []hostBackend) {
	for i := range bs {
		bs[i].service = in.GetNamespace() + "/" + bs[i].service
	}
	slices.SortFunc(bs, func(a, b hostBackend) int { return strings.Compare(a.host+"\x00"+a.service, b.host+"\x00"+b.service) })
	in.backends = slices.Clip(slices.Compact(bs))
}
