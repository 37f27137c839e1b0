package source

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

func lstNamespaces(ns map[string]map[string]string) func(string) (map[string]string, bool) {
	return func(name string) (map[string]string, bool) {
		l, ok := ns[name]
		return l, ok
	}
}

// TestListenersAllowed: each mode of a Gateway's spec.allowedListeners.
func TestListenersAllowed(t *testing.T) {
	ns := lstNamespaces(map[string]map[string]string{
		"infra":  {"kubernetes.io/metadata.name": "infra"},
		"tenant": {"kubernetes.io/metadata.name": "tenant", "shared-gateway": "yes"},
		"other":  {"kubernetes.io/metadata.name": "other"},
	})
	shared := &metav1.LabelSelector{MatchLabels: map[string]string{"shared-gateway": "yes"}}
	invalid := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}}}
	gw := func() *gwv1.Gateway {
		return testutil.Gateway("infra", "gw", []string{"192.0.2.1"}, testutil.HTTPListener("http", ""))
	}
	tests := []struct {
		name     string
		gw       *gwv1.Gateway
		lsNS     string
		want     bool
		mutation func(*gwv1.Gateway)
	}{
		{name: "unset: None", gw: testutil.AllowListeners(gw(), "", nil), lsNS: "infra"},
		{name: "namespaces unset: None", gw: gw(), lsNS: "infra", mutation: func(g *gwv1.Gateway) {
			g.Spec.AllowedListeners = &gwv1.AllowedListeners{}
		}},
		{name: "None, same namespace", gw: testutil.AllowListeners(gw(), gwv1.NamespacesFromNone, nil), lsNS: "infra"},
		{name: "Same, same namespace", gw: testutil.AllowListeners(gw(), gwv1.NamespacesFromSame, nil), lsNS: "infra", want: true},
		{name: "Same, other namespace", gw: testutil.AllowListeners(gw(), gwv1.NamespacesFromSame, nil), lsNS: "tenant"},
		{name: "All", gw: testutil.AllowListeners(gw(), gwv1.NamespacesFromAll, nil), lsNS: "tenant", want: true},
		{name: "All, unknown namespace", gw: testutil.AllowListeners(gw(), gwv1.NamespacesFromAll, nil), lsNS: "gone", want: true},
		{name: "Selector matches", gw: testutil.AllowListeners(gw(), gwv1.NamespacesFromSelector, shared), lsNS: "tenant", want: true},
		{name: "Selector does not match", gw: testutil.AllowListeners(gw(), gwv1.NamespacesFromSelector, shared), lsNS: "other"},
		{name: "Selector, unknown namespace", gw: testutil.AllowListeners(gw(), gwv1.NamespacesFromSelector, shared), lsNS: "gone"},
		{name: "Selector without selector", gw: testutil.AllowListeners(gw(), gwv1.NamespacesFromSelector, nil), lsNS: "tenant"},
		{name: "Selector invalid", gw: testutil.AllowListeners(gw(), gwv1.NamespacesFromSelector, invalid), lsNS: "tenant"},
		{name: "unknown mode", gw: testutil.AllowListeners(gw(), "Everywhere", nil), lsNS: "tenant"},
	}
	for _, tc := range tests {
		if tc.mutation != nil {
			tc.mutation(tc.gw)
		}
		if got := listenersAllowed(tc.gw, tc.lsNS, ns); got != tc.want {
			t.Errorf("%s: listenersAllowed = %v, want %v", tc.name, got, tc.want)
		}
		// What the Gateway informer keeps decides alike.
		slim, _ := slimGateway(tc.gw)
		if got := listenersAllowed(slim.(*gwv1.Gateway), tc.lsNS, ns); got != tc.want {
			t.Errorf("%s: slim Gateway: listenersAllowed = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestListenerSetAttached: the parent reference, the allowedListeners and the
// ListenerSet's Accepted condition must all agree.
func TestListenerSetAttached(t *testing.T) {
	ns := lstNamespaces(map[string]map[string]string{"infra": {}, "tenant": {}})
	gw := testutil.AllowListeners(testutil.Gateway("infra", "gw", nil), gwv1.NamespacesFromAll, nil)
	same := testutil.AllowListeners(testutil.Gateway("infra", "gw", nil), gwv1.NamespacesFromSame, nil)
	kind := func(ls *gwv1.ListenerSet, group, k string) *gwv1.ListenerSet {
		g, kk := gwv1.Group(group), gwv1.Kind(k)
		ls.Spec.ParentRef.Group, ls.Spec.ParentRef.Kind = &g, &kk
		return ls
	}
	tests := []struct {
		name string
		gw   *gwv1.Gateway
		ls   *gwv1.ListenerSet
		want bool
	}{
		{"attached", gw, testutil.ListenerSet("tenant", "ls", "infra", "gw", metav1.ConditionTrue), true},
		{"parent group and kind explicit", gw, kind(testutil.ListenerSet("tenant", "ls", "infra", "gw", metav1.ConditionTrue), gwv1.GroupName, "Gateway"), true},
		{"parent of another kind", gw, kind(testutil.ListenerSet("tenant", "ls", "infra", "gw", metav1.ConditionTrue), "example.com", "Gateway"), false},
		{"parent without namespace is in the ListenerSet's", gw, testutil.ListenerSet("tenant", "ls", "", "gw", metav1.ConditionTrue), false},
		{"parent without namespace, same namespace", same, testutil.ListenerSet("infra", "ls", "", "gw", metav1.ConditionTrue), true},
		{"another Gateway", gw, testutil.ListenerSet("tenant", "ls", "infra", "other", metav1.ConditionTrue), false},
		{"not accepted", gw, testutil.ListenerSet("tenant", "ls", "infra", "gw", metav1.ConditionFalse), false},
		{"no status", gw, testutil.ListenerSet("tenant", "ls", "infra", "gw", ""), false},
		{"accepted but not allowed", same, testutil.ListenerSet("tenant", "ls", "infra", "gw", metav1.ConditionTrue), false},
	}
	for _, tc := range tests {
		ls := ListenerSetKind.ListenerSet(tc.ls)
		if got := listenerSetAttached(ls, tc.gw, ns); got != tc.want {
			t.Errorf("%s: listenerSetAttached = %v, want %v", tc.name, got, tc.want)
		}
		slim, _ := slimListenerSet(tc.ls)
		if got := listenerSetAttached(ListenerSetKind.ListenerSet(slim), tc.gw, ns); got != tc.want {
			t.Errorf("%s: slim ListenerSet: listenerSetAttached = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRouteRecordsListenerSet: routes published through a ListenerSet: its
// listeners select and narrow the route as a Gateway's own do, its parent
// Gateway gives the addresses.
func TestRouteRecordsListenerSet(t *testing.T) {
	ip := []string{"192.0.2.1"}
	gw := func(from gwv1.FromNamespaces) *gwv1.Gateway {
		return testutil.AllowListeners(testutil.Gateway("infra", "shared", ip, testutil.HTTPListener("http", "*.infra.example.com")), from, nil)
	}
	all := []*gwv1.Gateway{gw(gwv1.NamespacesFromAll)}
	tenantHTTP := testutil.HTTPListener("web", "*.tenant.example.com")
	set := func(accepted metav1.ConditionStatus, ls ...gwv1.Listener) []*gwv1.ListenerSet {
		return []*gwv1.ListenerSet{testutil.ListenerSet("tenant", "ls", "infra", "shared", accepted, ls...)}
	}
	ref := testutil.ListenerSetRef("tenant", "ls")
	route := func(kind string, hosts []string, refs ...gwv1.ParentReference) testutil.Route {
		return testutil.NewRoute(kind, hosts, refs...).InNS("tenant")
	}
	a := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, n+" 60 IN A 192.0.2.1")
		}
		return out
	}
	gwtRun(t, []gwtCase{
		{
			name: "route answers through the ListenerSet", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
			want:  a("app.tenant.example.com."),
		},
		{
			name: "route hostname outside the ListenerSet listener's hostname", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: route("HTTPRoute", []string{"app.infra.example.com", "app.tenant.example.com"}, ref),
			want:  a("app.tenant.example.com."),
		},
		{
			name: "route without hostnames inherits the listener's", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: route("HTTPRoute", nil, ref),
			want:  a("*.tenant.example.com."),
		},
		{
			name: "wildcard route narrowed to the listener", gateways: all,
			listenerSets: set(metav1.ConditionTrue, testutil.HTTPListener("web", "shop.tenant.example.com")),
			route:        route("HTTPRoute", []string{"*.tenant.example.com"}, ref),
			want:         a("shop.tenant.example.com."),
		},
		{
			name: "hostname annotation narrowed by the listener", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref).Annotated("coredns.io/hostname", "alias.tenant.example.com,alias.infra.example.com"),
			want:  a("app.tenant.example.com.", "alias.tenant.example.com."),
		},
		{
			name: "Gateway allowedListeners None", gateways: []*gwv1.Gateway{gw(gwv1.NamespacesFromNone)}, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
		},
		{
			name: "Gateway allowedListeners Same, ListenerSet elsewhere", gateways: []*gwv1.Gateway{gw(gwv1.NamespacesFromSame)},
			listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route:        route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
		},
		{
			name: "Gateway allowedListeners Selector", ns: map[string]map[string]string{"tenant": {"shared": "yes"}},
			gateways: []*gwv1.Gateway{testutil.AllowListeners(testutil.Gateway("infra", "shared", ip), gwv1.NamespacesFromSelector,
				&metav1.LabelSelector{MatchLabels: map[string]string{"shared": "yes"}})},
			listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route:        route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
			want:         a("app.tenant.example.com."),
		},
		{
			name: "ListenerSet not accepted", gateways: all, listenerSets: set(metav1.ConditionFalse, tenantHTTP),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
		},
		{
			name: "route not accepted by the ListenerSet", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref).WithParents(testutil.Parent(ref, metav1.ConditionFalse)),
		},
		{
			name: "route accepted by the Gateway, not by the ListenerSet", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref).WithParents(testutil.Parent(testutil.RefNS(testutil.Ref("ls"), "tenant"), metav1.ConditionTrue)),
		},
		{
			name: "no such ListenerSet", gateways: all,
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
		},
		{
			name: "parent Gateway missing", listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
		},
		{
			name: "gatewayClasses applies through the parent Gateway", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			cfg:   func(c *Config) { c.GatewayClasses = []string{"internal"} },
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
		},
		{
			name: "sectionName selects a ListenerSet listener", gateways: all,
			listenerSets: set(metav1.ConditionTrue, testutil.HTTPListener("a", "a.tenant.example.com"), testutil.HTTPListener("b", "b.tenant.example.com")),
			route:        route("HTTPRoute", nil, testutil.RefSection(ref, "b")),
			want:         a("b.tenant.example.com."),
		},
		{
			name: "port selects a ListenerSet listener", gateways: all,
			listenerSets: set(metav1.ConditionTrue, testutil.HTTPListener("a", "a.tenant.example.com"), testutil.Listener("b", gwv1.HTTPProtocolType, 8080, "b.tenant.example.com")),
			route:        route("HTTPRoute", nil, testutil.RefPort(ref, 8080)),
			want:         a("b.tenant.example.com."),
		},
		{
			name: "the Gateway's own listeners do not count", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: route("HTTPRoute", nil, testutil.RefSection(ref, "http")),
		},
		{
			// allowedRoutes Same means the ListenerSet's namespace, not the Gateway's.
			name: "allowedRoutes Same is the ListenerSet's namespace", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
			want:  a("app.tenant.example.com."),
		},
		{
			name: "allowedRoutes Same, route in the Gateway's namespace", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: testutil.NewRoute("HTTPRoute", []string{"app.tenant.example.com"}, ref).InNS("infra"),
		},
		{
			name: "allowedRoutes kinds", gateways: all, listenerSets: set(metav1.ConditionTrue, testutil.AllowKinds(tenantHTTP, "GRPCRoute")),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
		},
		{
			name: "TLS listener: TCPRoute takes its hostname", gateways: all,
			listenerSets: set(metav1.ConditionTrue, testutil.Listener("tls", gwv1.TLSProtocolType, 443, "db.tenant.example.com")),
			route:        route("TCPRoute", nil, ref),
			want:         a("db.tenant.example.com."),
		},
		{
			name: "target annotation on the ListenerSet wins", gateways: all,
			listenerSets: func() []*gwv1.ListenerSet {
				ls := set(metav1.ConditionTrue, tenantHTTP)
				testutil.Annotate(&ls[0].ObjectMeta, "external-dns.kubernetes.io/target", "198.51.100.7")
				return ls
			}(),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
			want:  []string{"app.tenant.example.com. 60 IN A 198.51.100.7"},
		},
		{
			name: "both the Gateway and the ListenerSet as parents",
			gateways: []*gwv1.Gateway{testutil.AllowListeners(testutil.Gateway("infra", "shared", ip,
				testutil.AllowFrom(testutil.HTTPListener("http", "*.infra.example.com"), gwv1.NamespacesFromAll, nil)), gwv1.NamespacesFromAll, nil)},
			listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route:        route("HTTPRoute", []string{"app.tenant.example.com", "app.infra.example.com"}, ref, testutil.RefNS(testutil.Ref("shared"), "infra")),
			want:         a("app.tenant.example.com.", "app.infra.example.com."),
		},
		{
			// Under the delegated policy a ListenerSet adds listeners only for
			// its own namespace's domains, whatever the route's namespace.
			name: "delegated: hostnames of the ListenerSet's namespace", gateways: all,
			listenerSets: set(metav1.ConditionTrue, testutil.HTTPListener("web", "*.example.com")),
			delegated:    map[string][]string{"tenant": {"tenant.example.com."}},
			route:        route("HTTPRoute", []string{"app.tenant.example.com", "app.other.example.com"}, ref),
			want:         a("app.tenant.example.com."),
			warn:         []string{"app.other.example.com.: not published through ListenerSet tenant/ls: outside the domains delegated to namespace tenant"},
		},
		{
			name: "delegated: a route of another namespace through a tenant's ListenerSet", gateways: all,
			listenerSets: set(metav1.ConditionTrue, testutil.AllowFrom(testutil.HTTPListener("web", "*.example.com"), gwv1.NamespacesFromAll, nil)),
			delegated:    map[string][]string{"tenant": {"tenant.example.com."}, "other": {"other.example.com."}},
			ns:           map[string]map[string]string{"other": {}},
			route:        testutil.NewRoute("HTTPRoute", []string{"app.tenant.example.com", "app.other.example.com"}, ref).InNS("other"),
			want:         a("app.tenant.example.com."),
			warn:         []string{"app.other.example.com.: not published through ListenerSet tenant/ls"},
		},
		{
			name: "delegated: a namespace without domains adds no names", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			delegated: map[string][]string{"other": {"tenant.example.com."}},
			route:     route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
			warn:      []string{"app.tenant.example.com.: not published through ListenerSet tenant/ls"},
		},
		{
			name: "XListenerSet ref while ListenerSets are read", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, testutil.RefNS(testutil.RefGK(testutil.Ref("ls"), experimentalGroup, "XListenerSet"), "tenant")),
		},
		{
			name: "XListenerSet read as such", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP), experimental: true,
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, testutil.RefNS(testutil.RefGK(testutil.Ref("ls"), experimentalGroup, "XListenerSet"), "tenant")),
			want:  a("app.tenant.example.com."),
		},
		{
			name: "ListenerSet ref while XListenerSets are read", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP), experimental: true,
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
		},
	})
}

// TestRouteListenerSets: the ListenerSet index of the route informers.
func TestRouteListenerSets(t *testing.T) {
	r := testutil.NewRoute("HTTPRoute", nil,
		testutil.ListenerSetRef("infra", "shared"), testutil.RefGK(testutil.Ref("mine"), gwv1.GroupName, "ListenerSet"), testutil.Ref("gw"),
		testutil.RefGK(testutil.Ref("x"), experimentalGroup, "XListenerSet"), testutil.RefGK(testutil.Ref("other"), "example.com", "ListenerSet")).InNS("apps")
	got := routeListenerSets(gwtConvert(t, r.Object()))
	want := []string{"infra/shared", "apps/mine", "apps/x"}
	if len(got) != len(want) {
		t.Fatalf("routeListenerSets = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("routeListenerSets = %q, want %q", got, want)
		}
	}
}
