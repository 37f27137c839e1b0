package source

import (
	"reflect"
	"testing"
	"time"
	"unique"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// The kinds kept as types of our own are objects to the informer's store.
var (
	_ metav1.Object  = &Ingress{}
	_ runtime.Object = &Ingress{}
	_ metav1.Object  = &Service{}
	_ runtime.Object = &Service{}
)

// k8sKeptMeta is what an objectMeta keeps of k8sFullMeta: the annotations
// in the order of sourceAnnotations.
func k8sKeptMeta() objectMeta {
	return objectMeta{
		name: "web", namespace: unique.Make("apps"), resourceVersion: "4711",
		created: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano(),
		annotations: &[]string{
			"coredns.io/hostname", "www",
			"external-dns.alpha.kubernetes.io/hostname", "alpha",
			"external-dns.kubernetes.io/target", "lb.example.net",
			"external-dns.alpha.kubernetes.io/ttl", "60",
		},
		ignore: true,
	}
}

// TestSlimIngressFields: the transform keeps every field ingressRecords reads.
func TestSlimIngressFields(t *testing.T) {
	nginx := "nginx"
	full := &networkingv1.Ingress{
		ObjectMeta: testutil.FullMeta(),
		Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{{Host: "a.example.com"}, {}, {Host: "b.example.com"}},
			TLS: []networkingv1.IngressTLS{
				{Hosts: []string{"t1.example.com", ""}, SecretName: "tls"},
				{Hosts: []string{"a.example.com"}},
			},
		},
		Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{
			{IP: "192.0.2.1"}, {}, {Hostname: "lb.example.net", Ports: []networkingv1.IngressPortStatus{{Port: 443}}}, {IP: "192.0.2.2", Hostname: "lb2.example.net"},
		}}},
	}
	want := &Ingress{
		objectMeta: k8sKeptMeta(),
		class:      "legacy", hasClass: true,
		hosts: []string{"a.example.com", "b.example.com", "t1.example.com", "a.example.com"},
		tls:   2,
		lb:    []lbAddress{{ip: "192.0.2.1"}, {hostname: "lb.example.net"}, {"192.0.2.2", "lb2.example.net"}},
	}
	if got := k8sSlimIngress(full); !reflect.DeepEqual(got, want) {
		t.Errorf("kept\n%+v, want\n%+v", got, want)
	}

	// spec.ingressClassName wins over the annotation; without either, no class.
	full.Spec.IngressClassName = &nginx
	if got := k8sSlimIngress(full); got.class != "nginx" || !got.hasClass {
		t.Errorf("with spec.ingressClassName: class %q, %v", got.class, got.hasClass)
	}
	full.Spec.IngressClassName = nil
	delete(full.Annotations, legacyIngressClassAnnotation)
	if got := k8sSlimIngress(full); got.class != "" || got.hasClass {
		t.Errorf("without a class: class %q, %v", got.class, got.hasClass)
	}
	if got := k8sSlimIngress(&networkingv1.Ingress{}); got.hosts != nil || got.lb != nil || got.annotations != nil {
		t.Errorf("empty Ingress: %+v", got)
	}
}

// TestSlimServiceFields: the transform keeps every field serviceRecords,
// serviceSRV and nameserverRecords read.
func TestSlimServiceFields(t *testing.T) {
	full := &corev1.Service{
		ObjectMeta: testutil.FullMeta(),
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeLoadBalancer,
			ExternalName: "ignored.example.net", // but for an ExternalName Service
			ExternalIPs:  []string{"198.51.100.1", "198.51.100.2"},
			ClusterIP:    "10.96.0.1",
			Ports: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
				{Protocol: corev1.ProtocolUDP, Port: 53},
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53},
				{Name: "odd", Protocol: "tcp", Port: 70000},
			},
		},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
			{IP: "192.0.2.1"}, {}, {Hostname: "lb.example.net"},
		}}},
	}
	want := &Service{
		objectMeta:  k8sKeptMeta(),
		typ:         loadBalancerService,
		externalIPs: []string{"198.51.100.1", "198.51.100.2"},
		ports:       []servicePort{{"http", "TCP", 80}, {"dns", "UDP", 53}, {"odd", "tcp", 70000}},
		lb:          []lbAddress{{ip: "192.0.2.1"}, {hostname: "lb.example.net"}},
	}
	if got := k8sSlimService(full); !reflect.DeepEqual(got, want) {
		t.Errorf("kept\n%+v, want\n%+v", got, want)
	}
	// The external name of an ExternalName Service, the ports of a
	// LoadBalancer Service only; the addresses of any.
	for typ, want := range map[corev1.ServiceType]serviceType{
		corev1.ServiceTypeExternalName: externalNameService, corev1.ServiceTypeClusterIP: otherService,
		corev1.ServiceTypeNodePort: otherService, "": otherService, "loadbalancer": otherService,
	} {
		full.Spec.Type = typ
		got := k8sSlimService(full)
		if got.typ != want || got.ports != nil || len(got.externalIPs) != 2 || len(got.lb) != 2 {
			t.Errorf("type %q: kept %+v", typ, got)
		}
		if wantName := map[bool]string{true: "ignored.example.net"}[want == externalNameService]; got.externalName != wantName {
			t.Errorf("type %q: external name %q kept, want %q", typ, got.externalName, wantName)
		}
	}
}

// TestObjectMeta: an ingress or a service serves the informer's store and
// the controller as an API object does.
func TestObjectMeta(t *testing.T) {
	full := &corev1.Service{ObjectMeta: testutil.FullMeta()}
	for _, obj := range []runtime.Object{k8sSlimService(full), k8sSlimIngress(&networkingv1.Ingress{ObjectMeta: testutil.FullMeta()})} {
		m, err := meta.Accessor(obj)
		if err != nil {
			t.Fatalf("%T: %v", obj, err)
		}
		if key, err := cache.MetaNamespaceKeyFunc(obj); err != nil || key != "apps/web" {
			t.Errorf("%T: key %q, %v", obj, key, err)
		}
		if ns, err := cache.MetaNamespaceIndexFunc(obj); err != nil || !reflect.DeepEqual(ns, []string{"apps"}) {
			t.Errorf("%T: namespace index %q, %v", obj, ns, err)
		}
		if created := m.GetCreationTimestamp(); m.GetResourceVersion() != "4711" || !created.Equal(&full.CreationTimestamp) {
			t.Errorf("%T: resource version %q, created %v", obj, m.GetResourceVersion(), m.GetCreationTimestamp())
		}
		if m.GetNamespace() != "apps" || m.GetName() != "web" {
			t.Errorf("%T: named %s/%s", obj, m.GetNamespace(), m.GetName())
		}
		if got := m.GetAnnotations(); len(got) != 4 || got["coredns.io/hostname"] != "www" {
			t.Errorf("%T: annotations %v", obj, got)
		}
		if got := m.GetLabels(); !reflect.DeepEqual(got, map[string]string{IgnoreLabel: "true"}) {
			t.Errorf("%T: labels %v", obj, got)
		}

		// A copy is equal, and independent.
		cp := obj.DeepCopyObject()
		if !reflect.DeepEqual(cp, obj) {
			t.Errorf("%T: copy differs: %+v", obj, cp)
		}
		cm, _ := meta.Accessor(cp)
		cm.SetName("other")
		cm.SetNamespace("elsewhere")
		cm.SetResourceVersion("1")
		cm.SetCreationTimestamp(metav1.Time{})
		cm.SetLabels(nil)
		cm.SetAnnotations(map[string]string{"coredns.io/hostname": "changed", "other": "x"})
		if key, _ := cache.MetaNamespaceKeyFunc(cp); key != "elsewhere/other" || cm.GetResourceVersion() != "1" ||
			!cm.GetCreationTimestamp().Time.IsZero() || cm.GetLabels() != nil || !reflect.DeepEqual(cm.GetAnnotations(), map[string]string{"coredns.io/hostname": "changed"}) {
			t.Errorf("%T: setters: key %q, %+v", obj, key, cp)
		}
		if m.GetName() != "web" || m.GetAnnotations()["coredns.io/hostname"] != "www" {
			t.Errorf("%T: changing the copy changed the original", obj)
		}
	}

	// No creation time stays none: claims order such objects first.
	var m objectMeta
	if created := m.GetCreationTimestamp(); !created.IsZero() || m.GetNamespace() != "" {
		t.Errorf("zero objectMeta: created %v, namespace %q", created, m.GetNamespace())
	}
	none := newObjectMeta(&metav1.ObjectMeta{})
	if got := none.GetCreationTimestamp(); got.UnixNano() != (metav1.Time{}).UnixNano() {
		t.Errorf("no creation time kept as %v", got)
	}
}

// TestWithKey: the transform of a shared informer gives each object its
// index key once, which every view then uses; renaming an object drops it.
func TestWithKey(t *testing.T) {
	calls := 0
	inner := func(obj any) (any, error) { calls++; return obj, nil }
	for _, c := range []struct {
		kind      string
		transform func(any) (any, error)
	}{{"Service", nil}, {"Service", inner}} {
		obj := k8sSlimService(&corev1.Service{ObjectMeta: testutil.FullMeta()})
		if got := KeyOf(obj); got != "" {
			t.Errorf("before the transform: key %q", got)
		}
		out, err := WithKey(c.kind, c.transform)(obj)
		if err != nil {
			t.Fatal(err)
		}
		if got := KeyOf(out); got != "Service/apps/web" {
			t.Errorf("key %q, want Service/apps/web", got)
		}
		if a, b := KeyOf(out), KeyOf(out); unsafe.StringData(a) != unsafe.StringData(b) {
			t.Error("the key is made anew on each call")
		}
		out.(*Service).SetName("other")
		if got := KeyOf(out); got != "" {
			t.Errorf("after a rename: key %q", got)
		}
	}
	if calls != 1 {
		t.Errorf("inner transform called %d times, want 1", calls)
	}
	if got := KeyOf(&corev1.Service{}); got != "" {
		t.Errorf("an API type has key %q", got)
	}
}
