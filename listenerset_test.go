package gateway

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// lstAllow sets a Gateway's allowedListeners; from "" leaves the field unset.
func lstAllow(gw *gwv1.Gateway, from gwv1.FromNamespaces, selector *metav1.LabelSelector) *gwv1.Gateway {
	if from == "" {
		gw.Spec.AllowedListeners = nil
		return gw
	}
	gw.Spec.AllowedListeners = &gwv1.AllowedListeners{Namespaces: &gwv1.ListenerNamespaces{From: &from, Selector: selector}}
	return gw
}

// lstSet returns a ListenerSet in ns whose parent is the Gateway gwNS/gwName
// (gwNS "" leaves the parent's namespace unset), with its status Accepted as
// given ("" for no condition). Fields the plugin does not read are filled in.
func lstSet(ns, name, gwNS, gwName string, accepted metav1.ConditionStatus, listeners ...gwv1.Listener) *gwv1.ListenerSet {
	ls := &gwv1.ListenerSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Generation: 2, Labels: map[string]string{"team": "a"}},
		Spec:       gwv1.ListenerSetSpec{ParentRef: gwv1.ParentGatewayReference{Name: gwv1.ObjectName(gwName)}},
	}
	if gwNS != "" {
		n := gwv1.Namespace(gwNS)
		ls.Spec.ParentRef.Namespace = &n
	}
	for _, l := range listeners {
		ls.Spec.Listeners = append(ls.Spec.Listeners, gwv1.ListenerEntry{
			Name: l.Name, Hostname: l.Hostname, Port: l.Port, Protocol: l.Protocol, TLS: l.TLS, AllowedRoutes: l.AllowedRoutes,
		})
		ls.Status.Listeners = append(ls.Status.Listeners, gwv1.ListenerEntryStatus{Name: l.Name, AttachedRoutes: 1})
	}
	ls.Status.Conditions = []metav1.Condition{{Type: "Programmed", Status: metav1.ConditionTrue, Reason: "Programmed"}}
	if accepted != "" {
		ls.Status.Conditions = append(ls.Status.Conditions, metav1.Condition{Type: "Accepted", Status: accepted, Reason: "Accepted"})
	}
	return ls
}

// lstRef is a parentRef to the ListenerSet ns/name.
func lstRef(ns, name string) gwv1.ParentReference {
	return gwtRefNS(gwtRefGK(gwtRef(name), gwv1.GroupName, "ListenerSet"), ns)
}

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
	gw := func() *gwv1.Gateway { return gwtGateway("infra", "gw", []string{"192.0.2.1"}, gwtHTTP("http", "")) }
	tests := []struct {
		name     string
		gw       *gwv1.Gateway
		lsNS     string
		want     bool
		mutation func(*gwv1.Gateway)
	}{
		{name: "unset: None", gw: lstAllow(gw(), "", nil), lsNS: "infra"},
		{name: "namespaces unset: None", gw: gw(), lsNS: "infra", mutation: func(g *gwv1.Gateway) {
			g.Spec.AllowedListeners = &gwv1.AllowedListeners{}
		}},
		{name: "None, same namespace", gw: lstAllow(gw(), gwv1.NamespacesFromNone, nil), lsNS: "infra"},
		{name: "Same, same namespace", gw: lstAllow(gw(), gwv1.NamespacesFromSame, nil), lsNS: "infra", want: true},
		{name: "Same, other namespace", gw: lstAllow(gw(), gwv1.NamespacesFromSame, nil), lsNS: "tenant"},
		{name: "All", gw: lstAllow(gw(), gwv1.NamespacesFromAll, nil), lsNS: "tenant", want: true},
		{name: "All, unknown namespace", gw: lstAllow(gw(), gwv1.NamespacesFromAll, nil), lsNS: "gone", want: true},
		{name: "Selector matches", gw: lstAllow(gw(), gwv1.NamespacesFromSelector, shared), lsNS: "tenant", want: true},
		{name: "Selector does not match", gw: lstAllow(gw(), gwv1.NamespacesFromSelector, shared), lsNS: "other"},
		{name: "Selector, unknown namespace", gw: lstAllow(gw(), gwv1.NamespacesFromSelector, shared), lsNS: "gone"},
		{name: "Selector without selector", gw: lstAllow(gw(), gwv1.NamespacesFromSelector, nil), lsNS: "tenant"},
		{name: "Selector invalid", gw: lstAllow(gw(), gwv1.NamespacesFromSelector, invalid), lsNS: "tenant"},
		{name: "unknown mode", gw: lstAllow(gw(), "Everywhere", nil), lsNS: "tenant"},
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
	gw := lstAllow(gwtGateway("infra", "gw", nil), gwv1.NamespacesFromAll, nil)
	same := lstAllow(gwtGateway("infra", "gw", nil), gwv1.NamespacesFromSame, nil)
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
		{"attached", gw, lstSet("tenant", "ls", "infra", "gw", metav1.ConditionTrue), true},
		{"parent group and kind explicit", gw, kind(lstSet("tenant", "ls", "infra", "gw", metav1.ConditionTrue), gwv1.GroupName, "Gateway"), true},
		{"parent of another kind", gw, kind(lstSet("tenant", "ls", "infra", "gw", metav1.ConditionTrue), "example.com", "Gateway"), false},
		{"parent without namespace is in the ListenerSet's", gw, lstSet("tenant", "ls", "", "gw", metav1.ConditionTrue), false},
		{"parent without namespace, same namespace", same, lstSet("infra", "ls", "", "gw", metav1.ConditionTrue), true},
		{"another Gateway", gw, lstSet("tenant", "ls", "infra", "other", metav1.ConditionTrue), false},
		{"not accepted", gw, lstSet("tenant", "ls", "infra", "gw", metav1.ConditionFalse), false},
		{"no status", gw, lstSet("tenant", "ls", "infra", "gw", ""), false},
		{"accepted but not allowed", same, lstSet("tenant", "ls", "infra", "gw", metav1.ConditionTrue), false},
	}
	for _, tc := range tests {
		ls := listenerSetKind.listenerSet(tc.ls)
		if got := listenerSetAttached(ls, tc.gw, ns); got != tc.want {
			t.Errorf("%s: listenerSetAttached = %v, want %v", tc.name, got, tc.want)
		}
		slim, _ := slimListenerSet(tc.ls)
		if got := listenerSetAttached(listenerSetKind.listenerSet(slim), tc.gw, ns); got != tc.want {
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
		return lstAllow(gwtGateway("infra", "shared", ip, gwtHTTP("http", "*.infra.example.com")), from, nil)
	}
	all := []*gwv1.Gateway{gw(gwv1.NamespacesFromAll)}
	tenantHTTP := gwtHTTP("web", "*.tenant.example.com")
	set := func(accepted metav1.ConditionStatus, ls ...gwv1.Listener) []*gwv1.ListenerSet {
		return []*gwv1.ListenerSet{lstSet("tenant", "ls", "infra", "shared", accepted, ls...)}
	}
	ref := lstRef("tenant", "ls")
	route := func(kind string, hosts []string, refs ...gwv1.ParentReference) gwtR {
		return gwtRoute(kind, hosts, refs...).inNS("tenant")
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
			listenerSets: set(metav1.ConditionTrue, gwtHTTP("web", "shop.tenant.example.com")),
			route:        route("HTTPRoute", []string{"*.tenant.example.com"}, ref),
			want:         a("shop.tenant.example.com."),
		},
		{
			name: "hostname annotation narrowed by the listener", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref).annotated("coredns.io/hostname", "alias.tenant.example.com,alias.infra.example.com"),
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
			gateways: []*gwv1.Gateway{lstAllow(gwtGateway("infra", "shared", ip), gwv1.NamespacesFromSelector,
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
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref).withParents(gwtParent(ref, metav1.ConditionFalse)),
		},
		{
			name: "route accepted by the Gateway, not by the ListenerSet", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref).withParents(gwtParent(gwtRefNS(gwtRef("ls"), "tenant"), metav1.ConditionTrue)),
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
			cfg:   func(c *sourceConfig) { c.gatewayClasses = []string{"internal"} },
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
		},
		{
			name: "sectionName selects a ListenerSet listener", gateways: all,
			listenerSets: set(metav1.ConditionTrue, gwtHTTP("a", "a.tenant.example.com"), gwtHTTP("b", "b.tenant.example.com")),
			route:        route("HTTPRoute", nil, gwtRefSection(ref, "b")),
			want:         a("b.tenant.example.com."),
		},
		{
			name: "port selects a ListenerSet listener", gateways: all,
			listenerSets: set(metav1.ConditionTrue, gwtHTTP("a", "a.tenant.example.com"), gwtListener("b", gwv1.HTTPProtocolType, 8080, "b.tenant.example.com")),
			route:        route("HTTPRoute", nil, gwtRefPort(ref, 8080)),
			want:         a("b.tenant.example.com."),
		},
		{
			name: "the Gateway's own listeners do not count", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: route("HTTPRoute", nil, gwtRefSection(ref, "http")),
		},
		{
			// allowedRoutes Same means the ListenerSet's namespace, not the Gateway's.
			name: "allowedRoutes Same is the ListenerSet's namespace", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
			want:  a("app.tenant.example.com."),
		},
		{
			name: "allowedRoutes Same, route in the Gateway's namespace", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route: gwtRoute("HTTPRoute", []string{"app.tenant.example.com"}, ref).inNS("infra"),
		},
		{
			name: "allowedRoutes kinds", gateways: all, listenerSets: set(metav1.ConditionTrue, gwtKinds(tenantHTTP, "GRPCRoute")),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
		},
		{
			name: "TLS listener: TCPRoute takes its hostname", gateways: all,
			listenerSets: set(metav1.ConditionTrue, gwtListener("tls", gwv1.TLSProtocolType, 443, "db.tenant.example.com")),
			route:        route("TCPRoute", nil, ref),
			want:         a("db.tenant.example.com."),
		},
		{
			name: "target annotation on the ListenerSet wins", gateways: all,
			listenerSets: func() []*gwv1.ListenerSet {
				ls := set(metav1.ConditionTrue, tenantHTTP)
				gwtAnnotate(&ls[0].ObjectMeta, "external-dns.kubernetes.io/target", "198.51.100.7")
				return ls
			}(),
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, ref),
			want:  []string{"app.tenant.example.com. 60 IN A 198.51.100.7"},
		},
		{
			name: "both the Gateway and the ListenerSet as parents",
			gateways: []*gwv1.Gateway{lstAllow(gwtGateway("infra", "shared", ip,
				gwtFrom(gwtHTTP("http", "*.infra.example.com"), gwv1.NamespacesFromAll, nil)), gwv1.NamespacesFromAll, nil)},
			listenerSets: set(metav1.ConditionTrue, tenantHTTP),
			route:        route("HTTPRoute", []string{"app.tenant.example.com", "app.infra.example.com"}, ref, gwtRefNS(gwtRef("shared"), "infra")),
			want:         a("app.tenant.example.com.", "app.infra.example.com."),
		},
		{
			// Under the delegated policy a ListenerSet adds listeners only for
			// its own namespace's domains, whatever the route's namespace.
			name: "delegated: hostnames of the ListenerSet's namespace", gateways: all,
			listenerSets: set(metav1.ConditionTrue, gwtHTTP("web", "*.example.com")),
			delegated:    map[string][]string{"tenant": {"tenant.example.com."}},
			route:        route("HTTPRoute", []string{"app.tenant.example.com", "app.other.example.com"}, ref),
			want:         a("app.tenant.example.com."),
			warn:         []string{"app.other.example.com.: not published through ListenerSet tenant/ls: outside the domains delegated to namespace tenant"},
		},
		{
			name: "delegated: a route of another namespace through a tenant's ListenerSet", gateways: all,
			listenerSets: set(metav1.ConditionTrue, gwtFrom(gwtHTTP("web", "*.example.com"), gwv1.NamespacesFromAll, nil)),
			delegated:    map[string][]string{"tenant": {"tenant.example.com."}, "other": {"other.example.com."}},
			ns:           map[string]map[string]string{"other": {}},
			route:        gwtRoute("HTTPRoute", []string{"app.tenant.example.com", "app.other.example.com"}, ref).inNS("other"),
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
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, gwtRefNS(gwtRefGK(gwtRef("ls"), experimentalGroup, "XListenerSet"), "tenant")),
		},
		{
			name: "XListenerSet read as such", gateways: all, listenerSets: set(metav1.ConditionTrue, tenantHTTP), experimental: true,
			route: route("HTTPRoute", []string{"app.tenant.example.com"}, gwtRefNS(gwtRefGK(gwtRef("ls"), experimentalGroup, "XListenerSet"), "tenant")),
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
	r := gwtRoute("HTTPRoute", nil,
		lstRef("infra", "shared"), gwtRefGK(gwtRef("mine"), gwv1.GroupName, "ListenerSet"), gwtRef("gw"),
		gwtRefGK(gwtRef("x"), experimentalGroup, "XListenerSet"), gwtRefGK(gwtRef("other"), "example.com", "ListenerSet")).inNS("apps")
	got := routeListenerSets(gwtConvert(t, r.object()))
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
