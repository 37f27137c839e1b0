package watch

import (
	"context"
	"testing"

	"github.com/miekg/dns"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// The health option through the informers: EndpointSlices that flip take
// their Services' and Ingresses' records out of the answers and back.

// The health option end to end through informers: two Services at one name,
// their EndpointSlices flipping.
func TestHealthServices(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	cfg := testConfig("example.com.")
	cfg.Health = true
	p := startPipeline(t, cfg, watchtest.API{Core: client})
	for name, ip := range map[string]string{"a": "192.0.2.1", "b": "192.0.2.2"} {
		svc := testutil.NamedService("apps", name, ip)
		svc.Annotations = map[string]string{"coredns.io/hostname": "www.example.com"}
		create(t, client, svc)
	}
	both := expect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.1", "www.example.com. 60 IN A 192.0.2.2"})
	onlyA := expect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.1"})
	onlyB := expect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.2"})
	// No EndpointSlices: unknown is not down.
	p.answers(t, "www.example.com.", dns.TypeA, both)

	slices := client.DiscoveryV1().EndpointSlices("apps")
	set := func(name, svc string, ready bool) {
		t.Helper()
		s := testutil.EndpointSlice("apps", name, svc, ready)
		if _, err := slices.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			if _, err := slices.Create(ctx, s, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	set("a-1", "a", false)
	p.answers(t, "www.example.com.", dns.TypeA, onlyB)
	// a's own name answers fail-open: nothing else is there.
	p.answers(t, "a.apps.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"a.apps.example.com. 60 IN A 192.0.2.1"}))
	set("a-2", "a", true) // a second slice with a ready endpoint
	p.answers(t, "www.example.com.", dns.TypeA, both)
	if err := slices.Delete(ctx, "a-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "www.example.com.", dns.TypeA, onlyB)
	set("b-1", "b", false) // both unhealthy: fail open
	p.answers(t, "www.example.com.", dns.TypeA, both)
	if got, want := p.ix.Health("example.com."), (index.ZoneHealth{Unhealthy: 4, FailOpen: 3}); got != want {
		t.Errorf("health %+v, want %+v", got, want)
	}
	set("a-1", "a", true)
	p.answers(t, "www.example.com.", dns.TypeA, onlyA)
	if err := slices.Delete(ctx, "b-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "www.example.com.", dns.TypeA, both)
	if got := p.ix.Health("example.com."); got != (index.ZoneHealth{}) {
		t.Errorf("health at the end %+v", got)
	}
}

// Without the option, EndpointSlices are not read at all.
func TestHealthOff(t *testing.T) {
	client := fake.NewSimpleClientset(testutil.EndpointSlice("apps", "a-1", "a", false), testutil.NamedService("apps", "a", "192.0.2.1"))
	p := startPipeline(t, testConfig("example.com."), watchtest.API{Core: client})
	p.answers(t, "a.apps.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"a.apps.example.com. 60 IN A 192.0.2.1"}))
	for _, a := range client.Actions() {
		if a.GetResource().Resource == "endpointslices" {
			t.Fatalf("EndpointSlices read without the health option: %v", a)
		}
	}
}

// Ingresses follow the health of their backend Services: two Ingresses at
// one host, one backend each; with ingressClasses, Ingresses are published
// under the route lock, and so republished there.
func TestHealthIngresses(t *testing.T) {
	t.Run("plain", func(t *testing.T) { testHealthIngresses(t, false) })
	t.Run("ingressClasses", func(t *testing.T) { testHealthIngresses(t, true) })
}

func testHealthIngresses(t *testing.T, classes bool) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	cfg := testConfig("example.com.")
	cfg.Health = true
	cfg.Resources = []string{"Ingress"} // EndpointSlices are read for Ingresses alone too
	if classes {
		cfg.Sources.IngressClasses = []string{"edge"}
	}
	p := startPipeline(t, cfg, watchtest.API{Core: client})
	for name, ip := range map[string]string{"one": "192.0.2.1", "two": "192.0.2.2"} {
		ing := testutil.NamedIngress("apps", name, []string{"shop.example.com"}, ip)
		class := "edge"
		ing.Spec.IngressClassName = &class
		ing.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "svc-" + name, Port: networkingv1.ServiceBackendPort{Number: 80}}}
		create(t, client, ing)
	}
	both := expect(t, "NOERROR", []string{"shop.example.com. 60 IN A 192.0.2.1", "shop.example.com. 60 IN A 192.0.2.2"})
	p.answers(t, "shop.example.com.", dns.TypeA, both)
	slices := client.DiscoveryV1().EndpointSlices("apps")
	if _, err := slices.Create(ctx, testutil.EndpointSlice("apps", "s1", "svc-one", false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "shop.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"shop.example.com. 60 IN A 192.0.2.2"}))
	if _, err := slices.Update(ctx, testutil.EndpointSlice("apps", "s1", "svc-one", true), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "shop.example.com.", dns.TypeA, both)
}

// An Ingress whose hosts have backends of their own: a host whose backends
// are all unready is withdrawn, the other hosts stay.
func TestHealthIngressHosts(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	cfg := testConfig("example.com.")
	cfg.Health = true
	p := startPipeline(t, cfg, watchtest.API{Core: client})
	rule := func(host, svc string) networkingv1.IngressRule {
		return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/", Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
		}}}
	}
	ing := testutil.NamedIngress("apps", "multi", []string{"a.example.com", "b.example.com"}, "192.0.2.7")
	ing.Spec.Rules = []networkingv1.IngressRule{rule("a.example.com", "svc-a"), rule("b.example.com", "svc-b")}
	create(t, client, ing)
	other := testutil.NamedIngress("apps", "other", []string{"a.example.com"}, "192.0.2.8")
	create(t, client, other)
	a := expect(t, "NOERROR", []string{"a.example.com. 60 IN A 192.0.2.7", "a.example.com. 60 IN A 192.0.2.8"})
	b := expect(t, "NOERROR", []string{"b.example.com. 60 IN A 192.0.2.7"})
	p.answers(t, "a.example.com.", dns.TypeA, a)
	slices := client.DiscoveryV1().EndpointSlices("apps")
	if _, err := slices.Create(ctx, testutil.EndpointSlice("apps", "sa", "svc-a", false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// a's backend down: multi's a withdrawn (other answers there), its b stays.
	p.answers(t, "a.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"a.example.com. 60 IN A 192.0.2.8"}))
	p.answers(t, "b.example.com.", dns.TypeA, b)
	if err := slices.Delete(ctx, "sa", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "a.example.com.", dns.TypeA, a)
	p.answers(t, "b.example.com.", dns.TypeA, b)
	// Deleting the Ingress leaves nothing of it, its unhealthy part included.
	if _, err := slices.Create(ctx, testutil.EndpointSlice("apps", "sa", "svc-a", false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "a.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"a.example.com. 60 IN A 192.0.2.8"}))
	if err := client.NetworkingV1().Ingresses("apps").Delete(ctx, "multi", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "b.example.com.", dns.TypeA, nx)
	p.answers(t, "a.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"a.example.com. 60 IN A 192.0.2.8"}))
	if got := p.ix.Health("example.com."); got != (index.ZoneHealth{}) {
		t.Errorf("health after the delete: %+v", got)
	}
}
