package gateway

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1a2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwv1a3 "sigs.k8s.io/gateway-api/apis/v1alpha3"
)

// kind is a resource kind the plugin reads.
type kind struct {
	name         string // as written in the resources option
	groupVersion string // what the informer lists
	resource     string // the plural of the REST path
	object       runtime.Object
	list         runtime.Object // an empty list of such objects
	dynamic      bool           // read as unstructured objects, without Go types
	// cluster marks cluster-scoped kinds, read in one informer whatever the
	// namespaces option says ...
	cluster bool
	// ... unless byName: with the namespaces option, only the objects named
	// as the listed namespaces are read (Namespaces), each by its name.
	byName    bool
	transform cache.TransformFunc
	// records returns what an object publishes; nil for kinds read only as
	// context of other kinds (Namespace).
	records func(obj any, c *sourceConfig, ctx sourceContext) result
	// route converts an object of a Gateway API route kind.
	route func(obj any) *route
	// listenerSet converts a ListenerSet.
	listenerSet func(obj any) *listenerSet
	// older are the earlier versions of the kind, newest first: the
	// controller reads the newest version that the cluster serves.
	older []*kind
}

// Kinds the user names in the resources option, in documentation order.
var kinds = []*kind{
	{
		name: "Ingress", groupVersion: "networking.k8s.io/v1", resource: "ingresses",
		object: &ingress{}, list: &ingressList{},
		records: func(obj any, c *sourceConfig, ctx sourceContext) result {
			if len(c.ingressClasses) == 0 {
				return ingressRecords(obj.(*ingress), c, "")
			}
			return ingressRecords(obj.(*ingress), c, ctx.defaultIngressClass())
		},
	},
	{
		name: "Service", groupVersion: "v1", resource: "services",
		object: &service{}, list: &serviceList{},
		records: func(obj any, c *sourceConfig, _ sourceContext) result {
			return serviceRecords(obj.(*service), c)
		},
	},
	{
		name: "DNSEndpoint", groupVersion: dnsEndpointResource.GroupVersion().String(), resource: dnsEndpointResource.Resource,
		object: &unstructured.Unstructured{}, dynamic: true,
		transform: slimDNSEndpoint,
		records: func(obj any, c *sourceConfig, _ sourceContext) result {
			return dnsEndpointRecords(obj.(*dnsEndpoint), c)
		},
	},
	routeKind("HTTPRoute", "httproutes", &gwv1.HTTPRoute{}, &gwv1.HTTPRouteList{}),
	routeKind("GRPCRoute", "grpcroutes", &gwv1.GRPCRoute{}, &gwv1.GRPCRouteList{}, olderVersion("v1alpha2", &gwv1a2.GRPCRoute{}, &gwv1a2.GRPCRouteList{})),
	routeKind("TLSRoute", "tlsroutes", &gwv1.TLSRoute{}, &gwv1.TLSRouteList{}, olderVersion("v1alpha3", &gwv1a3.TLSRoute{}, &gwv1a3.TLSRouteList{}), olderVersion("v1alpha2", &gwv1a2.TLSRoute{}, &gwv1a2.TLSRouteList{})),
	routeKind("TCPRoute", "tcproutes", &gwv1.TCPRoute{}, &gwv1.TCPRouteList{}, olderVersion("v1alpha2", &gwv1a2.TCPRoute{}, &gwv1a2.TCPRouteList{})),
	routeKind("UDPRoute", "udproutes", &gwv1.UDPRoute{}, &gwv1.UDPRouteList{}, olderVersion("v1alpha2", &gwv1a2.UDPRoute{}, &gwv1a2.UDPRouteList{})),
}

// Kinds read as the context of routes.
var (
	gatewayKind = &kind{
		name: "Gateway", groupVersion: gwv1.GroupVersion.String(), resource: "gateways",
		object: &gwv1.Gateway{}, list: &gwv1.GatewayList{},
		transform: slimGateway,
		records:   func(obj any, c *sourceConfig, _ sourceContext) result { return gatewayRecords(obj.(*gwv1.Gateway), c) },
	}
	listenerSetKind = &kind{
		name: "ListenerSet", groupVersion: gwv1.GroupVersion.String(), resource: "listenersets",
		object: &gwv1.ListenerSet{}, list: &gwv1.ListenerSetList{},
		transform: slimListenerSet,
		listenerSet: func(obj any) *listenerSet {
			return newListenerSet(gwv1.GroupName, "ListenerSet", obj.(*gwv1.ListenerSet))
		},
		older: []*kind{{
			name: "ListenerSet", groupVersion: xListenerSetVersion.String(), resource: "xlistenersets",
			object: &gwv1.ListenerSet{}, list: &gwv1.ListenerSetList{},
			transform: slimListenerSet,
			listenerSet: func(obj any) *listenerSet {
				return newListenerSet(experimentalGroup, "XListenerSet", obj.(*gwv1.ListenerSet))
			},
		}},
	}
	namespaceKind = &kind{
		name: "Namespace", groupVersion: "v1", resource: "namespaces",
		object: &metav1.PartialObjectMetadata{}, list: &metav1.PartialObjectMetadataList{},
		transform: slimNamespace, cluster: true, byName: true,
	}
)

// ingressClassKind is read as the context of Ingresses when ingressClasses
// is set: the default IngressClass stands for a class-less Ingress's class.
var ingressClassKind = &kind{
	name: "IngressClass", groupVersion: "networking.k8s.io/v1", resource: "ingressclasses",
	object: &metav1.PartialObjectMetadata{}, list: &metav1.PartialObjectMetadataList{},
	transform: slimIngressClass, cluster: true,
}

// routeKind returns a route kind read at gateway.networking.k8s.io/v1, or at
// the older versions given, newest first. Objects of older versions are
// converted to the v1 types by the transform (slimRoute).
func routeKind(name, resource string, object, list runtime.Object, older ...*kind) *kind {
	k := &kind{
		name: name, groupVersion: gwv1.GroupVersion.String(), resource: resource,
		object: object, list: list,
		transform: slimRoute,
		route:     asRoute,
		records:   func(obj any, c *sourceConfig, ctx sourceContext) result { return routeRecords(asRoute(obj), ctx, c) },
	}
	for _, o := range older {
		v := *k
		v.groupVersion, v.object, v.list, v.older = o.groupVersion, o.object, o.list, nil
		k.older = append(k.older, &v)
	}
	return k
}

// olderVersion describes an older version of a route kind for routeKind.
func olderVersion(version string, object, list runtime.Object) *kind {
	return &kind{groupVersion: gwv1.GroupName + "/" + version, object: object, list: list}
}

// versions returns the kind at each version it can be read at, newest first.
func (k *kind) versions() []*kind {
	return append([]*kind{k}, k.older...)
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

// sourceContext gives the records functions the objects that other objects'
// records depend on: routes publish through Gateways, which admit them by
// the labels of their namespaces.
type sourceContext interface {
	// gateway returns the Gateway namespace/name, or nil.
	gateway(namespace, name string) *gwv1.Gateway
	// listenerSet returns the ListenerSet namespace/name, or nil.
	listenerSet(namespace, name string) *listenerSet
	// namespaceLabels returns the labels of a namespace, and whether it is known.
	namespaceLabels(name string) (map[string]string, bool)
	// defaultIngressClass returns the name of the cluster's default
	// IngressClass, or "" (asked only when ingressClasses is set).
	defaultIngressClass() string
	// mayPublish reports whether objects of namespace may publish at name:
	// always, unless the ownership policy is delegated and name is outside
	// the namespace's domains.
	mayPublish(namespace, name string) bool
}
