package watch

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	clientscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestDecodeWithAPICodecs decodes what client-go's own scheme encodes, in
// protobuf and in JSON, as the REST clients of the informers do: objects,
// lists and watch events.
func TestDecodeWithAPICodecs(t *testing.T) {
	decoder := ApiCodecs.UniversalDeserializer()
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
			want := asDecoded(t, obj)
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
