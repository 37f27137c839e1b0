package gateway

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
)

// viaProtobuf encodes in in protobuf and decodes that into a new T, as the
// informers decode what the API server sends.
func viaProtobuf[T any, PT interface {
	*T
	Unmarshal([]byte) error
}](in interface{ Marshal() ([]byte, error) }) (PT, error) {
	data, err := in.Marshal()
	if err != nil {
		return nil, err
	}
	out := PT(new(T))
	return out, out.Unmarshal(data)
}

// viaProtobufItems does viaProtobuf for each item of a list.
func viaProtobufItems[T any, PT interface {
	*T
	Unmarshal([]byte) error
}, I any, PI interface {
	*I
	Marshal() ([]byte, error)
}](items []I) ([]T, error) {
	var out []T
	for i := range items {
		o, err := viaProtobuf[T, PT](PI(&items[i]))
		if err != nil {
			return nil, err
		}
		out = append(out, *o)
	}
	return out, nil
}

// slimService converts a Service into what its informer keeps, as the
// informer decodes it. Anything else passes unchanged.
func slimService(obj any) (any, error) {
	if svc, ok := obj.(*corev1.Service); ok {
		return viaProtobuf[service](svc)
	}
	return obj, nil
}

// slimIngress converts an Ingress into what its informer keeps, as
// slimService does a Service.
func slimIngress(obj any) (any, error) {
	if ing, ok := obj.(*networkingv1.Ingress); ok {
		return viaProtobuf[ingress](ing)
	}
	return obj, nil
}

// decoded converts the typed objects, and lists of them, of client-go's fake
// clientset into what the informers decode them into: Services and
// Ingresses into their own types, Namespaces and IngressClasses into their
// metadata.
func decoded(obj runtime.Object) (runtime.Object, error) {
	switch o := obj.(type) {
	case *corev1.Service:
		return viaProtobuf[service](o)
	case *networkingv1.Ingress:
		return viaProtobuf[ingress](o)
	case *corev1.Namespace:
		return viaProtobuf[metav1.PartialObjectMetadata](o)
	case *networkingv1.IngressClass:
		return viaProtobuf[metav1.PartialObjectMetadata](o)
	case *corev1.ServiceList:
		items, err := viaProtobufItems[service](o.Items)
		return &serviceList{ListMeta: o.ListMeta, Items: items}, err
	case *networkingv1.IngressList:
		items, err := viaProtobufItems[ingress](o.Items)
		return &ingressList{ListMeta: o.ListMeta, Items: items}, err
	case *corev1.NamespaceList:
		items, err := viaProtobufItems[metav1.PartialObjectMetadata](o.Items)
		return &metav1.PartialObjectMetadataList{ListMeta: o.ListMeta, Items: items}, err
	case *networkingv1.IngressClassList:
		items, err := viaProtobufItems[metav1.PartialObjectMetadata](o.Items)
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

// testObjects are Services and Ingresses with every field the decoders read,
// and fields they skip.
func testObjects() []runtime.Object {
	nginx := "nginx"
	svc := &corev1.Service{
		ObjectMeta: k8sFullMeta(),
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, ExternalIPs: []string{"198.51.100.1"}, ClusterIP: "10.96.0.1",
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080}, {Port: 53}},
		},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}, {}, {Hostname: "lb.example.net"}}}},
	}
	external := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "apps", ResourceVersion: "7"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.net"}}
	ing := &networkingv1.Ingress{
		ObjectMeta: k8sFullMeta(),
		Spec: networkingv1.IngressSpec{
			IngressClassName: &nginx,
			Rules:            []networkingv1.IngressRule{{Host: "a.example.com"}, {}},
			TLS:              []networkingv1.IngressTLS{{Hosts: []string{"t.example.com"}, SecretName: "tls"}},
		},
		Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.2"}}}},
	}
	legacy := &networkingv1.Ingress{ObjectMeta: k8sFullMeta()}
	return []runtime.Object{svc, external, &corev1.Service{}, ing, legacy, &networkingv1.Ingress{}}
}

// TestUnmarshalJSONMatchesProtobuf: an API server that answers with JSON
// gives the informers what protobuf gives them.
func TestUnmarshalJSONMatchesProtobuf(t *testing.T) {
	for _, obj := range testObjects() {
		want, err := decoded(obj)
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		got := reflect.New(reflect.TypeOf(want).Elem()).Interface().(json.Unmarshaler)
		if err := got.UnmarshalJSON(data); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%T from JSON\n%+v, from protobuf\n%+v", obj, got, want)
		}
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
		for _, obj := range testObjects() {
			want, _ := decoded(obj)
			got, _, err := decoder.Decode(encode(obj), nil, nil)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s %T: decoded %+v (%v), want %+v", mediaType, obj, got, err, want)
			}
		}
		list := &corev1.ServiceList{ListMeta: metav1.ListMeta{ResourceVersion: "99", Continue: "next"}}
		for _, obj := range testObjects()[:3] {
			list.Items = append(list.Items, *obj.(*corev1.Service))
		}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceList"))
		got, _, err := decoder.Decode(encode(list), nil, nil)
		want, _ := decoded(list)
		l, ok := got.(*serviceList)
		if err != nil || !ok || !reflect.DeepEqual(l.Items, want.(*serviceList).Items) || l.ResourceVersion != "99" || l.Continue != "next" {
			t.Errorf("%s ServiceList: decoded %+v (%v), want %+v", mediaType, got, err, want)
		}
	}
}

// TestDecodeKeepsTheInitialEventsBookmark: the reflector ends a WatchList's
// initial events at a bookmark annotated so; the decoded object keeps it.
func TestDecodeKeepsTheInitialEventsBookmark(t *testing.T) {
	bookmark := &corev1.Service{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "12",
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
	out, err := slimService(bookmark)
	if err != nil {
		t.Fatal(err)
	}
	m := out.(*service)
	if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" || m.GetResourceVersion() != "12" {
		t.Errorf("bookmark decoded as %+v", m)
	}
}

// TestUnmarshalRejectsTruncatedData: a cut message is an error, never a
// panic or a half-read object taken for whole.
func TestUnmarshalRejectsTruncatedData(t *testing.T) {
	for _, obj := range testObjects() {
		var data []byte
		var target interface{ Unmarshal([]byte) error }
		switch o := obj.(type) {
		case *corev1.Service:
			data, _ = o.Marshal()
			target = &service{}
		case *networkingv1.Ingress:
			data, _ = o.Marshal()
			target = &ingress{}
		}
		if len(data) < 2 {
			continue
		}
		if err := target.Unmarshal(data[:len(data)-1]); err == nil {
			t.Errorf("%T: a message cut short decoded without error", obj)
		}
	}
}

// FuzzUnmarshal: any bytes decode into a service and an ingress, or fail,
// without a panic.
func FuzzUnmarshal(f *testing.F) {
	for _, obj := range testObjects() {
		data, _ := obj.(interface{ Marshal() ([]byte, error) }).Marshal()
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = (&service{}).Unmarshal(data)
		_ = (&ingress{}).Unmarshal(data)
		_ = (&serviceList{}).Unmarshal(data)
	})
}

// BenchmarkDecode compares decoding an object of test/bench into its API
// type, as the informers did before, with decoding it into what the
// informer keeps.
func BenchmarkDecode(b *testing.B) {
	svc, _ := testutil.BenchService(1).Marshal()
	ing, _ := testutil.BenchIngress(1).Marshal()
	for _, bc := range []struct {
		name   string
		data   []byte
		decode func([]byte) error
	}{
		{"Service/API type", svc, func(d []byte) error { return new(corev1.Service).Unmarshal(d) }},
		{"Service/service", svc, func(d []byte) error { return new(service).Unmarshal(d) }},
		{"Ingress/API type", ing, func(d []byte) error { return new(networkingv1.Ingress).Unmarshal(d) }},
		{"Ingress/ingress", ing, func(d []byte) error { return new(ingress).Unmarshal(d) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.decode(bc.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestUnmarshalMetaRepeatedKey: an annotation given twice keeps its last
// value, as a protobuf map does; unknown and unread fields are skipped.
func TestUnmarshalMetaRepeatedKey(t *testing.T) {
	entry := func(k, v string) []byte {
		var e []byte
		e = protowire.AppendTag(e, 1, protowire.BytesType)
		e = protowire.AppendString(e, k)
		e = protowire.AppendTag(e, 2, protowire.BytesType)
		e = protowire.AppendString(e, v)
		return e
	}
	var meta []byte
	meta = protowire.AppendTag(meta, 1, protowire.BytesType)
	meta = protowire.AppendString(meta, "web")
	meta = protowire.AppendTag(meta, 7, protowire.VarintType) // generation: not read
	meta = protowire.AppendVarint(meta, 3)
	for _, kv := range [][2]string{{"coredns.io/hostname", "old"}, {"other", "x"}, {"coredns.io/hostname", "new"}} {
		meta = protowire.AppendTag(meta, 12, protowire.BytesType)
		meta = protowire.AppendBytes(meta, entry(kv[0], kv[1]))
	}
	var m objectMeta
	if _, _, err := m.unmarshal(meta, ""); err != nil {
		t.Fatal(err)
	}
	if v, _ := m.annotation("coredns.io/hostname"); v != "new" || len(m.pairs()) != 2 || m.name != "web" {
		t.Errorf("decoded %+v, want the last hostname annotation only", m)
	}
}
