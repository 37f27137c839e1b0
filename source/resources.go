package source

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1a2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwv1a3 "sigs.k8s.io/gateway-api/apis/v1alpha3"
)

// Kind is a resource kind the plugin reads.
type Kind struct {
	Name         string // as written in the resources option
	GroupVersion string // what the informer lists
	Resource     string // the plural of the REST path
	Object       runtime.Object
	List         runtime.Object // an empty list of such objects
	Dynamic      bool           // read as unstructured objects, without Go types
	// Cluster marks cluster-scoped kinds, read in one informer whatever the
	// namespaces option says ...
	Cluster bool
	// ... unless byName: with the namespaces option, only the objects named
	// as the listed namespaces are read (Namespaces), each by its name.
	ByName bool
	// Transform converts an object as the informer receives it into what the
	// informer keeps (a cache.TransformFunc).
	Transform func(any) (any, error)
	// Records returns what an object publishes; nil for kinds read only as
	// context of other kinds (Namespace).
	Records func(obj any, c *Config, ctx Context) Result
	// Route converts an object of a Gateway API route kind.
	Route func(obj any) *route
	// ListenerSet converts a ListenerSet.
	ListenerSet func(obj any) *ListenerSet
	// Older are the earlier versions of the kind, newest first: the
	// controller reads the newest version that the cluster serves.
	Older []*Kind
}

// Kinds the user names in the resources option, in documentation order.
var Kinds = []*Kind{
	{
		Name: "Ingress", GroupVersion: "networking.k8s.io/v1", Resource: "ingresses",
		Object: &Ingress{}, List: &IngressList{},
		Records: func(obj any, c *Config, ctx Context) Result {
			if len(c.IngressClasses) == 0 {
				return ingressRecords(obj.(*Ingress), c, "")
			}
			return ingressRecords(obj.(*Ingress), c, ctx.DefaultIngressClass())
		},
	},
	{
		Name: "Service", GroupVersion: "v1", Resource: "services",
		Object: &Service{}, List: &ServiceList{},
		Records: func(obj any, c *Config, _ Context) Result {
			return serviceRecords(obj.(*Service), c)
		},
	},
	{
		Name: "DNSEndpoint", GroupVersion: DNSEndpointResource.GroupVersion().String(), Resource: DNSEndpointResource.Resource,
		Object: &unstructured.Unstructured{}, Dynamic: true,
		Transform: slimDNSEndpoint,
		Records: func(obj any, c *Config, _ Context) Result {
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
	GatewayKind = &Kind{
		Name: "Gateway", GroupVersion: gwv1.GroupVersion.String(), Resource: "gateways",
		Object: &gwv1.Gateway{}, List: &gwv1.GatewayList{},
		Transform: slimGateway,
		Records:   func(obj any, c *Config, _ Context) Result { return gatewayRecords(obj.(*gwv1.Gateway), c) },
	}
	ListenerSetKind = &Kind{
		Name: "ListenerSet", GroupVersion: gwv1.GroupVersion.String(), Resource: "listenersets",
		Object: &gwv1.ListenerSet{}, List: &gwv1.ListenerSetList{},
		Transform: slimListenerSet,
		ListenerSet: func(obj any) *ListenerSet {
			return newListenerSet(gwv1.GroupName, "ListenerSet", obj.(*gwv1.ListenerSet))
		},
		Older: []*Kind{{
			Name: "ListenerSet", GroupVersion: XListenerSetVersion.String(), Resource: "xlistenersets",
			Object: &gwv1.ListenerSet{}, List: &gwv1.ListenerSetList{},
			Transform: slimListenerSet,
			ListenerSet: func(obj any) *ListenerSet {
				return newListenerSet(experimentalGroup, "XListenerSet", obj.(*gwv1.ListenerSet))
			},
		}},
	}
	NamespaceKind = &Kind{
		Name: "Namespace", GroupVersion: "v1", Resource: "namespaces",
		Object: &metav1.PartialObjectMetadata{}, List: &metav1.PartialObjectMetadataList{},
		Transform: slimNamespace, Cluster: true, ByName: true,
	}
)

// IngressClassKind is read as the context of Ingresses when ingressClasses
// is set: the default IngressClass stands for a class-less Ingress's class.
var IngressClassKind = &Kind{
	Name: "IngressClass", GroupVersion: "networking.k8s.io/v1", Resource: "ingressclasses",
	Object: &metav1.PartialObjectMetadata{}, List: &metav1.PartialObjectMetadataList{},
	Transform: slimIngressClass, Cluster: true,
}

// routeKind returns a route kind read at gateway.networking.k8s.io/v1, or at
// the older versions given, newest first. Objects of older versions are
// converted to the v1 types by the transform (slimRoute).
func routeKind(name, resource string, object, list runtime.Object, older ...*Kind) *Kind {
	k := &Kind{
		Name: name, GroupVersion: gwv1.GroupVersion.String(), Resource: resource,
		Object: object, List: list,
		Transform: slimRouteBackends,
		Route:     asRoute,
		Records:   func(obj any, c *Config, ctx Context) Result { return routeRecords(asRoute(obj), ctx, c) },
	}
	for _, o := range older {
		v := *k
		v.GroupVersion, v.Object, v.List, v.Older = o.GroupVersion, o.Object, o.List, nil
		k.Older = append(k.Older, &v)
	}
	return k
}

// olderVersion describes an older version of a route kind for routeKind.
func olderVersion(version string, object, list runtime.Object) *Kind {
	return &Kind{GroupVersion: gwv1.GroupName + "/" + version, Object: object, List: list}
}

// Versions returns the kind at each version it can be read at, newest first.
func (k *Kind) Versions() []*Kind {
	return append([]*Kind{k}, k.Older...)
}

// SupportedKinds returns the names of every kind the resources option takes.
func SupportedKinds() []string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = k.Name
	}
	return names
}

// CanonicalKind returns the canonical name of a resource, matched case-insensitively.
func CanonicalKind(name string) (string, bool) {
	for _, k := range Kinds {
		if strings.EqualFold(k.Name, name) {
			return k.Name, true
		}
	}
	return "", false
}

func KindByName(name string) *Kind {
	for _, k := range Kinds {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// Context gives the records functions the objects that other objects'
// records depend on: routes publish through Gateways, which admit them by
// the labels of their namespaces.
type Context interface {
	// Gateway returns the Gateway namespace/name, or nil.
	Gateway(namespace, name string) *gwv1.Gateway
	// ListenerSet returns the ListenerSet namespace/name, or nil.
	ListenerSet(namespace, name string) *ListenerSet
	// NamespaceLabels returns the labels of a namespace, and whether it is known.
	NamespaceLabels(name string) (map[string]string, bool)
	// DefaultIngressClass returns the name of the cluster's default
	// IngressClass, or "" (asked only when ingressClasses is set).
	DefaultIngressClass() string
	// MayPublish reports whether objects of namespace may publish at name:
	// always, unless the ownership policy is delegated and name is outside
	// the namespace's domains.
	MayPublish(namespace, name string) bool
}
