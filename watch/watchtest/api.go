package watchtest

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	k8stesting "k8s.io/client-go/testing"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/seed-e581d630/k8s_gateway/internal/informer"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// API serves a controller from a client-go clientset, normally the fake one:
// Ingresses, IngressClasses, Services, EndpointSlices and Namespaces; when
// Gateway is set, the Gateway API kinds from that object tracker; when
// Dynamic is set, the kinds read as unstructured objects. It writes Events to
// Core. Controllers on APIs of one Share key, when set, share informers.
type API struct {
	Core    kubernetes.Interface
	Gateway k8stesting.ObjectTracker
	Dynamic dynamic.Interface
	Share   string
}

// NewGatewayTracker returns an object tracker for the Gateway API kinds.
func NewGatewayTracker() k8stesting.ObjectTracker {
	scheme := runtime.NewScheme()
	utilruntime.Must(gwv1.Install(scheme))
	return k8stesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())
}

// Reads reports whether the API serves kind k.
func (f API) Reads(k *source.Kind) bool {
	if k.Dynamic {
		return f.Dynamic != nil
	}
	if f.Gateway != nil && k.GroupVersion == gwv1.GroupVersion.String() {
		return true
	}
	return k.Name == "Ingress" || k.Name == "IngressClass" || k.Name == "Service" || k.Name == "Namespace" || k.Name == "EndpointSlice"
}

// ListWatch returns the list and watch of kind k in namespace ns.
func (f API) ListWatch(k *source.Kind, ns string) (informer.ListFunc, informer.WatchFunc) {
	if k.Dynamic {
		gv, _ := schema.ParseGroupVersion(k.GroupVersion)
		rc := f.Dynamic.Resource(gv.WithResource(k.Resource)).Namespace(ns)
		return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return rc.List(ctx, o) }, rc.Watch
	}
	if f.Gateway != nil && k.GroupVersion == gwv1.GroupVersion.String() {
		gvr, gvk := gwv1.SchemeGroupVersion.WithResource(k.Resource), gwv1.SchemeGroupVersion.WithKind(k.Name)
		return func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return f.Gateway.List(gvr, gvk, ns, o)
			},
			func(_ context.Context, o metav1.ListOptions) (kwatch.Interface, error) {
				return f.Gateway.Watch(gvr, ns, o)
			}
	}
	switch k.Name {
	case "Ingress":
		return decoded(TypedListWatch[*networkingv1.IngressList](f.Core.NetworkingV1().Ingresses(ns)))
	case "IngressClass":
		return decoded(TypedListWatch[*networkingv1.IngressClassList](f.Core.NetworkingV1().IngressClasses()))
	case "Service":
		return decoded(TypedListWatch[*corev1.ServiceList](f.Core.CoreV1().Services(ns)))
	case "EndpointSlice":
		return decoded(TypedListWatch[*discoveryv1.EndpointSliceList](f.Core.DiscoveryV1().EndpointSlices(ns)))
	case "Namespace":
		list, watchFn := decoded(TypedListWatch[*corev1.NamespaceList](f.Core.CoreV1().Namespaces()))
		if ns == "" {
			return list, watchFn
		}
		return namedOnly(ns, list, watchFn)
	}
	panic("watchtest.API does not read " + k.Name)
}

// ServerGroups returns the groups of Core's discovery.
func (f API) ServerGroups(context.Context) (*metav1.APIGroupList, error) {
	return f.Core.Discovery().ServerGroups()
}

// ServedResources returns the resources served at groupVersion: with
// Gateway, every Gateway API kind the plugin reads; else Core's discovery.
func (f API) ServedResources(_ context.Context, groupVersion string) ([]string, error) {
	if f.Gateway != nil && groupVersion == gwv1.GroupVersion.String() {
		var names []string
		for _, k := range source.AllKinds() {
			if k.GroupVersion == groupVersion && !slices.Contains(names, k.Resource) {
				names = append(names, k.Resource)
			}
		}
		return names, nil
	}
	list, err := f.Core.Discovery().ServerResourcesForGroupVersion(groupVersion)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, r := range list.APIResources {
		names = append(names, r.Name)
	}
	return names, nil
}

// ShareKey is Share (watch.Sharer).
func (f API) ShareKey() string { return f.Share }

// IsWatchListSemanticsUnSupported tells the informers that the fake clients
// do not implement WatchList (see cache.ToListWatcherWithWatchListSemantics).
func (API) IsWatchListSemanticsUnSupported() bool { return true }

// ObjectUID returns the UID of a Service in Core, "" for other kinds.
func (f API) ObjectUID(ctx context.Context, _, kind, namespace, name string) string {
	if kind != "Service" {
		return ""
	}
	svc, err := f.Core.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return string(svc.UID)
}

// CreateEvent creates the Event in Core.
func (f API) CreateEvent(ctx context.Context, namespace string, object map[string]any) error {
	var out corev1.Event
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(object, &out); err != nil {
		return err
	}
	_, err := f.Core.CoreV1().Events(namespace).Create(ctx, &out, metav1.CreateOptions{})
	return err
}

// PatchEvent applies a JSON merge patch to an Event of Core.
func (f API) PatchEvent(ctx context.Context, namespace, name string, mergePatch []byte) error {
	_, err := f.Core.CoreV1().Events(namespace).Patch(ctx, name, types.MergePatchType, mergePatch, metav1.PatchOptions{})
	return err
}
