package testutil

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ViaProtobuf encodes in in protobuf and decodes that into a new T, as the
// informers decode what the API server sends.
func ViaProtobuf[T any, PT interface {
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

// ViaProtobufItems does viaProtobuf for each item of a list.
func ViaProtobufItems[T any, PT interface {
	*T
	Unmarshal([]byte) error
}, I any, PI interface {
	*I
	Marshal() ([]byte, error)
}](items []I) ([]T, error) {
	var out []T
	for i := range items {
		o, err := ViaProtobuf[T, PT](PI(&items[i]))
		if err != nil {
			return nil, err
		}
		out = append(out, *o)
	}
	return out, nil
}

// TypedObjects are Services and Ingresses with every field the decoders read,
// and fields they skip.
func TypedObjects() []runtime.Object {
	nginx := "nginx"
	svc := &corev1.Service{
		ObjectMeta: FullMeta(),
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
		ObjectMeta: FullMeta(),
		Spec: networkingv1.IngressSpec{
			IngressClassName: &nginx,
			Rules:            []networkingv1.IngressRule{{Host: "a.example.com"}, {}},
			TLS:              []networkingv1.IngressTLS{{Hosts: []string{"t.example.com"}, SecretName: "tls"}},
		},
		Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.2"}}}},
	}
	legacy := &networkingv1.Ingress{ObjectMeta: FullMeta()}
	return []runtime.Object{svc, external, &corev1.Service{}, ing, legacy, &networkingv1.Ingress{}}
}

// FullMeta is metadata with every field the sources and the controller
// read, and more.
func FullMeta() metav1.ObjectMeta {
	m := metav1.ObjectMeta{
		Name: "web", Namespace: "apps",
		CreationTimestamp: metav1.NewTime(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)),
		Labels:            map[string]string{"k8s-gateway.dns/ignore": "True"},
		Annotations: map[string]string{
			"external-dns.alpha.kubernetes.io/ttl":      "60",
			"external-dns.kubernetes.io/target":         "lb.example.net",
			"coredns.io/hostname":                       "www",
			"kubernetes.io/ingress.class":               "legacy",
			"external-dns.alpha.kubernetes.io/hostname": "alpha",
		},
	}
	NoisyMeta(&m)
	return m
}

// NoisyMeta adds to m what the sources never read: managed fields, other
// labels and annotations, owner references, finalizers.
func NoisyMeta(m *metav1.ObjectMeta) {
	m.UID = "0b1c2d3e"
	m.ResourceVersion = "4711"
	m.Generation = 3
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels["app.kubernetes.io/name"] = "web"
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = strings.Repeat(`{"big":"json"}`, 100)
	m.Annotations["external-dns.alpha.kubernetes.io/cloudflare-proxied"] = "true"
	m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}}}
	m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "1"}}
	m.Finalizers = []string{"example.com/finalizer"}
}
