package source

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// slimService converts a Service into what its informer keeps, as the
// informer decodes it. Anything else passes unchanged.
func slimService(obj any) (any, error) {
	if svc, ok := obj.(*corev1.Service); ok {
		return testutil.ViaProtobuf[Service](svc)
	}
	return obj, nil
}

// slimIngress converts an Ingress into what its informer keeps, as
// slimService does a Service.
func slimIngress(obj any) (any, error) {
	if ing, ok := obj.(*networkingv1.Ingress); ok {
		return testutil.ViaProtobuf[Ingress](ing)
	}
	return obj, nil
}

// TestUnmarshalJSONMatchesProtobuf: an API server that answers with JSON
// gives the informers what protobuf gives them.
func TestUnmarshalJSONMatchesProtobuf(t *testing.T) {
	for _, obj := range testutil.TypedObjects() {
		var want any
		var err error
		switch o := obj.(type) {
		case *corev1.Service:
			want, err = testutil.ViaProtobuf[Service](o)
		case *networkingv1.Ingress:
			want, err = testutil.ViaProtobuf[Ingress](o)
		default:
			t.Fatalf("unexpected %T", obj)
		}
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

// TestDecodeKeepsTheInitialEventsBookmark: the reflector ends a WatchList's
// initial events at a bookmark annotated so; the decoded object keeps it.
func TestDecodeKeepsTheInitialEventsBookmark(t *testing.T) {
	bookmark := &corev1.Service{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "12",
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
	out, err := slimService(bookmark)
	if err != nil {
		t.Fatal(err)
	}
	m := out.(*Service)
	if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" || m.GetResourceVersion() != "12" {
		t.Errorf("bookmark decoded as %+v", m)
	}
}

// TestUnmarshalRejectsTruncatedData: a cut message is an error, never a
// panic or a half-read object taken for whole.
func TestUnmarshalRejectsTruncatedData(t *testing.T) {
	for _, obj := range testutil.TypedObjects() {
		var data []byte
		var target interface{ Unmarshal([]byte) error }
		switch o := obj.(type) {
		case *corev1.Service:
			data, _ = o.Marshal()
			target = &Service{}
		case *networkingv1.Ingress:
			data, _ = o.Marshal()
			target = &Ingress{}
		}
		if len(data) < 2 {
			continue
		}
		if err := target.Unmarshal(data[:len(data)-1]); err == nil {
			t.Errorf("%T: a message cut short decoded without error", obj)
		}
	}
}

// FuzzUnmarshal: any bytes decode into a service, an ingress and an
// EndpointSlice, or fail, without a panic.
func FuzzUnmarshal(f *testing.F) {
	for _, obj := range testutil.TypedObjects() {
		data, _ := obj.(interface{ Marshal() ([]byte, error) }).Marshal()
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = (&Service{}).Unmarshal(data)
		_ = (&Ingress{}).Unmarshal(data)
		_ = (&ServiceList{}).Unmarshal(data)
		_ = (&EndpointSlice{}).Unmarshal(data)
		_ = (&EndpointSliceList{}).Unmarshal(data)
	})
}

// BenchmarkDecode compares decoding an object of test/bench into its API
// type, as the informers did before, with decoding it into what the
// informer keeps.
func BenchmarkDecode(b *testing.B) {
	svc, _ := testutil.BenchService(1).Marshal()
	ing, _ := testutil.BenchIngress(1).Marshal()
	slice, _ := benchSlice(10).Marshal()
	for _, bc := range []struct {
		name   string
		data   []byte
		decode func([]byte) error
	}{
		{"Service/API type", svc, func(d []byte) error { return new(corev1.Service).Unmarshal(d) }},
		{"Service/service", svc, func(d []byte) error { return new(Service).Unmarshal(d) }},
		{"Ingress/API type", ing, func(d []byte) error { return new(networkingv1.Ingress).Unmarshal(d) }},
		{"Ingress/ingress", ing, func(d []byte) error { return new(Ingress).Unmarshal(d) }},
		{"EndpointSlice/API type", slice, func(d []byte) error { return new(discoveryv1.EndpointSlice).Unmarshal(d) }},
		{"EndpointSlice/slim", slice, func(d []byte) error { return new(EndpointSlice).Unmarshal(d) }},
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

// benchSlice is an EndpointSlice as the endpointslice controller writes
// one: n endpoints with their conditions, node, zone and pod reference.
func benchSlice(n int) *discoveryv1.EndpointSlice {
	yes, no := true, false
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "web-x7k2p", Namespace: "shop", ResourceVersion: "1234567", GenerateName: "web-",
			Labels: map[string]string{ServiceNameLabel: "web", "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080))}},
	}
	for i := range n {
		node, zone := fmt.Sprintf("node-%d", i%3), "zone-a"
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.0.1.%d", i)},
			Conditions: discoveryv1.EndpointConditions{Ready: &yes, Serving: &yes, Terminating: &no},
			NodeName:   &node, Zone: &zone,
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: fmt.Sprintf("web-%d", i), UID: "0b5c1d8e-7c5b-4c83-9a0e-3f3e1c0e9a11"},
		})
	}
	return s
}
