package gateway

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/seed-e581d630/k8s_gateway/source"

	clientscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
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
}

// newGatewayTracker returns an object tracker for the Gateway API kinds.
func newGatewayTracker() k8stesting.ObjectTracker {
	return k8stesting.NewObjectTracker(apiScheme, apiCodecs.UniversalDecoder())
}

func (f fakeAPI) reads(k *source.Kind) bool {
	if f.gw != nil && k.GroupVersion == gwv1.GroupVersion.String() {
		return true
	}
	return k.Name == "Ingress" || k.Name == "IngressClass" || k.Name == "Service" || k.Name == "Namespace"
}

// eventSink writes Events to the clientset.
func (f fakeAPI) eventSink() (eventSink, error) { return clientsetEvents{f.core}, nil }

// clientsetEvents is an eventSink over a clientset.
type clientsetEvents struct{ core kubernetes.Interface }

func (c clientsetEvents) uid(ctx context.Context, ref objectRef) string {
	if ref.kind != "Service" {
		return ""
	}
	svc, err := c.core.CoreV1().Services(ref.namespace).Get(ctx, ref.name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return string(svc.UID)
}

func (c clientsetEvents) create(ctx context.Context, ev *event) error {
	var out corev1.Event
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(ev.object(), &out); err != nil {
		return err
	}
	_, err := c.core.CoreV1().Events(ev.about.namespace).Create(ctx, &out, metav1.CreateOptions{})
	return err
}

func (c clientsetEvents) patch(ctx context.Context, namespace, name string, mergePatch []byte) error {
	_, err := c.core.CoreV1().Events(namespace).Patch(ctx, name, types.MergePatchType, mergePatch, metav1.PatchOptions{})
	return err
}

func (f fakeAPI) listWatch(k *source.Kind, ns string) (listFunc, watchFunc) {
	if f.gw != nil && k.GroupVersion == gwv1.GroupVersion.String() {
		gvr, gvk := gwv1.SchemeGroupVersion.WithResource(k.Resource), gwv1.SchemeGroupVersion.WithKind(k.Name)
		return func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return f.gw.List(gvr, gvk, ns, o)
			},
			func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) { return f.gw.Watch(gvr, ns, o) }
	}
	switch k.Name {
	case "Ingress":
		return decodedListWatch(typedListWatch[*networkingv1.IngressList](f.core.NetworkingV1().Ingresses(ns)))
	case "IngressClass":
		return decodedListWatch(typedListWatch[*networkingv1.IngressClassList](f.core.NetworkingV1().IngressClasses()))
	case "Service":
		return decodedListWatch(typedListWatch[*corev1.ServiceList](f.core.CoreV1().Services(ns)))
	case "Namespace":
		list, watchFn := decodedListWatch(typedListWatch[*corev1.NamespaceList](f.core.CoreV1().Namespaces()))
		if ns == "" {
			return list, watchFn
		}
		return namedOnly(ns, list, watchFn)
	}
	panic("fakeAPI does not read " + k.Name)
}

func (f fakeAPI) serverGroups(context.Context) (*metav1.APIGroupList, error) {
	return f.core.Discovery().ServerGroups()
}

func (f fakeAPI) servedResources(_ context.Context, groupVersion string) ([]string, error) {
	if f.gw != nil && groupVersion == gwv1.GroupVersion.String() {
		var names []string
		for _, k := range slices.Concat(source.Kinds, routeContextKinds) {
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
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
}

// namedOnly narrows list and watch to the object name, as restAPI's
// namedListWatch reads it (the fake ignores field selectors on watches).
func namedOnly(name string, list listFunc, watchFn watchFunc) (listFunc, watchFunc) {
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
		}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := watchFn(ctx, o)
			if err != nil {
				return nil, err
			}
			return watch.Filter(w, func(e watch.Event) (watch.Event, bool) { return e, e.Type == watch.Bookmark || named(e.Object) }), nil
		}
}

func typedListWatch[L runtime.Object](c typedClient[L]) (listFunc, watchFunc) {
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
func decodedListWatch(list listFunc, watchFn watchFunc) (listFunc, watchFunc) {
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			out, err := list(ctx, o)
			if err != nil {
				return nil, err
			}
			return decoded(out)
		}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := watchFn(ctx, o)
			if err != nil {
				return nil, err
			}
			return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
				if obj, err := decoded(e.Object); err == nil {
					e.Object = obj
				}
				return e, true
			}), nil
		}
}

// TestDecodeWithAPICodecs decodes what client-go's own scheme encodes, in
// protobuf and in JSON, as the REST clients of the informers do: objects,
// lists and watch events.
func TestDecodeWithAPICodecs(t *testing.T) {
	decoder := apiCodecs.UniversalDeserializer()
	for _, mediaType := range []string{runtime.ContentTypeProtobuf, runtime.ContentTypeJSON} {
		info, ok := runtime.SerializerInfoForMediaType(clientscheme.Codecs.SupportedMediaTypes(), mediaType)
		if !ok {
			t.Fatalf("no %s serializer", mediaType)
		}
		encode := func(obj runtime.Object) []byte {
			gv := corev1.SchemeGroupVersion
			if _, ok := obj.(*networkingv1.Ingress); ok {
				gv = networkingv1.SchemeGroupVersion
			}
			data, err := runtime.Encode(clientscheme.Codecs.EncoderForVersion(info.Serializer, gv), obj)
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
		for _, obj := range testutil.TypedObjects() {
			want, _ := decoded(obj)
			got, _, err := decoder.Decode(encode(obj), nil, nil)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s %T: decoded %+v (%v), want %+v", mediaType, obj, got, err, want)
			}
		}
		list := &corev1.ServiceList{ListMeta: metav1.ListMeta{ResourceVersion: "99", Continue: "next"}}
		for _, obj := range testutil.TypedObjects()[:3] {
			list.Items = append(list.Items, *obj.(*corev1.Service))
		}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceList"))
		got, _, err := decoder.Decode(encode(list), nil, nil)
		want, _ := decoded(list)
		l, ok := got.(*source.ServiceList)
		if err != nil || !ok || !reflect.DeepEqual(l.Items, want.(*source.ServiceList).Items) || l.ResourceVersion != "99" || l.Continue != "next" {
			t.Errorf("%s ServiceList: decoded %+v (%v), want %+v", mediaType, got, err, want)
		}
	}
}
