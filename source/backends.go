package source

import (
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
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

// unhealthyHosts tells which names of an Ingress are unhealthy. all: no
// backend Service of the Ingress is healthy, every name is. Otherwise hosts
// are the names (as published: lower case, fully qualified) of the hosts
// whose backends (those of their rules, of rules without host, and the
// default backend) are all unhealthy. A host without backend Services is
// not unhealthy; neither is an Ingress without any.
func unhealthyHosts(ing *Ingress, health ServiceHealth) (hosts []string, all bool) {
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

// ingressBackends returns the backend Services of an Ingress, "namespace/name".
func ingressBackends(obj any) []string {
	ing, ok := obj.(*Ingress)
	if !ok {
		return nil
	}
	var out []string
	for _, b := range ing.backends {
		out = append(out, b.service)
	}
	return sortedUnique(out)
}

// routeBackends returns the backend Services of the route.
func routeBackends(obj any) []string { return asRoute(obj).backends }

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
