package watch

import (
	"context"
	"slices"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
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

// TestRouteGraphDependent: the kinds whose records depend on others, or
// others' on them, with and without ingressClasses.
func TestRouteGraphDependent(t *testing.T) {
	for _, tt := range []struct {
		kind                       *source.Kind
		plain, underIngressClasses bool
	}{
		{source.KindByName("HTTPRoute"), true, true},
		{source.KindByName("TCPRoute"), true, true},
		{source.GatewayKind, true, true},
		{source.ListenerSetKind, true, true},
		{source.NamespaceKind, true, true},
		{source.IngressClassKind, true, true},
		{source.KindByName("Ingress"), false, true},
		{source.KindByName("Service"), false, false},
		{source.KindByName("DNSEndpoint"), false, false},
		{source.EndpointSliceKind, false, false},
	} {
		if got := (&routeGraph{}).dependent(tt.kind); got != tt.plain {
			t.Errorf("%s: dependent %v, want %v", tt.kind.Name, got, tt.plain)
		}
		if got := (&routeGraph{ingressClasses: true}).dependent(tt.kind); got != tt.underIngressClasses {
			t.Errorf("%s under ingressClasses: dependent %v, want %v", tt.kind.Name, got, tt.underIngressClasses)
		}
	}
}

// TestRouteGraphRefresh: a change of a Gateway, a ListenerSet, a Namespace
// or an IngressClass publishes again exactly what depends on it, through
// the informers' indexes: routes that name a Gateway, through a ListenerSet
// attached to it as well; routes in a Namespace, and those through a
// ListenerSet in it; every Ingress for an IngressClass.
func TestRouteGraphRefresh(t *testing.T) {
	route := func(ns, name string, refs ...gwv1.ParentReference) any {
		r := testutil.NewRoute("HTTPRoute", []string{name + ".example.com"}, refs...).InNS(ns).Object().(*gwv1.HTTPRoute)
		r.Name = name
		return r
	}
	s := newStores(&Config{})
	s.register(stored(t, source.KindByName("HTTPRoute"), "", false,
		route("apps", "direct", testutil.RefNS(testutil.Ref("gw"), "infra")),
		route("apps", "through-ls", testutil.ListenerSetRef("apps", "ls")),
		route("other", "elsewhere", testutil.RefNS(testutil.Ref("gw2"), "infra"))))
	s.register(stored(t, source.ListenerSetKind, "", false, testutil.ListenerSet("apps", "ls", "infra", "gw", metav1.ConditionTrue)))
	s.register(stored(t, source.KindByName("Ingress"), "", false,
		testutil.NamedIngress("apps", "web", []string{"www.example.com"}, "192.0.2.1"),
		testutil.NamedIngress("other", "db", []string{"db.example.com"}, "192.0.2.2")))
	var published []string
	g := &routeGraph{stores: s, publish: func(w *watched, m metav1.Object, _ any) {
		published = append(published, w.Kind.Name+" "+m.GetNamespace()+"/"+m.GetName())
	}}
	meta := func(ns, name string) metav1.Object { return &metav1.ObjectMeta{Namespace: ns, Name: name} }
	for _, tt := range []struct {
		name    string
		kind    *source.Kind
		changed metav1.Object
		want    []string
	}{
		{"Gateway: its routes, and those through its ListenerSet", source.GatewayKind, meta("infra", "gw"),
			[]string{"HTTPRoute apps/direct", "HTTPRoute apps/through-ls"}},
		{"another Gateway", source.GatewayKind, meta("infra", "gw2"), []string{"HTTPRoute other/elsewhere"}},
		{"a Gateway nothing names", source.GatewayKind, meta("infra", "unused"), nil},
		{"ListenerSet: the routes that name it", source.ListenerSetKind, meta("apps", "ls"), []string{"HTTPRoute apps/through-ls"}},
		{"Namespace: its routes, and those through its ListenerSets", source.NamespaceKind, meta("", "apps"),
			[]string{"HTTPRoute apps/direct", "HTTPRoute apps/through-ls", "HTTPRoute apps/through-ls"}},
		{"another Namespace", source.NamespaceKind, meta("", "other"), []string{"HTTPRoute other/elsewhere"}},
		{"IngressClass: every Ingress", source.IngressClassKind, meta("", "nginx"), []string{"Ingress apps/web", "Ingress other/db"}},
		{"Service: nothing depends on it", source.KindByName("Service"), meta("apps", "web"), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			published = nil
			g.refreshDependents(tt.kind, tt.changed)
			slices.Sort(published)
			if !slices.Equal(published, tt.want) {
				t.Errorf("published again %q, want %q", published, tt.want)
			}
		})
	}
	published = nil
	g.refreshAll()
	if want := []string{"HTTPRoute apps/direct", "HTTPRoute apps/through-ls", "HTTPRoute other/elsewhere"}; !slices.Equal(slices.Sorted(slices.Values(published)), want) {
		t.Errorf("refreshAll published %q, want %q", published, want)
	}
}
