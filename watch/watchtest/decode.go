package watchtest

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kwatch "k8s.io/apimachinery/pkg/watch"

	"github.com/seed-e581d630/k8s_gateway/internal/informer"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// TypedClient is the list/watch part of a client-go typed resource client.
type TypedClient[L runtime.Object] interface {
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (kwatch.Interface, error)
}

// TypedListWatch returns the list and watch of a typed client.
func TypedListWatch[L runtime.Object](c TypedClient[L]) (informer.ListFunc, informer.WatchFunc) {
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return c.List(ctx, o) }, c.Watch
}

// namedOnly narrows list and watch to the object name, as watch's
// namedListWatch reads it (the fake ignores field selectors on watches).
func namedOnly(name string, list informer.ListFunc, watchFn informer.WatchFunc) (informer.ListFunc, informer.WatchFunc) {
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

// decode converts the typed objects, and lists of them, of client-go's fake
// clientset into what the informers decode them into: Services, Ingresses
// and EndpointSlices into their own types, Namespaces and IngressClasses
// into their metadata.
func decode(obj runtime.Object) (runtime.Object, error) {
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

// decoded converts what list and watchFn return as the informers decode it.
func decoded(list informer.ListFunc, watchFn informer.WatchFunc) (informer.ListFunc, informer.WatchFunc) {
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			out, err := list(ctx, o)
			if err != nil {
				return nil, err
			}
			return decode(out)
		}, func(ctx context.Context, o metav1.ListOptions) (kwatch.Interface, error) {
			w, err := watchFn(ctx, o)
			if err != nil {
				return nil, err
			}
			return kwatch.Filter(w, func(e kwatch.Event) (kwatch.Event, bool) {
				if obj, err := decode(e.Object); err == nil {
					e.Object = obj
				}
				return e, true
			}), nil
		}
}
