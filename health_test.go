package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/miekg/dns"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// healthSlice is an EndpointSlice of Service svc with one endpoint, ready or not.
func healthSlice(namespace, name, svc string, ready bool) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{source.ServiceNameLabel: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
	}
}

// The health option end to end through informers: two Services at one name,
// their EndpointSlices flipping.
func TestHealthServices(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	g := k8sStartGateway(t, client, []string{"example.com."}, func(g *Gateway) { g.health = true })
	for name, ip := range map[string]string{"a": "192.0.2.1", "b": "192.0.2.2"} {
		svc := testutil.NamedService("apps", name, ip)
		svc.Annotations = map[string]string{"coredns.io/hostname": "www.example.com"}
		k8sCreate(t, client, svc)
	}
	both := k8sExpect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.1", "www.example.com. 60 IN A 192.0.2.2"})
	onlyA := k8sExpect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.1"})
	onlyB := k8sExpect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.2"})
	// No EndpointSlices: unknown is not down.
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, both)

	slices := client.DiscoveryV1().EndpointSlices("apps")
	set := func(name, svc string, ready bool) {
		t.Helper()
		s := healthSlice("apps", name, svc, ready)
		if _, err := slices.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			if _, err := slices.Create(ctx, s, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	set("a-1", "a", false)
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, onlyB)
	// a's own name answers fail-open: nothing else is there.
	k8sAnswers(t, g, "a.apps.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"a.apps.example.com. 60 IN A 192.0.2.1"}))
	set("a-2", "a", true) // a second slice with a ready endpoint
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, both)
	if err := slices.Delete(ctx, "a-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, onlyB)
	set("b-1", "b", false) // both unhealthy: fail open
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, both)
	if got, want := g.index.Health("example.com."), (index.ZoneHealth{Unhealthy: 4, FailOpen: 3}); got != want {
		t.Errorf("health %+v, want %+v", got, want)
	}
	set("a-1", "a", true)
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, onlyA)
	if err := slices.Delete(ctx, "b-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, both)
	if got := g.index.Health("example.com."); got != (index.ZoneHealth{}) {
		t.Errorf("health at the end %+v", got)
	}
}

// Without the option, EndpointSlices are not read at all.
func TestHealthOff(t *testing.T) {
	client := fake.NewSimpleClientset(healthSlice("apps", "a-1", "a", false), testutil.NamedService("apps", "a", "192.0.2.1"))
	g := k8sStartGateway(t, client, []string{"example.com."}, nil)
	k8sAnswers(t, g, "a.apps.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"a.apps.example.com. 60 IN A 192.0.2.1"}))
	for _, a := range client.Actions() {
		if a.GetResource().Resource == "endpointslices" {
			t.Fatalf("EndpointSlices read without the health option: %v", a)
		}
	}
}

func TestHealthOption(t *testing.T) {
	for _, c := range []struct {
		corefile string
		health   bool
		err      bool
	}{
		{"k8s_gateway example.com", false, false},
		{"k8s_gateway example.com {\n health\n}", true, false},
		{"k8s_gateway example.com {\n health on\n}", false, true},
	} {
		g, err := parse(caddy.NewTestController("dns", c.corefile))
		if (err != nil) != c.err {
			t.Errorf("%q: error %v", c.corefile, err)
			continue
		}
		if err == nil && g.health != c.health {
			t.Errorf("%q: health %v", c.corefile, g.health)
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
	g := k8sStartGateway(t, client, []string{"example.com."}, func(g *Gateway) {
		g.health = true
		g.resources = []string{"Ingress"} // EndpointSlices are read for Ingresses alone too
		if classes {
			g.ingressClasses = []string{"edge"}
		}
	})
	for name, ip := range map[string]string{"one": "192.0.2.1", "two": "192.0.2.2"} {
		ing := testutil.NamedIngress("apps", name, []string{"shop.example.com"}, ip)
		class := "edge"
		ing.Spec.IngressClassName = &class
		ing.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "svc-" + name, Port: networkingv1.ServiceBackendPort{Number: 80}}}
		k8sCreate(t, client, ing)
	}
	both := k8sExpect(t, "NOERROR", []string{"shop.example.com. 60 IN A 192.0.2.1", "shop.example.com. 60 IN A 192.0.2.2"})
	k8sAnswers(t, g, "shop.example.com.", dns.TypeA, both)
	slices := client.DiscoveryV1().EndpointSlices("apps")
	if _, err := slices.Create(ctx, healthSlice("apps", "s1", "svc-one", false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "shop.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"shop.example.com. 60 IN A 192.0.2.2"}))
	if _, err := slices.Update(ctx, healthSlice("apps", "s1", "svc-one", true), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "shop.example.com.", dns.TypeA, both)
}

func TestPriorityAndFailoverOptions(t *testing.T) {
	corefile := `k8s_gateway example.com {
    failover 30s
    cluster one {
        priority 1
    }
    cluster two {
        priority 2
        failover 1m
    }
    cluster three
}`
	g, err := parse(caddy.NewTestController("dns", corefile))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]any{"one": {int32(1), 30 * time.Second}, "two": {int32(2), time.Minute}, "three": {int32(0), 30 * time.Second}}
	for _, spec := range g.clusters {
		o := spec.resolved(g.clusterOptions)
		cfg := g.controllerConfigOf(&o, g.Zones, false)
		if got := [2]any{cfg.Priority, cfg.Failover}; got != want[spec.name] {
			t.Errorf("cluster %s: priority, failover %v, want %v", spec.name, got, want[spec.name])
		}
	}
	for _, bad := range []string{"priority", "priority -1", "priority x", "priority 1 2", "failover", "failover 10ms", "failover soon"} {
		if _, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n cluster one {\n "+bad+"\n }\n}")); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestLogLimiter(t *testing.T) {
	var l logLimiter
	now := time.Unix(1000, 0)
	allowed := 0
	for range 25 {
		if l.allow(now) {
			allowed++
		}
	}
	if allowed != logBurst || l.takeSuppressed() != 25-logBurst || l.takeSuppressed() != 0 {
		t.Errorf("allowed %d of 25 in a second", allowed)
	}
	if !l.allow(now.Add(time.Second)) {
		t.Error("not allowed in the next second")
	}
}

// An Ingress whose hosts have backends of their own: a host whose backends
// are all unready is withdrawn, the other hosts stay.
func TestHealthIngressHosts(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	g := k8sStartGateway(t, client, []string{"example.com."}, func(g *Gateway) { g.health = true })
	rule := func(host, svc string) networkingv1.IngressRule {
		return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/", Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
		}}}
	}
	ing := testutil.NamedIngress("apps", "multi", []string{"a.example.com", "b.example.com"}, "192.0.2.7")
	ing.Spec.Rules = []networkingv1.IngressRule{rule("a.example.com", "svc-a"), rule("b.example.com", "svc-b")}
	k8sCreate(t, client, ing)
	other := testutil.NamedIngress("apps", "other", []string{"a.example.com"}, "192.0.2.8")
	k8sCreate(t, client, other)
	a := k8sExpect(t, "NOERROR", []string{"a.example.com. 60 IN A 192.0.2.7", "a.example.com. 60 IN A 192.0.2.8"})
	b := k8sExpect(t, "NOERROR", []string{"b.example.com. 60 IN A 192.0.2.7"})
	k8sAnswers(t, g, "a.example.com.", dns.TypeA, a)
	slices := client.DiscoveryV1().EndpointSlices("apps")
	if _, err := slices.Create(ctx, healthSlice("apps", "sa", "svc-a", false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// a's backend down: multi's a withdrawn (other answers there), its b stays.
	k8sAnswers(t, g, "a.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"a.example.com. 60 IN A 192.0.2.8"}))
	k8sAnswers(t, g, "b.example.com.", dns.TypeA, b)
	if err := slices.Delete(ctx, "sa", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "a.example.com.", dns.TypeA, a)
	k8sAnswers(t, g, "b.example.com.", dns.TypeA, b)
	// Deleting the Ingress leaves nothing of it, its unhealthy part included.
	if _, err := slices.Create(ctx, healthSlice("apps", "sa", "svc-a", false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "a.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"a.example.com. 60 IN A 192.0.2.8"}))
	if err := client.NetworkingV1().Ingresses("apps").Delete(ctx, "multi", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "b.example.com.", dns.TypeA, k8sNX)
	k8sAnswers(t, g, "a.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"a.example.com. 60 IN A 192.0.2.8"}))
	if got := g.index.Health("example.com."); got != (index.ZoneHealth{}) {
		t.Errorf("health after the delete: %+v", got)
	}
}

// TestFleetPriorities: two merged clusters of priorities 1 and 2 with
// health; the standby answers while the primary has no healthy target.
func TestFleetPriorities(t *testing.T) {
	ctx := context.Background()
	a, b := fake.NewSimpleClientset(), fake.NewSimpleClientset()
	g := k8sStartFleet(t, []k8sFleetCluster{{name: "a", client: a}, {name: "b", client: b}}, func(g *Gateway) {
		for i, p := range []int32{1, 2} {
			g.clusters[i].opts.priority, g.clusters[i].opts.health = p, true
			g.clusters[i].set["priority"], g.clusters[i].set["health"] = true, true
		}
	})
	k8sClaimingServiceIn(t, a, "apps", "web", 100, "web.example.com", "192.0.2.1")
	k8sClaimingServiceIn(t, b, "apps", "web", 200, "web.example.com", "192.0.2.2")
	primary := k8sExpect(t, "NOERROR", []string{"web.example.com. 60 IN A 192.0.2.1"})
	standby := k8sExpect(t, "NOERROR", []string{"web.example.com. 60 IN A 192.0.2.2"})
	k8sAnswers(t, g, "web.example.com.", dns.TypeA, primary)
	if _, err := a.DiscoveryV1().EndpointSlices("apps").Create(ctx, healthSlice("apps", "web-1", "web", false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "web.example.com.", dns.TypeA, standby)
	if got := g.index.Health("example.com."); got.Standby != 2 { // web.example.com and web.apps.example.com
		t.Errorf("health %+v, want 2 standby names", got)
	}
	// The failover of a: set down, as its health watch does after a silence.
	if _, err := a.DiscoveryV1().EndpointSlices("apps").Update(ctx, healthSlice("apps", "web-1", "web", true), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "web.example.com.", dns.TypeA, primary)
	g.index.SetDown("a/", true)
	k8sAnswers(t, g, "web.example.com.", dns.TypeA, standby)
	g.index.SetDown("a/", false)
	k8sAnswers(t, g, "web.example.com.", dns.TypeA, primary)
}
