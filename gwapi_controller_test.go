package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/watch"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"

	"github.com/seed-e581d630/k8s_gateway/source"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1a2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
)

// gwFakeAPI adds the Gateway API kinds of gateway-api's fake clientset to
// watchtest.API, and discovery answers that the test changes: which group
// versions serve which resources.
type gwFakeAPI struct {
	watchtest.API
	gw     gwclient.Interface
	mu     sync.Mutex
	served map[string][]string
}

func (f *gwFakeAPI) serve(served map[string][]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.served = served
}

func (f *gwFakeAPI) ServedResources(_ context.Context, groupVersion string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.served[groupVersion], nil
}

func (f *gwFakeAPI) Reads(k *source.Kind) bool {
	return f.API.Reads(k) || slices.Contains([]string{"Gateway", "ListenerSet", "HTTPRoute", "TCPRoute"}, k.Name)
}

func (f *gwFakeAPI) ListWatch(k *source.Kind, ns string) (watch.ListFunc, watch.WatchFunc) {
	switch k.Name + " " + k.GroupVersion {
	case "Gateway gateway.networking.k8s.io/v1":
		return watchtest.TypedListWatch[*gwv1.GatewayList](f.gw.GatewayV1().Gateways(ns))
	case "ListenerSet gateway.networking.k8s.io/v1":
		return watchtest.TypedListWatch[*gwv1.ListenerSetList](f.gw.GatewayV1().ListenerSets(ns))
	case "HTTPRoute gateway.networking.k8s.io/v1":
		return watchtest.TypedListWatch[*gwv1.HTTPRouteList](f.gw.GatewayV1().HTTPRoutes(ns))
	case "TCPRoute gateway.networking.k8s.io/v1":
		return watchtest.TypedListWatch[*gwv1.TCPRouteList](f.gw.GatewayV1().TCPRoutes(ns))
	case "TCPRoute gateway.networking.k8s.io/v1alpha2":
		return watchtest.TypedListWatch[*gwv1a2.TCPRouteList](f.gw.GatewayV1alpha2().TCPRoutes(ns))
	}
	return f.API.ListWatch(k, ns)
}

// gwcCreate creates objects through the typed clients: the fake clientset's
// constructor files some under v1beta1, where v1's types are aliased. (The
// simple clientset, because the field-managed one knows no v1 Gateways.)
func gwcCreate(t *testing.T, c gwclient.Interface, objs ...any) {
	t.Helper()
	ctx, opts := context.Background(), metav1.CreateOptions{}
	for _, obj := range objs {
		var err error
		switch o := obj.(type) {
		case *gwv1.Gateway:
			_, err = c.GatewayV1().Gateways(o.Namespace).Create(ctx, o, opts)
		case *gwv1.ListenerSet:
			_, err = c.GatewayV1().ListenerSets(o.Namespace).Create(ctx, o, opts)
		case *gwv1.HTTPRoute:
			_, err = c.GatewayV1().HTTPRoutes(o.Namespace).Create(ctx, o, opts)
		case *gwv1.TCPRoute:
			_, err = c.GatewayV1().TCPRoutes(o.Namespace).Create(ctx, o, opts)
		case *gwv1a2.TCPRoute:
			_, err = c.GatewayV1alpha2().TCPRoutes(o.Namespace).Create(ctx, o, opts)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// gwcStart starts a controller publishing routes of kinds for example.com.
func gwcStart(t *testing.T, api *gwFakeAPI, kinds ...string) *Gateway {
	t.Helper()
	return k8sStartGatewayAPI(t, api, []string{"example.com."}, func(g *Gateway) { g.resources = kinds })
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
	api := &gwFakeAPI{API: watchtest.API{Core: core}, gw: gwfake.NewSimpleClientset(),
		served: map[string][]string{"gateway.networking.k8s.io/v1": {"listenersets"}}}
	gwcCreate(t, api.gw, gw, ls, rt)
	g := gwcStart(t, api, "HTTPRoute")
	app := "app.tenant.example.com."
	published := k8sExpect(t, "NOERROR", []string{app + " 60 IN A 192.0.2.1"})
	gone := k8sExpect(t, "NXDOMAIN", nil)
	k8sAnswers(t, g, app, dns.TypeA, published)

	update := func(mutate func(*gwv1.Gateway)) {
		t.Helper()
		cur, err := api.gw.GatewayV1().Gateways("infra").Get(ctx, "shared", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mutate(cur)
		if _, err := api.gw.GatewayV1().Gateways("infra").Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Gateway → ListenerSet → route.
	update(func(gw *gwv1.Gateway) { testutil.AllowListeners(gw, gwv1.NamespacesFromNone, nil) })
	k8sAnswers(t, g, app, dns.TypeA, gone)
	update(func(gw *gwv1.Gateway) {
		testutil.AllowListeners(gw, gwv1.NamespacesFromSelector, &metav1.LabelSelector{MatchLabels: map[string]string{"shared": "yes"}})
	})
	k8sAnswers(t, g, app, dns.TypeA, published)

	// Namespace → ListenerSet → route.
	nsObj, _ := core.CoreV1().Namespaces().Get(ctx, "tenant", metav1.GetOptions{})
	nsObj.Labels["shared"] = "no"
	if _, err := core.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, app, dns.TypeA, gone)
	nsObj.Labels["shared"] = "yes"
	if _, err := core.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, app, dns.TypeA, published)

	// ListenerSet → route: not Accepted, then deleted.
	ls.Status.Conditions = []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionFalse, Reason: "NotAllowed"}}
	if _, err := api.gw.GatewayV1().ListenerSets("tenant").Update(ctx, ls, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, app, dns.TypeA, gone)
	ls.Status.Conditions = []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"}}
	if _, err := api.gw.GatewayV1().ListenerSets("tenant").Update(ctx, ls, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, app, dns.TypeA, published)
	if err := api.gw.GatewayV1().ListenerSets("tenant").Delete(ctx, "ls", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, app, dns.TypeA, gone)
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
	api := &gwFakeAPI{API: watchtest.API{Core: fake.NewClientset()}, gw: gwfake.NewSimpleClientset(),
		served: map[string][]string{
			"gateway.networking.k8s.io/v1":       {"gateways"},
			"gateway.networking.k8s.io/v1alpha2": {"tcproutes"},
		}}
	gwcCreate(t, api.gw, gw, dbOld, staleOld)
	g := gwcStart(t, api, "TCPRoute")
	db, stale := "db.example.com.", "stale.example.com."
	k8sAnswers(t, g, db, dns.TypeA, k8sExpect(t, "NOERROR", []string{db + " 60 IN A 192.0.2.1"}))
	k8sAnswers(t, g, stale, dns.TypeA, k8sExpect(t, "NOERROR", []string{stale + " 60 IN A 192.0.2.1"}))

	// The upgrade: the objects at v1 (the fake does not convert), v1 served.
	gwcCreate(t, api.gw, dbNew)
	api.serve(map[string][]string{"gateway.networking.k8s.io/v1": {"gateways", "tcproutes"}})
	testutil.Eventually(t, "TCPRoute read at v1", func() string {
		k8sCtrl(g).Mu.Lock()
		defer k8sCtrl(g).Mu.Unlock()
		if v := k8sCtrl(g).Informers[watch.InformerKey{Kind: "TCPRoute"}].Version.GroupVersion; v != "gateway.networking.k8s.io/v1" {
			return "read at " + v
		}
		return ""
	})
	k8sAnswers(t, g, db, dns.TypeA, k8sExpect(t, "NOERROR", []string{db + " 60 IN A 192.0.2.1"}))
	// Only the old version had it: withdrawn.
	k8sAnswers(t, g, stale, dns.TypeA, k8sExpect(t, "NXDOMAIN", nil))
	// A deletion at the old version is not seen: the old informer is gone.
	if err := api.gw.GatewayV1alpha2().TCPRoutes("default").Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, marker := tcp("marker", "marker.example.com")
	gwcCreate(t, api.gw, marker)
	k8sAnswers(t, g, "marker.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"marker.example.com. 60 IN A 192.0.2.1"}))
	k8sAnswers(t, g, db, dns.TypeA, k8sExpect(t, "NOERROR", []string{db + " 60 IN A 192.0.2.1"}))
	// The new informer follows changes.
	if err := api.gw.GatewayV1().TCPRoutes("default").Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, db, dns.TypeA, k8sExpect(t, "NXDOMAIN", nil))
	if got := kindSeries(t, "example.com."); got["TCPRoute gateway.networking.k8s.io/v1"] != 1 || len(got) == 0 {
		t.Errorf("kind_enabled = %v, want TCPRoute at v1", got)
	}
}

// TestControllerListenerSetRefusalReported: a route published through a
// ListenerSet whose namespace is not delegated the name is refused before
// the index; the refusal is counted in rejected_total and told to the
// route's namespace in a DNSNameRejected Event, as the index's own
// rejections are.
func TestControllerListenerSetRefusalReported(t *testing.T) {
	ctx := context.Background()
	const zone, name = "example.com.", "shop.example.com."
	core := fake.NewClientset(k8sTenantNamespace("team-a", "shop.example.com"), k8sTenantNamespace("team-b", ""), k8sTenantNamespace("infra", ""))
	gw := testutil.AllowListeners(testutil.Gateway("infra", "shared", []string{"192.0.2.1"}), gwv1.NamespacesFromAll, nil)
	ls := testutil.ListenerSet("team-b", "ls", "infra", "shared", metav1.ConditionTrue, testutil.HTTPListener("web", "shop.example.com"))
	rt := testutil.NewRoute("HTTPRoute", []string{"shop.example.com"}, testutil.ListenerSetRef("team-b", "ls")).InNS("team-b").Object().(*gwv1.HTTPRoute)
	api := &gwFakeAPI{API: watchtest.API{Core: core}, gw: gwfake.NewSimpleClientset(),
		served: map[string][]string{"gateway.networking.k8s.io/v1": {"listenersets"}}}
	gwcCreate(t, api.gw, gw, ls, rt)
	rejected := func() float64 {
		var d dto.Metric
		if err := rejectedTotal.WithLabelValues(zone, index.ReasonUndelegated).Write(&d); err != nil {
			t.Fatal(err)
		}
		return d.GetCounter().GetValue()
	}
	before := rejected()
	g := k8sStartGatewayAPI(t, api, []string{zone}, func(g *Gateway) {
		g.resources = []string{"HTTPRoute"}
		g.ownership = index.Delegated
		g.emitEvents = true
	})
	k8sAnswers(t, g, name, dns.TypeA, k8sNX)
	testutil.Eventually(t, "the route's Event", func() string {
		list, err := core.CoreV1().Events("team-b").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		for _, ev := range list.Items {
			if ev.Reason == watch.EventNameRejected && ev.InvolvedObject.Kind == "HTTPRoute" && ev.InvolvedObject.Name == rt.Name && strings.Contains(ev.Message, "shop.example.com") {
				return ""
			}
		}
		return fmt.Sprintf("no %s Event on HTTPRoute team-b/%s among %d", watch.EventNameRejected, rt.Name, len(list.Items))
	})
	if got := rejected() - before; got != 1 {
		t.Errorf("rejected_total{reason=%q} counted %v, want 1", index.ReasonUndelegated, got)
	}
}
