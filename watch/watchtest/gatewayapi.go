package watchtest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1a2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/seed-e581d630/k8s_gateway/internal/informer"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// VersionedAPI adds the Gateway API kinds of gateway-api's clientset
// (normally its fake) to an API, at the versions that Serve says the
// cluster serves: tests change them while a controller runs.
type VersionedAPI struct {
	API
	Gateways gwclient.Interface
	mu       sync.Mutex
	served   map[string][]string
}

// NewVersionedAPI returns a VersionedAPI that serves the resources served
// (group version → resources).
func NewVersionedAPI(api API, gateways gwclient.Interface, served map[string][]string) *VersionedAPI {
	return &VersionedAPI{API: api, Gateways: gateways, served: served}
}

// Serve changes what discovery says is served: group version → resources.
func (f *VersionedAPI) Serve(served map[string][]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.served = served
}

// ServedResources returns the resources that Serve set for groupVersion.
func (f *VersionedAPI) ServedResources(_ context.Context, groupVersion string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.served[groupVersion], nil
}

// Reads reports whether the API serves kind k.
func (f *VersionedAPI) Reads(k *source.Kind) bool {
	return f.API.Reads(k) || slices.Contains([]string{"Gateway", "ListenerSet", "HTTPRoute", "TCPRoute"}, k.Name)
}

// ListWatch returns the list and watch of kind k in namespace ns.
func (f *VersionedAPI) ListWatch(k *source.Kind, ns string) (informer.ListFunc, informer.WatchFunc) {
	switch k.Name + " " + k.GroupVersion {
	case "Gateway gateway.networking.k8s.io/v1":
		return TypedListWatch[*gwv1.GatewayList](f.Gateways.GatewayV1().Gateways(ns))
	case "ListenerSet gateway.networking.k8s.io/v1":
		return TypedListWatch[*gwv1.ListenerSetList](f.Gateways.GatewayV1().ListenerSets(ns))
	case "HTTPRoute gateway.networking.k8s.io/v1":
		return TypedListWatch[*gwv1.HTTPRouteList](f.Gateways.GatewayV1().HTTPRoutes(ns))
	case "TCPRoute gateway.networking.k8s.io/v1":
		return TypedListWatch[*gwv1.TCPRouteList](f.Gateways.GatewayV1().TCPRoutes(ns))
	case "TCPRoute gateway.networking.k8s.io/v1alpha2":
		return TypedListWatch[*gwv1a2.TCPRouteList](f.Gateways.GatewayV1alpha2().TCPRoutes(ns))
	}
	return f.API.ListWatch(k, ns)
}

// CreateGatewayObjects creates objects through the typed clients: the fake
// clientset's constructor files some under v1beta1, where v1's types are
// aliased. (Use the simple fake clientset: the field-managed one knows no
// v1 Gateways.)
func CreateGatewayObjects(c gwclient.Interface, objs ...any) error {
	ctx, opts := context.Background(), metav1.CreateOptions{}
	for _, obj := range objs {
		var err error
		switch o := obj.(type) {
		case *gwv1.Gateway:
			_, err = c.GatewayV1().Gateways(o.Namespace).Create(ctx, o, opts)
		case *gwv1.ListenerSet:
			_, err = c.GatewayV1().ListenerSets(o.Namespace).Create(ctx, o, opts)
		case *gwv1.HTTPRoute:
			_, err = c.GatewayV1().HTTPRoutes(o.Namespace).Create(ctx, o, opts)
		case *gwv1.TCPRoute:
			_, err = c.GatewayV1().TCPRoutes(o.Namespace).Create(ctx, o, opts)
		case *gwv1a2.TCPRoute:
			_, err = c.GatewayV1alpha2().TCPRoutes(o.Namespace).Create(ctx, o, opts)
		default:
			err = fmt.Errorf("CreateGatewayObjects: %T", obj)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
