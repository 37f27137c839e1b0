package source

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// gwtDefault makes gw a default Gateway of scope.
func gwtDefault(gw *gwv1.Gateway, scope gwv1.GatewayDefaultScope) *gwv1.Gateway {
	gw.Spec.DefaultScope = scope
	return gw
}

// gwtTyped appends a status address of any type to gw.
func gwtTyped(gw *gwv1.Gateway, typ, value string) *gwv1.Gateway {
	t := gwv1.AddressType(typ)
	gw.Status.Addresses = append(gw.Status.Addresses, gwv1.GatewayStatusAddress{Type: &t, Value: value})
	return gw
}

// TestRouteRecordsDefaultGateways: a route with spec.useDefaultGateways
// publishes through the Gateways its status.parents names as Accepted, when
// their defaultScope is the route's scope, with the usual listener rules.
func TestRouteRecordsDefaultGateways(t *testing.T) {
	all, none := gwv1.GatewayDefaultScopeAll, gwv1.GatewayDefaultScopeNone
	hosts := []string{"www.example.com"}
	aRec := []string{"www.example.com. 60 IN A 192.0.2.7"}
	edge := func(scope gwv1.GatewayDefaultScope, listeners ...gwv1.Listener) []*gwv1.Gateway {
		if len(listeners) == 0 {
			listeners = []gwv1.Listener{testutil.AllowFrom(testutil.HTTPListener("web", "*.example.com"), gwv1.NamespacesFromAll, nil)}
		}
		return []*gwv1.Gateway{gwtDefault(testutil.Gateway("infra", "edge", []string{"192.0.2.7"}, listeners...), scope)}
	}
	edgeRef := testutil.RefNS(testutil.Ref("edge"), "infra")
	bound := func(ps ...gwv1.RouteParentStatus) testutil.Route {
		return testutil.NewRoute("HTTPRoute", hosts).UseDefaultGateways(all).WithParents(ps...)
	}
	gwtRun(t, []gwtCase{
		{name: "bound by status alone", gateways: edge(all),
			route: bound(testutil.Parent(edgeRef, metav1.ConditionTrue)), want: aRec},
		{name: "status written with group and kind", gateways: edge(all),
			route: bound(testutil.Parent(testutil.RefGK(edgeRef, gwv1.GroupName, "Gateway"), metav1.ConditionTrue)), want: aRec},
		{name: "not accepted", gateways: edge(all),
			route: bound(testutil.Parent(edgeRef, metav1.ConditionFalse))},
		{name: "no Accepted condition", gateways: edge(all),
			route: bound(testutil.Parent(edgeRef, ""))},
		{name: "route does not ask for default Gateways", gateways: edge(all),
			route: testutil.NewRoute("HTTPRoute", hosts).WithParents(testutil.Parent(edgeRef, metav1.ConditionTrue))},
		{name: "route asks for None", gateways: edge(all),
			route: testutil.NewRoute("HTTPRoute", hosts).UseDefaultGateways(none).WithParents(testutil.Parent(edgeRef, metav1.ConditionTrue))},
		{name: "Gateway is not a default Gateway", gateways: edge(""),
			route: bound(testutil.Parent(edgeRef, metav1.ConditionTrue))},
		{name: "Gateway's defaultScope None", gateways: edge(none),
			route: bound(testutil.Parent(edgeRef, metav1.ConditionTrue))},
		{name: "status names a missing Gateway", gateways: edge(all),
			route: bound(testutil.Parent(testutil.RefNS(testutil.Ref("gone"), "infra"), metav1.ConditionTrue))},
		{name: "status names a Service (mesh)", gateways: edge(all),
			route: bound(testutil.Parent(testutil.RefGK(edgeRef, "", "Service"), metav1.ConditionTrue))},
		{name: "status without namespace: the route's", gateways: []*gwv1.Gateway{gwtDefault(testutil.Gateway("default", "edge", []string{"192.0.2.7"}, testutil.HTTPListener("web", "")), all)},
			route: bound(testutil.Parent(testutil.Ref("edge"), metav1.ConditionTrue)), want: aRec},
		{name: "allowedRoutes Same refuses a route of another namespace",
			gateways: edge(all, testutil.HTTPListener("web", "")),
			route:    bound(testutil.Parent(edgeRef, metav1.ConditionTrue))},
		{name: "allowedRoutes kinds refuse the route kind",
			gateways: edge(all, testutil.AllowKinds(testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromAll, nil), "GRPCRoute")),
			route:    bound(testutil.Parent(edgeRef, metav1.ConditionTrue))},
		{name: "hostname outside the listener's", gateways: edge(all, testutil.AllowFrom(testutil.HTTPListener("web", "*.example.org"), gwv1.NamespacesFromAll, nil)),
			route: bound(testutil.Parent(edgeRef, metav1.ConditionTrue))},
		{name: "no hostnames: the listener's", gateways: edge(all, testutil.AllowFrom(testutil.HTTPListener("web", "api.example.com"), gwv1.NamespacesFromAll, nil)),
			route: testutil.NewRoute("HTTPRoute", nil).UseDefaultGateways(all).WithParents(testutil.Parent(edgeRef, metav1.ConditionTrue)),
			want:  []string{"api.example.com. 60 IN A 192.0.2.7"}},
		{name: "sectionName in the status selects its listener",
			gateways: edge(all,
				testutil.AllowFrom(testutil.HTTPListener("web", "www.example.com"), gwv1.NamespacesFromAll, nil),
				testutil.AllowFrom(testutil.Listener("alt", gwv1.HTTPProtocolType, 8080, "alt.example.com"), gwv1.NamespacesFromAll, nil)),
			route: testutil.NewRoute("HTTPRoute", nil).UseDefaultGateways(all).WithParents(testutil.Parent(testutil.RefSection(edgeRef, "alt"), metav1.ConditionTrue)),
			want:  []string{"alt.example.com. 60 IN A 192.0.2.7"}},
		{name: "class filter refuses the Gateway", gateways: edge(all),
			cfg:   func(c *Config) { c.GatewayClasses = []string{"internal"} },
			route: bound(testutil.Parent(edgeRef, metav1.ConditionTrue))},
		{name: "spec parentRef and a default Gateway together",
			gateways: append(edge(all), testutil.Gateway("default", "own", []string{"192.0.2.8"}, testutil.HTTPListener("web", ""))),
			route: testutil.NewRoute("HTTPRoute", hosts, testutil.Ref("own")).UseDefaultGateways(all).WithParents(
				testutil.Parent(testutil.Ref("own"), metav1.ConditionTrue), testutil.Parent(edgeRef, metav1.ConditionTrue)),
			want: []string{"www.example.com. 60 IN A 192.0.2.7", "www.example.com. 60 IN A 192.0.2.8"}},
		{
			// A Gateway named in spec.parentRefs needs no defaultScope.
			name:     "spec parentRef to a Gateway that is not a default one",
			gateways: edge(""),
			route:    testutil.NewRoute("HTTPRoute", hosts, edgeRef).UseDefaultGateways(all).WithParents(testutil.Parent(edgeRef, metav1.ConditionTrue)),
			want:     aRec,
		},
		{name: "TCPRoute through a default Gateway's TLS listener",
			gateways: edge(all, testutil.AllowFrom(testutil.Listener("tls", gwv1.TLSProtocolType, 443, "db.example.com"), gwv1.NamespacesFromAll, nil)),
			route:    testutil.NewRoute("TCPRoute", nil).UseDefaultGateways(all).WithParents(testutil.Parent(edgeRef, metav1.ConditionTrue)),
			want:     []string{"db.example.com. 60 IN A 192.0.2.7"}},
	})
}

// TestRouteDefaultParents: what slimRoute keeps of the default Gateway
// bindings, and that the Gateway index finds the route through them.
func TestRouteDefaultParents(t *testing.T) {
	edge := testutil.RefNS(testutil.Ref("edge"), "infra")
	r := testutil.NewRoute("HTTPRoute", nil, testutil.Ref("own")).UseDefaultGateways(gwv1.GatewayDefaultScopeAll).WithParents(
		testutil.Parent(testutil.Ref("own"), metav1.ConditionTrue),
		testutil.Parent(edge, metav1.ConditionTrue),
		testutil.Parent(testutil.RefGK(edge, gwv1.GroupName, "Gateway"), metav1.ConditionTrue), // the same again, defaults written
		testutil.Parent(testutil.RefNS(testutil.Ref("refused"), "infra"), metav1.ConditionFalse),
		testutil.Parent(testutil.Ref("local"), metav1.ConditionTrue),
	)
	rt := gwtConvert(t, r.Object())
	if got, want := routeGateways(rt), []string{"default/own", "infra/edge", "default/local"}; !slices.Equal(got, want) {
		t.Errorf("routeGateways = %q, want %q", got, want)
	}
	if rt.defaults != 2 || rt.defaultScope != gwv1.GatewayDefaultScopeAll || !slices.Equal(rt.accepted, []bool{true, true, true}) {
		t.Errorf("defaults %d scope %q accepted %v, want 2 All [true true true]", rt.defaults, rt.defaultScope, rt.accepted)
	}
	for i, want := range []gwv1.GatewayDefaultScope{"", gwv1.GatewayDefaultScopeAll, gwv1.GatewayDefaultScopeAll} {
		if got := rt.scopeOf(i); got != want {
			t.Errorf("scopeOf(%d) = %q, want %q", i, got, want)
		}
	}
	cp := rt.DeepCopyObject().(*route)
	if cp.defaults != rt.defaults || cp.defaultScope != rt.defaultScope || &cp.parentRefs[1] == &rt.parentRefs[1] {
		t.Errorf("DeepCopyObject lost or shares the default bindings: %+v", cp)
	}
	// Without useDefaultGateways the status adds nothing.
	plain := gwtConvert(t, testutil.NewRoute("HTTPRoute", nil).WithParents(testutil.Parent(edge, metav1.ConditionTrue)).Object())
	if len(plain.parentRefs) != 0 || plain.defaults != 0 || plain.defaultScope != "" {
		t.Errorf("a route without useDefaultGateways kept %+v", plain)
	}
}

// TestGatewayAddressTypes: only IPAddress and Hostname addresses publish;
// each address of another type is a warning of the Gateway, never of its
// routes, and never stops the Gateway's other addresses.
func TestGatewayAddressTypes(t *testing.T) {
	mixed := func() *gwv1.Gateway {
		gw := testutil.Gateway("default", "gw", []string{"192.0.2.1"}, testutil.HTTPListener("web", ""))
		gwtTyped(gw, "NamedAddress", "edge-pool")
		return gwtTyped(gw, "example.com/vip", "vip-7")
	}
	onlyOdd := func() *gwv1.Gateway {
		return gwtTyped(testutil.Gateway("default", "gw", nil, testutil.HTTPListener("web", "")), "NamedAddress", "edge-pool")
	}
	tests := []struct {
		name      string
		gw        *gwv1.Gateway
		classes   []string
		want      []string // of the route www.example.com
		gwWant    []string // of the Gateway itself
		gwWarn    []string
		gwNoWarns bool
	}{
		{name: "mixed types: the IP publishes", gw: mixed(), want: []string{"www.example.com. 60 IN A 192.0.2.1"},
			gwWarn: []string{`"edge-pool" of type NamedAddress ignored`, `"vip-7" of type example.com/vip ignored`}},
		{name: "only an unknown type: nothing, one warning", gw: onlyOdd(), gwWarn: []string{`"edge-pool" of type NamedAddress ignored`}},
		{name: "hostname annotation still publishes the IP", want: []string{"www.example.com. 60 IN A 192.0.2.1"},
			gw:     testutil.GatewayAnnotated(mixed(), "coredns.io/hostname", "gw.example.com"),
			gwWant: []string{"gw.example.com. 60 IN A 192.0.2.1"},
			gwWarn: []string{"NamedAddress ignored", "example.com/vip ignored"}},
		{name: "Gateway of another class: no warning", gw: mixed(), classes: []string{"internal"}, gwNoWarns: true},
		{name: "IPAddress and Hostname: no warning", gw: testutil.Gateway("default", "gw", []string{"192.0.2.1", "2001:db8::1"}, testutil.HTTPListener("web", "")),
			want: []string{"www.example.com. 60 IN A 192.0.2.1", "www.example.com. 60 IN AAAA 2001:db8::1"}, gwNoWarns: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := gwtConfig()
			cfg.GatewayClasses = tc.classes
			for _, variant := range []string{"full", "slim"} {
				gw := tc.gw.DeepCopy()
				if variant == "slim" {
					obj, _ := slimGateway(gw)
					gw = obj.(*gwv1.Gateway)
				}
				gr := gatewayRecords(gw, cfg)
				if tc.gwNoWarns && len(gr.Warnings) > 0 {
					t.Errorf("%s Gateway warns %q", variant, gr.Warnings)
				}
				gwtCheck(t, variant+" Gateway", gr, tc.gwWant, tc.gwWarn)
				ctx := gwtNewContext([]*gwv1.Gateway{gw}, nil)
				rt := gwtConvert(t, testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, testutil.Ref("gw")).Object())
				// The route's records, and no warning about the Gateway's addresses.
				gwtCheck(t, variant+" route", routeRecords(rt, ctx, cfg), tc.want, nil)
			}
		})
	}
}
