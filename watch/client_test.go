package watch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// TestDecodeWithAPICodecs decodes what client-go's own scheme encodes, in
// protobuf and in JSON, as the REST clients of the informers do: objects,
// lists and watch events.
func TestDecodeWithAPICodecs(t *testing.T) {
	for _, mediaType := range []string{runtime.ContentTypeProtobuf, runtime.ContentTypeJSON} {
		info, ok := runtime.SerializerInfoForMediaType(clientscheme.Codecs.SupportedMediaTypes(), mediaType)
		if !ok {
			t.Fatalf("no %s serializer", mediaType)
		}
		groupVersion := func(obj runtime.Object) schema.GroupVersion {
			if _, ok := obj.(*networkingv1.Ingress); ok {
				return networkingv1.SchemeGroupVersion
			}
			return corev1.SchemeGroupVersion
		}
		encode := func(obj runtime.Object) []byte {
			data, err := runtime.Encode(clientscheme.Codecs.EncoderForVersion(info.Serializer, groupVersion(obj)), obj)
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
		decoder := func(obj runtime.Object) runtime.Decoder {
			return groupSchemes[groupVersion(obj).String()].codecs.UniversalDeserializer()
		}
		for _, obj := range testutil.TypedObjects() {
			want := asDecoded(t, obj)
			got, _, err := decoder(obj).Decode(encode(obj), nil, nil)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s %T: decoded %+v (%v), want %+v", mediaType, obj, got, err, want)
			}
		}
		list := &corev1.ServiceList{ListMeta: metav1.ListMeta{ResourceVersion: "99", Continue: "next"}}
		for _, obj := range testutil.TypedObjects()[:3] {
			list.Items = append(list.Items, *obj.(*corev1.Service))
		}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceList"))
		got, _, err := decoder(list).Decode(encode(list), nil, nil)
		var want []source.Service
		for _, obj := range testutil.TypedObjects()[:3] {
			want = append(want, *asDecoded(t, obj).(*source.Service))
		}
		l, ok := got.(*source.ServiceList)
		if err != nil || !ok || !reflect.DeepEqual(l.Items, want) || l.ResourceVersion != "99" || l.Continue != "next" {
			t.Errorf("%s ServiceList: decoded %+v (%v), want %+v", mediaType, got, err, want)
		}
	}
}

// asDecoded converts a typed Service or Ingress as the informers' protobuf
// decoding does.
func asDecoded(t *testing.T, obj runtime.Object) runtime.Object {
	t.Helper()
	var out runtime.Object
	var err error
	switch o := obj.(type) {
	case *corev1.Service:
		out, err = testutil.ViaProtobuf[source.Service](o)
	case *networkingv1.Ingress:
		out, err = testutil.ViaProtobuf[source.Ingress](o)
	default:
		t.Fatalf("unexpected %T", obj)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRestAPIUnstructuredKind: a kind read as unstructured objects is listed
// at its own row's group version and resource, never as DNSEndpoints.
func TestRestAPIUnstructuredKind(t *testing.T) {
	var paths []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apiVersion":"example.dev/v1","kind":"WidgetList","metadata":{"resourceVersion":"1"},"items":[]}`)
	}))
	defer srv.Close()
	api, err := NewRestAPI(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	widgets := &source.Kind{Name: "Widget", GroupVersion: "example.dev/v1", Resource: "widgets", Object: &unstructured.Unstructured{}, Dynamic: true}
	if !api.Reads(widgets) {
		t.Fatal("Reads(Widget) is false")
	}
	list, _ := api.ListWatch(widgets, "ns")
	if _, err := list(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"/apis/example.dev/v1/namespaces/ns/widgets"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("requests %v, want %v", paths, want)
	}
}

// TestRestConfigContext checks that the kubeconfig option's context chooses the cluster.
func TestRestConfigContext(t *testing.T) {
	path := testutil.Kubeconfig(t)
	for ctx, want := range map[string]string{"": "https://192.0.2.1:6443", "one": "https://192.0.2.1:6443", "two": "https://192.0.2.2:6443"} {
		cfg, err := RestConfig(path, ctx)
		if err != nil {
			t.Fatalf("restConfig(%q): %v", ctx, err)
		}
		if cfg.Host != want || cfg.UserAgent != "k8s_gateway" {
			t.Errorf("restConfig(%q): host %q, user agent %q; want host %q", ctx, cfg.Host, cfg.UserAgent, want)
		}
	}
	if _, err := RestConfig(path, "three"); err == nil {
		t.Error("restConfig with a missing context succeeded")
	}
}
