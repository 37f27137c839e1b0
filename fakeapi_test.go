package gateway

import (
	"context"
	"slices"

	"github.com/seed-e581d630/k8s_gateway/watch"

	"github.com/seed-e581d630/k8s_gateway/source"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
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
)

// fakeAPI serves the controller from a client-go clientset, normally the
// fake one: Ingresses, IngressClasses, Services and Namespaces; and, when gw is set, the
// Gateway API kinds from an object tracker.
type fakeAPI struct {
	core kubernetes.Interface
	gw   k8stesting.ObjectTracker
	dyn  dynamic.Interface // the kinds read as unstructured objects, when set
}

// newGatewayTracker returns an object tracker for the Gateway API kinds.
func newGatewayTracker() k8stesting.ObjectTracker {
	scheme := runtime.NewScheme()
	utilruntime.Must(gwv1.Install(scheme))
	return k8stesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())
}

func (f fakeAPI) Reads(k *source.Kind) bool {
	if k.Dynamic {
		return f.dyn != nil
	}
	if f.gw != nil && k.GroupVersion == gwv1.GroupVersion.String() {
		return true
	}
	return k.Name == "Ingress" || k.Name == "IngressClass" || k.Name == "Service" || k.Name == "Namespace" || k.Name == "EndpointSlice"
}

// eventSink writes Events to the clientset.
func (f fakeAPI) EventSink() (watch.EventSink, error) { return clientsetEvents{f.core}, nil }

// clientsetEvents is an eventSink over a clientset.
type clientsetEvents struct{ core kubernetes.Interface }

func (c clientsetEvents) UID(ctx context.Context, ref watch.ObjectRef) string {
	if ref.Kind != "Service" {
		return ""
	}
	svc, err := c.core.CoreV1().Services(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return string(svc.UID)
}

func (c clientsetEvents) Create(ctx context.Context, ev *watch.Event) error {
	var out corev1.Event
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(ev.Object(), &out); err != nil {
		return err
	}
	_, err := c.core.CoreV1().Events(ev.About.Namespace).Create(ctx, &out, metav1.CreateOptions{})
	return err
}

func (c clientsetEvents) Patch(ctx context.Context, namespace, name string, mergePatch []byte) error {
	_, err := c.core.CoreV1().Events(namespace).Patch(ctx, name, types.MergePatchType, mergePatch, metav1.PatchOptions{})
	return err
}

func (f fakeAPI) ListWatch(k *source.Kind, ns string) (watch.ListFunc, watch.WatchFunc) {
	if k.Dynamic {
		gv, _ := schema.ParseGroupVersion(k.GroupVersion)
		rc := f.dyn.Resource(gv.WithResource(k.Resource)).Namespace(ns)
		return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return rc.List(ctx, o) }, rc.Watch
	}
	if f.gw != nil && k.GroupVersion == gwv1.GroupVersion.String() {
		gvr, gvk := gwv1.SchemeGroupVersion.WithResource(k.Resource), gwv1.SchemeGroupVersion.WithKind(k.Name)
		return func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return f.gw.List(gvr, gvk, ns, o)
			},
			func(_ context.Context, o metav1.ListOptions) (kwatch.Interface, error) { return f.gw.Watch(gvr, ns, o) }
	}
	switch k.Name {
	case "Ingress":
		return decodedListWatch(typedListWatch[*networkingv1.IngressList](f.core.NetworkingV1().Ingresses(ns)))
	case "IngressClass":
		return decodedListWatch(typedListWatch[*networkingv1.IngressClassList](f.core.NetworkingV1().IngressClasses()))
	case "Service":
		return decodedListWatch(typedListWatch[*corev1.ServiceList](f.core.CoreV1().Services(ns)))
	case "EndpointSlice":
		return decodedListWatch(typedListWatch[*discoveryv1.EndpointSliceList](f.core.DiscoveryV1().EndpointSlices(ns)))
	case "Namespace":
		list, watchFn := decodedListWatch(typedListWatch[*corev1.NamespaceList](f.core.CoreV1().Namespaces()))
		if ns == "" {
			return list, watchFn
		}
		return namedOnly(ns, list, watchFn)
	}
	panic("fakeAPI does not read " + k.Name)
}

func (f fakeAPI) ServerGroups(context.Context) (*metav1.APIGroupList, error) {
	return f.core.Discovery().ServerGroups()
}

func (f fakeAPI) ServedResources(_ context.Context, groupVersion string) ([]string, error) {
	if f.gw != nil && groupVersion == gwv1.GroupVersion.String() {
		var names []string
		for _, k := range slices.Concat(source.Kinds, watch.RouteContextKinds) {
			if k.GroupVersion == groupVersion {
				names = append(names, k.Resource)
			}
		}
		return names, nil
	}
	list, err := f.core.Discovery().ServerResourcesForGroupVersion(groupVersion)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, r := range list.APIResources {
		names = append(names, r.Name)
	}
	return names, nil
}

// IsWatchListSemanticsUnSupported tells the informers that the fake clients
// do not implement WatchList (see cache.ToListWatcherWithWatchListSemantics).
func (fakeAPI) IsWatchListSemanticsUnSupported() bool { return true }

// typedClient is the list/watch part of a client-go typed resource client.
type typedClient[L runtime.Object] interface {
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (kwatch.Interface, error)
}

// namedOnly narrows list and watch to the object name, as restAPI's
// namedListWatch reads it (the fake ignores field selectors on watches).
func namedOnly(name string, list watch.ListFunc, watchFn watch.WatchFunc) (watch.ListFunc, watch.WatchFunc) {
	named := func(obj runtime.Object) bool {
		m, err := meta.Accessor(obj)
		return err == nil && m.GetName() == name
	}
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			out, err := list(ctx, o)
			if err != nil {
				return nil, err
			}
			items, err := meta.ExtractList(out)
			if err != nil {
				return nil, err
			}
			return out, meta.SetList(out, slices.DeleteFunc(items, func(o runtime.Object) bool { return !named(o) }))
		}, func(ctx context.Context, o metav1.ListOptions) (kwatch.Interface, error) {
			w, err := watchFn(ctx, o)
			if err != nil {
				return nil, err
			}
			return kwatch.Filter(w, func(e kwatch.Event) (kwatch.Event, bool) { return e, e.Type == kwatch.Bookmark || named(e.Object) }), nil
		}
}

func typedListWatch[L runtime.Object](c typedClient[L]) (watch.ListFunc, watch.WatchFunc) {
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return c.List(ctx, o) }, c.Watch
}

// decoded converts the typed objects, and lists of them, of client-go's fake
// clientset into what the informers decode them into: Services and
// Ingresses into their own types, Namespaces and IngressClasses into their
// metadata.
func decoded(obj runtime.Object) (runtime.Object, error) {
	switch o := obj.(type) {
	case *corev1.Service:
		return testutil.ViaProtobuf[source.Service](o)
	case *networkingv1.Ingress:
		return testutil.ViaProtobuf[source.Ingress](o)
	case *corev1.Namespace:
		return testutil.ViaProtobuf[metav1.PartialObjectMetadata](o)
	case *networkingv1.IngressClass:
		return testutil.ViaProtobuf[metav1.PartialObjectMetadata](o)
	case *discoveryv1.EndpointSlice:
		return testutil.ViaProtobuf[source.EndpointSlice](o)
	case *discoveryv1.EndpointSliceList:
		items, err := testutil.ViaProtobufItems[source.EndpointSlice](o.Items)
		return &source.EndpointSliceList{ListMeta: o.ListMeta, Items: items}, err
	case *corev1.ServiceList:
		items, err := testutil.ViaProtobufItems[source.Service](o.Items)
		return &source.ServiceList{ListMeta: o.ListMeta, Items: items}, err
	case *networkingv1.IngressList:
		items, err := testutil.ViaProtobufItems[source.Ingress](o.Items)
		return &source.IngressList{ListMeta: o.ListMeta, Items: items}, err
	case *corev1.NamespaceList:
		items, err := testutil.ViaProtobufItems[metav1.PartialObjectMetadata](o.Items)
		return &metav1.PartialObjectMetadataList{ListMeta: o.ListMeta, Items: items}, err
	case *networkingv1.IngressClassList:
		items, err := testutil.ViaProtobufItems[metav1.PartialObjectMetadata](o.Items)
		return &metav1.PartialObjectMetadataList{ListMeta: o.ListMeta, Items: items}, err
	}
	return obj, nil
}

// decodedListWatch converts what list and watchFn return with decoded.
func decodedListWatch(list watch.ListFunc, watchFn watch.WatchFunc) (watch.ListFunc, watch.WatchFunc) {
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			out, err := list(ctx, o)
			if err != nil {
				return nil, err
			}
			return decoded(out)
		}, func(ctx context.Context, o metav1.ListOptions) (kwatch.Interface, error) {
			w, err := watchFn(ctx, o)
			if err != nil {
				return nil, err
			}
			return kwatch.Filter(w, func(e kwatch.Event) (kwatch.Event, bool) {
				if obj, err := decoded(e.Object); err == nil {
					e.Object = obj
				}
				return e, true
			}), nil
		}
}
