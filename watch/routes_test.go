package watch

import (
	"context"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1a2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// startRoutes starts a pipeline publishing routes of kinds for example.com.
func startRoutes(t *testing.T, api API, kinds ...string) *pipeline {
	t.Helper()
	cfg := testConfig("example.com.")
	cfg.Resources = kinds
	return startPipeline(t, cfg, api)
}

// TestControllerListenerSetHops: a change of the Gateway, or of a
// Namespace's labels, reaches the routes through the ListenerSets they
// attach to (two hops), and a change of the ListenerSet reaches them at once.
func TestControllerListenerSetHops(t *testing.T) {
	ctx := context.Background()
	core := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant", Labels: map[string]string{"shared": "yes"}}})
	gw := testutil.AllowListeners(testutil.Gateway("infra", "shared", []string{"192.0.2.1"}), gwv1.NamespacesFromAll, nil)
	ls := testutil.ListenerSet("tenant", "ls", "infra", "shared", metav1.ConditionTrue, testutil.HTTPListener("web", "*.tenant.example.com"))
	rt := testutil.NewRoute("HTTPRoute", []string{"app.tenant.example.com"}, testutil.ListenerSetRef("tenant", "ls")).InNS("tenant").Object().(*gwv1.HTTPRoute)
	api := watchtest.NewVersionedAPI(watchtest.API{Core: core}, gwfake.NewSimpleClientset(),
		map[string][]string{"gateway.networking.k8s.io/v1": {"listenersets"}})
	if err := watchtest.CreateGatewayObjects(api.Gateways, gw, ls, rt); err != nil {
		t.Fatal(err)
	}
	g := startRoutes(t, api, "HTTPRoute")
	app := "app.tenant.example.com."
	published := expect(t, "NOERROR", []string{app + " 60 IN A 192.0.2.1"})
	gone := expect(t, "NXDOMAIN", nil)
	g.answers(t, app, dns.TypeA, published)

	update := func(mutate func(*gwv1.Gateway)) {
		t.Helper()
		cur, err := api.Gateways.GatewayV1().Gateways("infra").Get(ctx, "shared", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mutate(cur)
		if _, err := api.Gateways.GatewayV1().Gateways("infra").Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Gateway → ListenerSet → route.
	update(func(gw *gwv1.Gateway) { testutil.AllowListeners(gw, gwv1.NamespacesFromNone, nil) })
	g.answers(t, app, dns.TypeA, gone)
	update(func(gw *gwv1.Gateway) {
		testutil.AllowListeners(gw, gwv1.NamespacesFromSelector, &metav1.LabelSelector{MatchLabels: map[string]string{"shared": "yes"}})
	})
	g.answers(t, app, dns.TypeA, published)

	// Namespace → ListenerSet → route.
	nsObj, _ := core.CoreV1().Namespaces().Get(ctx, "tenant", metav1.GetOptions{})
	nsObj.Labels["shared"] = "no"
	if _, err := core.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	g.answers(t, app, dns.TypeA, gone)
	nsObj.Labels["shared"] = "yes"
	if _, err := core.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	g.answers(t, app, dns.TypeA, published)

	// ListenerSet → route: not Accepted, then deleted.
	ls.Status.Conditions = []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionFalse, Reason: "NotAllowed"}}
	if _, err := api.Gateways.GatewayV1().ListenerSets("tenant").Update(ctx, ls, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	g.answers(t, app, dns.TypeA, gone)
	ls.Status.Conditions = []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"}}
	if _, err := api.Gateways.GatewayV1().ListenerSets("tenant").Update(ctx, ls, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	g.answers(t, app, dns.TypeA, published)
	if err := api.Gateways.GatewayV1().ListenerSets("tenant").Delete(ctx, "ls", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	g.answers(t, app, dns.TypeA, gone)
}

// TestControllerVersionSwitch: a route kind read at v1alpha2 is read at v1
// once discovery says the cluster serves it, without a gap; the replaced
// informer's events no longer count, and what only it had is withdrawn.
func TestControllerVersionSwitch(t *testing.T) {
	ctx := context.Background()
	gw := testutil.Gateway("default", "gw", []string{"192.0.2.1"}, testutil.Listener("tcp", gwv1.TCPProtocolType, 5432, ""))
	ref := testutil.Ref("gw")
	tcp := func(name, host string) (*gwv1a2.TCPRoute, *gwv1.TCPRoute) {
		v1 := testutil.NewRoute("TCPRoute", nil, ref).Annotated("coredns.io/hostname", host).Object().(*gwv1.TCPRoute)
		v1.Name = name
		a2 := &gwv1a2.TCPRoute{ObjectMeta: v1.ObjectMeta, Spec: gwv1a2.TCPRouteSpec{CommonRouteSpec: v1.Spec.CommonRouteSpec},
			Status: gwv1a2.TCPRouteStatus(v1.Status)}
		return a2, v1
	}
	dbOld, dbNew := tcp("db", "db.example.com")
	staleOld, _ := tcp("stale", "stale.example.com")
	api := watchtest.NewVersionedAPI(watchtest.API{Core: fake.NewClientset()}, gwfake.NewSimpleClientset(),
		map[string][]string{
			"gateway.networking.k8s.io/v1":       {"gateways"},
			"gateway.networking.k8s.io/v1alpha2": {"tcproutes"},
		})
	if err := watchtest.CreateGatewayObjects(api.Gateways, gw, dbOld, staleOld); err != nil {
		t.Fatal(err)
	}
	g := startRoutes(t, api, "TCPRoute")
	db, stale := "db.example.com.", "stale.example.com."
	g.answers(t, db, dns.TypeA, expect(t, "NOERROR", []string{db + " 60 IN A 192.0.2.1"}))
	g.answers(t, stale, dns.TypeA, expect(t, "NOERROR", []string{stale + " 60 IN A 192.0.2.1"}))

	// The upgrade: the objects at v1 (the fake does not convert), v1 served.
	if err := watchtest.CreateGatewayObjects(api.Gateways, dbNew); err != nil {
		t.Fatal(err)
	}
	api.Serve(map[string][]string{"gateway.networking.k8s.io/v1": {"gateways", "tcproutes"}})
	testutil.Eventually(t, "TCPRoute read at v1", func() string {
		if v := g.c.stores.readVersion("TCPRoute", ""); v != "gateway.networking.k8s.io/v1" {
			return "read at " + v
		}
		return ""
	})
	g.answers(t, db, dns.TypeA, expect(t, "NOERROR", []string{db + " 60 IN A 192.0.2.1"}))
	// Only the old version had it: withdrawn.
	g.answers(t, stale, dns.TypeA, expect(t, "NXDOMAIN", nil))
	// A deletion at the old version is not seen: the old informer is gone.
	if err := api.Gateways.GatewayV1alpha2().TCPRoutes("default").Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, marker := tcp("marker", "marker.example.com")
	if err := watchtest.CreateGatewayObjects(api.Gateways, marker); err != nil {
		t.Fatal(err)
	}
	g.answers(t, "marker.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"marker.example.com. 60 IN A 192.0.2.1"}))
	g.answers(t, db, dns.TypeA, expect(t, "NOERROR", []string{db + " 60 IN A 192.0.2.1"}))
	// The new informer follows changes.
	if err := api.Gateways.GatewayV1().TCPRoutes("default").Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	g.answers(t, db, dns.TypeA, expect(t, "NXDOMAIN", nil))
	if got := kindSeries(t, "example.com."); got["TCPRoute gateway.networking.k8s.io/v1"] != 1 || len(got) == 0 {
		t.Errorf("kind_enabled = %v, want TCPRoute at v1", got)
	}
}
