package gateway

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// clients are the API clients the informers use.
type clients struct {
	core    kubernetes.Interface
	gateway gwclient.Interface
	dynamic dynamic.Interface
}

type (
	listFunc  func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watchFunc func(context.Context, metav1.ListOptions) (watch.Interface, error)
)

// typedClient is the list/watch part of a client-go typed resource client.
type typedClient[L runtime.Object] interface {
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
}

func listWatch[L runtime.Object](c typedClient[L]) (listFunc, watchFunc) {
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return c.List(ctx, o) }, c.Watch
}

// kind is a resource kind the plugin reads.
type kind struct {
	name         string // as written in the resources option
	groupVersion string // what the informer lists
	object       runtime.Object
	listers      func(cl clients, namespace string) (listFunc, watchFunc)
	transform    cache.TransformFunc
	// records returns what an object publishes; nil for kinds read only as
	// context of other kinds (Namespace).
	records func(obj any, c *controller) result
	// route converts an object of a Gateway API route kind.
	route func(obj any) *route
}

// Kinds the user names in the resources option, in documentation order.
var kinds = []*kind{
	{
		name: "Ingress", groupVersion: "networking.k8s.io/v1", object: &networkingv1.Ingress{},
		listers: func(cl clients, ns string) (listFunc, watchFunc) {
			return listWatch[*networkingv1.IngressList](cl.core.NetworkingV1().Ingresses(ns))
		},
		transform: slimIngress,
		records:   func(obj any, c *controller) result { return ingressRecords(obj.(*networkingv1.Ingress), &c.sources) },
	},
	{
		name: "Service", groupVersion: "v1", object: &corev1.Service{},
		listers: func(cl clients, ns string) (listFunc, watchFunc) {
			return listWatch[*corev1.ServiceList](cl.core.CoreV1().Services(ns))
		},
		transform: slimService,
		records:   func(obj any, c *controller) result { return serviceRecords(obj.(*corev1.Service), &c.sources) },
	},
	{
		name: "DNSEndpoint", groupVersion: dnsEndpointResource.GroupVersion().String(), object: &unstructured.Unstructured{},
		listers: func(cl clients, ns string) (listFunc, watchFunc) {
			return listWatch[*unstructured.UnstructuredList](cl.dynamic.Resource(dnsEndpointResource).Namespace(ns))
		},
		transform: slimDNSEndpoint,
		records:   func(obj any, c *controller) result { return dnsEndpointRecords(obj.(*dnsEndpoint), &c.sources) },
	},
	routeKind("HTTPRoute", &gwv1.HTTPRoute{}, func(cl clients, ns string) (listFunc, watchFunc) {
		return listWatch[*gwv1.HTTPRouteList](cl.gateway.GatewayV1().HTTPRoutes(ns))
	}, func(obj any) *route {
		o := obj.(*gwv1.HTTPRoute)
		return &route{kind: "HTTPRoute", meta: &o.ObjectMeta, hostnames: o.Spec.Hostnames, parentRefs: o.Spec.ParentRefs, parents: o.Status.Parents}
	}),
	routeKind("GRPCRoute", &gwv1.GRPCRoute{}, func(cl clients, ns string) (listFunc, watchFunc) {
		return listWatch[*gwv1.GRPCRouteList](cl.gateway.GatewayV1().GRPCRoutes(ns))
	}, func(obj any) *route {
		o := obj.(*gwv1.GRPCRoute)
		return &route{kind: "GRPCRoute", meta: &o.ObjectMeta, hostnames: o.Spec.Hostnames, parentRefs: o.Spec.ParentRefs, parents: o.Status.Parents}
	}),
	routeKind("TLSRoute", &gwv1.TLSRoute{}, func(cl clients, ns string) (listFunc, watchFunc) {
		return listWatch[*gwv1.TLSRouteList](cl.gateway.GatewayV1().TLSRoutes(ns))
	}, func(obj any) *route {
		o := obj.(*gwv1.TLSRoute)
		return &route{kind: "TLSRoute", meta: &o.ObjectMeta, hostnames: o.Spec.Hostnames, parentRefs: o.Spec.ParentRefs, parents: o.Status.Parents}
	}),
	routeKind("TCPRoute", &gwv1.TCPRoute{}, func(cl clients, ns string) (listFunc, watchFunc) {
		return listWatch[*gwv1.TCPRouteList](cl.gateway.GatewayV1().TCPRoutes(ns))
	}, func(obj any) *route {
		o := obj.(*gwv1.TCPRoute)
		return &route{kind: "TCPRoute", meta: &o.ObjectMeta, parentRefs: o.Spec.ParentRefs, parents: o.Status.Parents}
	}),
	routeKind("UDPRoute", &gwv1.UDPRoute{}, func(cl clients, ns string) (listFunc, watchFunc) {
		return listWatch[*gwv1.UDPRouteList](cl.gateway.GatewayV1().UDPRoutes(ns))
	}, func(obj any) *route {
		o := obj.(*gwv1.UDPRoute)
		return &route{kind: "UDPRoute", meta: &o.ObjectMeta, parentRefs: o.Spec.ParentRefs, parents: o.Status.Parents}
	}),
}

// Kinds read as the context of routes.
var (
	gatewayKind = &kind{
		name: "Gateway", groupVersion: gwv1.GroupVersion.String(), object: &gwv1.Gateway{},
		listers: func(cl clients, ns string) (listFunc, watchFunc) {
			return listWatch[*gwv1.GatewayList](cl.gateway.GatewayV1().Gateways(ns))
		},
		transform: slimGateway,
		records:   func(obj any, c *controller) result { return gatewayRecords(obj.(*gwv1.Gateway), &c.sources) },
	}
	namespaceKind = &kind{
		name: "Namespace", groupVersion: "v1", object: &corev1.Namespace{},
		listers: func(cl clients, _ string) (listFunc, watchFunc) {
			return listWatch[*corev1.NamespaceList](cl.core.CoreV1().Namespaces())
		},
		transform: slimNamespace,
	}
)

func routeKind(name string, object runtime.Object, listers func(clients, string) (listFunc, watchFunc), conv func(any) *route) *kind {
	return &kind{
		name: name, groupVersion: gwv1.GroupVersion.String(), object: object,
		listers:   listers,
		transform: slimRoute,
		route:     conv,
		records:   func(obj any, c *controller) result { return routeRecords(conv(obj), c, &c.sources) },
	}
}

// supportedResources returns the names of every kind the resources option takes.
func supportedResources() []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return names
}

// resourceKind returns the canonical name of a resource, matched case-insensitively.
func resourceKind(name string) (string, bool) {
	for _, k := range kinds {
		if strings.EqualFold(k.name, name) {
			return k.name, true
		}
	}
	return "", false
}

func kindByName(name string) *kind {
	for _, k := range kinds {
		if k.name == name {
			return k
		}
	}
	return nil
}
