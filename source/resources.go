package source

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
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
	// Parents returns the Gateways and ListenerSets ("namespace/name") that
	// an object hangs on (routes, ListenerSets): the informer indexes them,
	// so that a change of a parent publishes its children again.
	Parents func(obj any) (gateways, listenerSets []string)
	// Backends returns the Services ("namespace/name") whose health is an
	// object's, with the health option (indexed). Objects of such a kind
	// publish the records of their unhealthy part apart (see Health).
	Backends func(obj any) []string
	// Health tells, with the health option, whether an object's addresses
	// are unhealthy, and for a kind with Backends which of its records
	// are (nil when none). Nil: always healthy.
	Health func(obj any, h HealthContext) (unhealthy bool, sick func(dns.RR) bool)
	// APIKind is the kind's name in the API, when it is not Name (an older
	// version's XListenerSet). Protobuf: the API server serves the kind as
	// protobuf (built-in kinds; CRDs speak JSON).
	APIKind  string
	Protobuf bool
	// Convert turns an object of an older version into the newest
	// version's type, before Transform.
	Convert func(obj any) any
	// Older are the earlier versions of the kind, newest first: the
	// controller reads the newest version that the cluster serves.
	Older []*Kind
}

// HealthContext is what Kind.Health reads besides the object.
type HealthContext struct {
	Context
	Config  *Config
	Service ServiceHealth
}

// Kinds the user names in the resources option, in documentation order.
var Kinds = []*Kind{
	{
		Name: "Ingress", GroupVersion: "networking.k8s.io/v1", Resource: "ingresses",
		Object: &Ingress{}, List: &IngressList{}, Protobuf: true,
		Backends: ingressBackends, Health: ingressHealth,
		Records: func(obj any, c *Config, ctx Context) Result {
			if len(c.IngressClasses) == 0 {
				return ingressRecords(obj.(*Ingress), c, "")
			}
			return ingressRecords(obj.(*Ingress), c, ctx.DefaultIngressClass())
		},
	},
	{
		Name: "Service", GroupVersion: "v1", Resource: "services",
		Object: &Service{}, List: &ServiceList{}, Protobuf: true,
		Health: serviceHealth,
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
	httpRouteKind, grpcRouteKind, tlsRouteKind, tcpRouteKind, udpRouteKind,
}

// Kinds read as the context of routes.
var (
	GatewayKind = &Kind{
		Name: "Gateway", GroupVersion: gwv1.GroupVersion.String(), Resource: "gateways",
		Object: &gwv1.Gateway{}, List: &gwv1.GatewayList{},
		Transform: slimGateway,
		Health: func(obj any, _ HealthContext) (bool, func(dns.RR) bool) {
			return gatewayUnprogrammed(obj.(*gwv1.Gateway)), nil
		},
		Records: func(obj any, c *Config, _ Context) Result { return gatewayRecords(obj.(*gwv1.Gateway), c) },
	}
	ListenerSetKind = &Kind{
		Name: "ListenerSet", GroupVersion: gwv1.GroupVersion.String(), Resource: "listenersets",
		Object: &gwv1.ListenerSet{}, List: &gwv1.ListenerSetList{},
		Transform: slimListenerSet,
		ListenerSet: func(obj any) *ListenerSet {
			return newListenerSet(gwv1.GroupName, "ListenerSet", obj.(*gwv1.ListenerSet))
		},
		Parents: func(obj any) ([]string, []string) {
			return listenerSetParents(newListenerSet(gwv1.GroupName, "ListenerSet", obj.(*gwv1.ListenerSet)))
		},
		Older: []*Kind{{
			Name: "ListenerSet", APIKind: "XListenerSet", GroupVersion: XListenerSetVersion.String(), Resource: "xlistenersets",
			Object: &gwv1.ListenerSet{}, List: &gwv1.ListenerSetList{},
			Transform: slimListenerSet,
			ListenerSet: func(obj any) *ListenerSet {
				return newListenerSet(experimentalGroup, "XListenerSet", obj.(*gwv1.ListenerSet))
			},
			Parents: func(obj any) ([]string, []string) {
				return listenerSetParents(newListenerSet(experimentalGroup, "XListenerSet", obj.(*gwv1.ListenerSet)))
			},
		}},
	}
	NamespaceKind = &Kind{
		Name: "Namespace", GroupVersion: "v1", Resource: "namespaces",
		Object: &metav1.PartialObjectMetadata{}, List: &metav1.PartialObjectMetadataList{}, Protobuf: true,
		Transform: slimNamespace, Cluster: true, ByName: true,
	}
)

// IngressClassKind is read as the context of Ingresses when ingressClasses
// is set: the default IngressClass stands for a class-less Ingress's class.
var IngressClassKind = &Kind{
	Name: "IngressClass", GroupVersion: "networking.k8s.io/v1", Resource: "ingressclasses",
	Object: &metav1.PartialObjectMetadata{}, List: &metav1.PartialObjectMetadataList{}, Protobuf: true,
	Transform: slimIngressClass, Cluster: true,
}

// Versions returns the kind at each version it can be read at, newest first.
func (k *Kind) Versions() []*Kind {
	return append([]*Kind{k}, k.Older...)
}

// KindName is the kind's name in the API.
func (k *Kind) KindName() string {
	if k.APIKind != "" {
		return k.APIKind
	}
	return k.Name
}

// AllKinds returns every kind the plugin may read: those of the resources
// option and those read as their context.
func AllKinds() []*Kind {
	return append(slices.Clone(Kinds), GatewayKind, ListenerSetKind, NamespaceKind, IngressClassKind, EndpointSliceKind)
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
