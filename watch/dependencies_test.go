package watch

import (
	"context"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// TestControllerRouteDependencies runs the Gateway API kinds through the
// controller: a route publishes through its Gateway; a Gateway change
// recomputes its routes; a Namespace change recomputes the routes a listener
// admits by its labels; deleting the Gateway withdraws them.
func TestControllerRouteDependencies(t *testing.T) {
	ctx := context.Background()
	apps := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps", Labels: map[string]string{"expose": "yes"}}}
	core := fake.NewSimpleClientset(apps)
	tracker := watchtest.NewGatewayTracker()
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"expose": "yes"}}
	gw := testutil.Gateway("infra", "gw", []string{"192.0.2.1"}, testutil.AllowFrom(testutil.HTTPListener("http", "*.example.com"), gwv1.NamespacesFromSelector, sel))
	route := testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, testutil.RefNS(testutil.Ref("gw"), "infra")).InNS("apps").Object().(*gwv1.HTTPRoute)
	gatewaysGVR := gwv1.SchemeGroupVersion.WithResource("gateways")
	if err := tracker.Create(gatewaysGVR, gw, "infra"); err != nil {
		t.Fatal(err)
	}
	if err := tracker.Create(gwv1.SchemeGroupVersion.WithResource("httproutes"), route, "apps"); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig("example.com.")
	cfg.Resources = []string{"HTTPRoute"}
	g := startPipeline(t, cfg, watchtest.API{Core: core, Gateway: tracker})
	www := func(addr string) string {
		return expect(t, "NOERROR", []string{"www.example.com. 60 IN A " + addr})
	}
	g.answers(t, "www.example.com.", dns.TypeA, www("192.0.2.1"))

	// The Gateway's new address reaches the route.
	gw = gw.DeepCopy()
	gw.Status.Addresses[0].Value = "192.0.2.2"
	if err := tracker.Update(gatewaysGVR, gw, "infra"); err != nil {
		t.Fatal(err)
	}
	g.answers(t, "www.example.com.", dns.TypeA, www("192.0.2.2"))

	// The namespace loses the label the listener selects: the route is no
	// longer admitted; it gets it back: admitted again.
	setLabel := func(v string) {
		t.Helper()
		ns := apps.DeepCopy()
		ns.Labels["expose"] = v
		if _, err := core.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setLabel("no")
	g.answers(t, "www.example.com.", dns.TypeA, nx)
	setLabel("yes")
	g.answers(t, "www.example.com.", dns.TypeA, www("192.0.2.2"))

	// Without its Gateway the route publishes nothing.
	if err := tracker.Delete(gatewaysGVR, "infra", "gw"); err != nil {
		t.Fatal(err)
	}
	g.answers(t, "www.example.com.", dns.TypeA, nx)
}

// TestRouteDependenciesWatched: watching a route kind watches every kind
// that routes depend on, without a label selector.
func TestRouteDependenciesWatched(t *testing.T) {
	cfg := testConfig("example.com.")
	cfg.Resources = []string{"TCPRoute"}
	cfg.LabelSelector = "team=a"
	c := New(cfg, watchtest.API{Core: fake.NewSimpleClientset(), Gateway: watchtest.NewGatewayTracker()}, nil)
	selectors := map[string]string{}
	for _, w := range c.watches() {
		var o metav1.ListOptions
		w.Options(&o)
		selectors[w.Kind.Name] = o.LabelSelector
	}
	if selectors["TCPRoute"] != "team=a" {
		t.Errorf("TCPRoute selector %q", selectors["TCPRoute"])
	}
	for _, k := range routeContextKinds {
		if sel, ok := selectors[k.Name]; !ok || sel != "" {
			t.Errorf("%s: watched %v, selector %q", k.Name, ok, sel)
		}
	}
}
