package source

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1a2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwv1a3 "sigs.k8s.io/gateway-api/apis/v1alpha3"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// Hostnames and addresses: listener intersection, inheritance, zones, address types.
func TestRouteRecordsHostnames(t *testing.T) {
	ip := []string{"192.0.2.1"}
	gw := func(ls ...gwv1.Listener) []*gwv1.Gateway {
		return []*gwv1.Gateway{testutil.Gateway("default", "gw", ip, ls...)}
	}
	http := func(hosts ...string) testutil.Route { return testutil.NewRoute("HTTPRoute", hosts, testutil.Ref("gw")) }
	a := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, n+" 60 IN A 192.0.2.1")
		}
		return out
	}
	gwtRun(t, []gwtCase{
		{
			name:     "listener without hostname keeps the route hostnames",
			gateways: gw(testutil.HTTPListener("http", "")),
			route:    http("www.example.com", "api.example.com"),
			want:     a("www.example.com.", "api.example.com."),
		},
		{
			name:     "hostnames are lower-cased",
			gateways: gw(testutil.HTTPListener("http", "")),
			route:    http("WWW.Example.COM"),
			want:     a("www.example.com."),
		},
		{
			name:     "wildcard listener admits a name below it",
			gateways: gw(testutil.HTTPListener("http", "*.example.com")),
			route:    http("foo.example.com"),
			want:     a("foo.example.com."),
		},
		{
			name:     "wildcard listener admits a name several labels below it",
			gateways: gw(testutil.HTTPListener("http", "*.example.com")),
			route:    http("a.b.example.com"),
			want:     a("a.b.example.com."),
		},
		{
			name:     "wildcard listener does not admit its own suffix",
			gateways: gw(testutil.HTTPListener("http", "*.example.com")),
			route:    http("example.com"),
		},
		{
			name:     "wildcard route narrowed to a specific listener",
			gateways: gw(testutil.HTTPListener("http", "foo.example.com")),
			route:    http("*.example.com"),
			want:     a("foo.example.com."),
		},
		{
			name:     "wildcard route narrowed to a narrower wildcard listener",
			gateways: gw(testutil.HTTPListener("http", "*.a.example.com")),
			route:    http("*.example.com"),
			want:     a("*.a.example.com."),
		},
		{
			name:     "narrower wildcard route inside a wildcard listener",
			gateways: gw(testutil.HTTPListener("http", "*.example.com")),
			route:    http("*.a.example.com"),
			want:     a("*.a.example.com."),
		},
		{
			name:     "equal wildcards",
			gateways: gw(testutil.HTTPListener("http", "*.example.com")),
			route:    http("*.example.com"),
			want:     a("*.example.com."),
		},
		{
			name:     "equal names, different case",
			gateways: gw(testutil.HTTPListener("http", "WWW.example.com")),
			route:    http("www.EXAMPLE.com"),
			want:     a("www.example.com."),
		},
		{
			name:     "no overlap publishes nothing",
			gateways: gw(testutil.HTTPListener("http", "foo.example.com")),
			route:    http("bar.example.com", "*.example.org"),
		},
		{
			name:     "no overlap between wildcards of different suffixes",
			gateways: gw(testutil.HTTPListener("http", "*.a.example.com")),
			route:    http("*.b.example.com"),
		},
		{
			name:     "suffix match is by label, not by string",
			gateways: gw(testutil.HTTPListener("http", "*.example.com")),
			route:    http("fooexample.com", "x.notexample.com"),
		},
		{
			name:     "only the hostnames inside the listener's are kept",
			gateways: gw(testutil.HTTPListener("http", "*.example.com")),
			route:    http("www.example.com", "www.example.org"),
			want:     a("www.example.com."),
		},
		{
			name:     "route without hostnames inherits the listener hostname",
			gateways: gw(testutil.HTTPListener("http", "app.example.com")),
			route:    http(),
			want:     a("app.example.com."),
		},
		{
			name:     "route without hostnames inherits a wildcard listener hostname",
			gateways: gw(testutil.HTTPListener("http", "*.apps.example.com")),
			route:    http(),
			want:     a("*.apps.example.com."),
		},
		{
			name:     "route without hostnames inherits from every listener; none from one without hostname",
			gateways: gw(testutil.HTTPListener("a", "a.example.com"), testutil.HTTPListener("b", "b.example.com"), testutil.HTTPListener("c", "")),
			route:    http(),
			want:     a("a.example.com.", "b.example.com."),
		},
		{
			name:     "route and listener without hostnames publish nothing",
			gateways: gw(testutil.HTTPListener("http", "")),
			route:    http(),
		},
		{
			name:     "each listener intersected on its own, names deduplicated",
			gateways: gw(testutil.HTTPListener("a", "*.example.com"), testutil.HTTPListener("b", "www.example.com"), testutil.HTTPListener("c", "*.example.org")),
			route:    http("www.example.com", "api.example.org"),
			want:     a("www.example.com.", "api.example.org."),
		},
		{
			name:     "hostname outside the zones is skipped with a warning",
			gateways: gw(testutil.HTTPListener("http", "")),
			route:    http("www.example.com", "www.example.net"),
			want:     a("www.example.com."),
			warn:     []string{`"www.example.net" in hostname is outside the zones`},
		},
		{
			name:     "inherited listener hostname outside the zones warns",
			gateways: gw(testutil.HTTPListener("http", "app.example.net")),
			route:    http(),
			warn:     []string{"outside the zones"},
		},
		{
			name:     "IPv4 and IPv6 addresses, typed and untyped",
			gateways: []*gwv1.Gateway{testutil.Gateway("default", "gw", []string{"192.0.2.1", "untyped:2001:db8::1", "untyped:192.0.2.2"}, testutil.HTTPListener("http", ""))},
			route:    http("www.example.com"),
			want: []string{
				"www.example.com. 60 IN A 192.0.2.1",
				"www.example.com. 60 IN A 192.0.2.2",
				"www.example.com. 60 IN AAAA 2001:db8::1",
			},
		},
		{
			name:     "Hostname address is a CNAME",
			gateways: []*gwv1.Gateway{testutil.Gateway("default", "gw", []string{"lb-1.elb.example.net"}, testutil.HTTPListener("http", ""))},
			route:    http("www.example.com"),
			want:     []string{"www.example.com. 60 IN CNAME lb-1.elb.example.net."},
		},
		{
			name:     "invalid IP address warns, the others are published",
			gateways: []*gwv1.Gateway{testutil.Gateway("default", "gw", []string{"192.0.2.300", "192.0.2.1"}, testutil.HTTPListener("http", ""))},
			route:    http("www.example.com"),
			want:     a("www.example.com."),
			warn:     []string{`invalid IP "192.0.2.300" in status.addresses`},
		},
		{
			name: "address of an implementation-specific type is not used",
			gateways: func() []*gwv1.Gateway {
				g := testutil.Gateway("default", "gw", ip, testutil.HTTPListener("http", ""))
				typ := gwv1.AddressType("example.com/named")
				g.Status.Addresses = append(g.Status.Addresses, gwv1.GatewayStatusAddress{Type: &typ, Value: "pool-1"})
				return []*gwv1.Gateway{g}
			}(),
			route: http("www.example.com"),
			want:  a("www.example.com."),
		},
		{
			name:     "Gateway without addresses publishes nothing",
			gateways: []*gwv1.Gateway{testutil.Gateway("default", "gw", nil, testutil.HTTPListener("http", ""))},
			route:    http("www.example.com"),
		},
		{
			name: "target annotation on the Gateway overrides its addresses",
			gateways: []*gwv1.Gateway{testutil.GatewayAnnotated(testutil.Gateway("default", "gw", ip, testutil.HTTPListener("http", "")),
				"external-dns.alpha.kubernetes.io/target", "198.51.100.7, 2001:db8::7")},
			route: http("www.example.com"),
			want: []string{
				"www.example.com. 60 IN A 198.51.100.7",
				"www.example.com. 60 IN AAAA 2001:db8::7",
			},
		},
		{
			name: "non-alpha target annotation, a hostname",
			gateways: []*gwv1.Gateway{testutil.GatewayAnnotated(testutil.Gateway("default", "gw", ip, testutil.HTTPListener("http", "")),
				"external-dns.kubernetes.io/target", "edge.example.net")},
			route: http("www.example.com"),
			want:  []string{"www.example.com. 60 IN CNAME edge.example.net."},
		},
		{
			name:     "target annotation on the route is not read",
			gateways: gw(testutil.HTTPListener("http", "")),
			route:    http("www.example.com").Annotated("external-dns.alpha.kubernetes.io/target", "198.51.100.9"),
			want:     a("www.example.com."),
		},
	})
}

// Which parentRefs and listeners a route publishes through.
func TestRouteRecordsParents(t *testing.T) {
	ip := []string{"192.0.2.1"}
	aRec := []string{"www.example.com. 60 IN A 192.0.2.1"}
	two := func() []*gwv1.Gateway {
		return []*gwv1.Gateway{testutil.Gateway("default", "gw", ip,
			testutil.HTTPListener("web", "www.example.com"),
			testutil.Listener("alt", gwv1.HTTPProtocolType, 8080, "alt.example.com"),
		)}
	}
	gwRoute := func(refs ...gwv1.ParentReference) testutil.Route { return testutil.NewRoute("HTTPRoute", nil, refs...) }
	gwtRun(t, []gwtCase{
		{
			name:     "no sectionName or port: every listener",
			gateways: two(),
			route:    gwRoute(testutil.Ref("gw")),
			want:     []string{"www.example.com. 60 IN A 192.0.2.1", "alt.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "sectionName selects its listener",
			gateways: two(),
			route:    gwRoute(testutil.RefSection(testutil.Ref("gw"), "web")),
			want:     aRec,
		},
		{
			name:     "sectionName naming no listener",
			gateways: two(),
			route:    gwRoute(testutil.RefSection(testutil.Ref("gw"), "missing")),
		},
		{
			name: "sectionName selects a listener whose hostname does not match",
			gateways: []*gwv1.Gateway{testutil.Gateway("default", "gw", ip,
				testutil.HTTPListener("web", "www.example.com"), testutil.HTTPListener("other", "*.example.com"))},
			route: testutil.NewRoute("HTTPRoute", []string{"api.example.com"}, testutil.RefSection(testutil.Ref("gw"), "web")),
		},
		{
			name:     "port selects its listener",
			gateways: two(),
			route:    gwRoute(testutil.RefPort(testutil.Ref("gw"), 8080)),
			want:     []string{"alt.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "port of no listener",
			gateways: two(),
			route:    gwRoute(testutil.RefPort(testutil.Ref("gw"), 443)),
		},
		{
			name:     "sectionName and port both match",
			gateways: two(),
			route:    gwRoute(testutil.RefPort(testutil.RefSection(testutil.Ref("gw"), "alt"), 8080)),
			want:     []string{"alt.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "sectionName matches, port does not",
			gateways: two(),
			route:    gwRoute(testutil.RefPort(testutil.RefSection(testutil.Ref("gw"), "web"), 8080)),
		},
		{
			name:     "explicit group and kind Gateway",
			gateways: two(),
			route:    gwRoute(testutil.RefSection(testutil.RefGK(testutil.Ref("gw"), gwv1.GroupName, "Gateway"), "web")),
			want:     aRec,
		},
		{
			name:     "parent of another group",
			gateways: two(),
			route:    gwRoute(testutil.RefGK(testutil.Ref("gw"), "example.com", "Gateway")),
		},
		{
			name:     "parent of another kind",
			gateways: two(),
			route:    gwRoute(testutil.RefGK(testutil.Ref("gw"), gwv1.GroupName, "ListenerSet")),
		},
		{
			// GAMMA: a Service as parent has no external address, even when a
			// Gateway of the same name exists.
			name:     "Service parentRef (GAMMA) ignored",
			gateways: two(),
			route:    gwRoute(testutil.RefPort(testutil.RefGK(testutil.Ref("gw"), "", "Service"), 80)),
		},
		{
			name:     "Service parentRef next to a Gateway parentRef",
			gateways: two(),
			route:    gwRoute(testutil.RefGK(testutil.Ref("gw"), "", "Service"), testutil.RefSection(testutil.Ref("gw"), "web")),
			want:     aRec,
		},
		{
			name:     "Gateway does not exist",
			gateways: two(),
			route:    gwRoute(testutil.Ref("nope")),
		},
		{
			name:     "Gateway in another namespace than the route's, no namespace in the ref",
			gateways: []*gwv1.Gateway{testutil.Gateway("infra", "gw", ip, testutil.AllowFrom(testutil.HTTPListener("web", "www.example.com"), gwv1.NamespacesFromAll, nil))},
			route:    gwRoute(testutil.Ref("gw")),
		},
		{
			name:     "class filter admits the Gateway's class",
			cfg:      func(c *Config) { c.GatewayClasses = []string{"internal", "public"} },
			gateways: two(),
			route:    gwRoute(testutil.RefSection(testutil.Ref("gw"), "web")),
			want:     aRec,
		},
		{
			name:     "class filter excludes the Gateway's class",
			cfg:      func(c *Config) { c.GatewayClasses = []string{"internal"} },
			gateways: two(),
			route:    gwRoute(testutil.RefSection(testutil.Ref("gw"), "web")),
		},
		{
			name: "class filter with two Gateways: only the admitted class publishes",
			cfg:  func(c *Config) { c.GatewayClasses = []string{"internal"} },
			gateways: []*gwv1.Gateway{
				testutil.Gateway("default", "public", []string{"192.0.2.1"}, testutil.HTTPListener("web", "")),
				testutil.WithGatewayClass(testutil.Gateway("default", "private", []string{"10.0.0.1"}, testutil.HTTPListener("web", "")), "internal"),
			},
			route: testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, testutil.Ref("public"), testutil.Ref("private")),
			want:  []string{"www.example.com. 60 IN A 10.0.0.1"},
		},
	})
}

// The route's status must say that the parent accepted it.
func TestRouteRecordsAccepted(t *testing.T) {
	ip := []string{"192.0.2.1"}
	gws := []*gwv1.Gateway{
		testutil.Gateway("default", "gw", ip, testutil.HTTPListener("web", ""), testutil.Listener("alt", gwv1.HTTPProtocolType, 8080, "")),
		testutil.Gateway("infra", "gw", []string{"192.0.2.99"}, testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromAll, nil)),
	}
	hosts := []string{"www.example.com"}
	aRec := []string{"www.example.com. 60 IN A 192.0.2.1"}
	ref, web := testutil.Ref("gw"), testutil.RefSection(testutil.Ref("gw"), "web")
	gwtRun(t, []gwtCase{
		{
			name:     "Accepted=True",
			gateways: gws,
			route:    testutil.NewRoute("HTTPRoute", hosts, ref),
			want:     aRec,
		},
		{
			name:     "Accepted=False",
			gateways: gws,
			route:    testutil.NewRoute("HTTPRoute", hosts, ref).WithParents(testutil.Parent(ref, metav1.ConditionFalse)),
		},
		{
			name:     "Accepted=Unknown",
			gateways: gws,
			route:    testutil.NewRoute("HTTPRoute", hosts, ref).WithParents(testutil.Parent(ref, metav1.ConditionUnknown)),
		},
		{
			name:     "no Accepted condition",
			gateways: gws,
			route:    testutil.NewRoute("HTTPRoute", hosts, ref).WithParents(testutil.Parent(ref, "")),
		},
		{
			name:     "no status at all",
			gateways: gws,
			route:    testutil.NewRoute("HTTPRoute", hosts, ref).WithoutStatus(),
		},
		{
			name:     "status for another Gateway",
			gateways: gws,
			route:    testutil.NewRoute("HTTPRoute", hosts, ref).WithParents(testutil.Parent(testutil.Ref("other"), metav1.ConditionTrue)),
		},
		{
			name:     "status for the same name in another namespace",
			gateways: gws,
			route:    testutil.NewRoute("HTTPRoute", hosts, ref).WithParents(testutil.Parent(testutil.RefNS(ref, "infra"), metav1.ConditionTrue)),
		},
		{
			name:     "status for another sectionName",
			gateways: gws,
			route:    testutil.NewRoute("HTTPRoute", hosts, web).WithParents(testutil.Parent(testutil.RefSection(ref, "alt"), metav1.ConditionTrue)),
		},
		{
			name:     "status without the sectionName of the spec",
			gateways: gws,
			route:    testutil.NewRoute("HTTPRoute", hosts, web).WithParents(testutil.Parent(ref, metav1.ConditionTrue)),
		},
		{
			name:     "status for another port",
			gateways: gws,
			route:    testutil.NewRoute("HTTPRoute", hosts, testutil.RefPort(ref, 80)).WithParents(testutil.Parent(testutil.RefPort(ref, 8080), metav1.ConditionTrue)),
		},
		{
			name:     "status for a Service parent of the same name",
			gateways: gws,
			route:    testutil.NewRoute("HTTPRoute", hosts, ref).WithParents(testutil.Parent(testutil.RefGK(ref, "", "Service"), metav1.ConditionTrue)),
		},
		{
			// Controllers write the parentRef with defaults filled in.
			name:     "status with explicit namespace, group and kind matches a spec ref without them",
			gateways: gws,
			route: testutil.NewRoute("HTTPRoute", hosts, web).WithParents(
				testutil.Parent(testutil.RefSection(testutil.RefGK(testutil.RefNS(testutil.Ref("gw"), "default"), gwv1.GroupName, "Gateway"), "web"), metav1.ConditionTrue)),
			want: aRec,
		},
		{
			name:     "status without namespace matches a spec ref naming the route's namespace",
			gateways: gws,
			route:    testutil.NewRoute("HTTPRoute", hosts, testutil.RefNS(web, "default")).WithParents(testutil.Parent(web, metav1.ConditionTrue)),
			want:     aRec,
		},
		{
			name:     "accepted by one of two parents",
			gateways: gws,
			route: testutil.NewRoute("HTTPRoute", hosts, ref, testutil.RefNS(ref, "infra")).WithParents(
				testutil.Parent(ref, metav1.ConditionTrue), testutil.Parent(testutil.RefNS(ref, "infra"), metav1.ConditionFalse)),
			want: aRec,
		},
		{
			name:     "accepted by one listener of a Gateway, refused by the other",
			gateways: gws,
			route: testutil.NewRoute("HTTPRoute", hosts, web, testutil.RefSection(ref, "alt")).WithParents(
				testutil.Parent(web, metav1.ConditionTrue), testutil.Parent(testutil.RefSection(ref, "alt"), metav1.ConditionFalse)),
			want: aRec,
		},
	})
}

// allowedRoutes: namespaces and kinds.
func TestRouteRecordsListenerAllowedRoutes(t *testing.T) {
	ip := []string{"192.0.2.1"}
	in := func(ls ...gwv1.Listener) []*gwv1.Gateway {
		return []*gwv1.Gateway{testutil.Gateway("infra", "gw", ip, ls...)}
	}
	sel := func(kv ...string) *metav1.LabelSelector {
		s := &metav1.LabelSelector{MatchLabels: map[string]string{}}
		for i := 0; i+1 < len(kv); i += 2 {
			s.MatchLabels[kv[i]] = kv[i+1]
		}
		return s
	}
	teams := map[string]map[string]string{"apps": {"expose": "true", "team": "a"}, "other": {"team": "b"}}
	ref := testutil.RefNS(testutil.Ref("gw"), "infra")
	route := func(ns string) testutil.Route {
		return testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, ref).InNS(ns)
	}
	kindRoute := func(kind string) testutil.Route {
		return testutil.NewRoute(kind, []string{"www.example.com"}, ref).InNS("infra").Annotated("coredns.io/hostname", "svc.example.com")
	}
	aRec := []string{"www.example.com. 60 IN A 192.0.2.1"}
	// Routes without hostnames (TCPRoute, UDPRoute) publish the annotation only.
	kindRecs := []string{"www.example.com. 60 IN A 192.0.2.1", "svc.example.com. 60 IN A 192.0.2.1"}
	annRecs := []string{"svc.example.com. 60 IN A 192.0.2.1"}
	gwtRun(t, []gwtCase{
		{name: "Same (default), same namespace", gateways: in(testutil.HTTPListener("web", "")), route: route("infra"), want: aRec},
		{name: "Same (default), other namespace", gateways: in(testutil.HTTPListener("web", "")), route: route("apps"), ns: teams},
		{name: "Same (explicit), other namespace", gateways: in(testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromSame, nil)), route: route("apps"), ns: teams},
		{name: "All, other namespace", gateways: in(testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromAll, nil)), route: route("apps"), ns: teams, want: aRec},
		{name: "All, namespace not in the cache", gateways: in(testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromAll, nil)), route: route("unknown"), want: aRec},
		{name: "None", gateways: in(testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromNone, nil)), route: route("infra")},
		{name: "Selector matches", gateways: in(testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromSelector, sel("expose", "true"))), route: route("apps"), ns: teams, want: aRec},
		{name: "Selector does not match", gateways: in(testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromSelector, sel("expose", "true"))), route: route("other"), ns: teams},
		{name: "Selector, namespace unknown", gateways: in(testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromSelector, sel("expose", "true"))), route: route("unknown"), ns: teams},
		{name: "Selector does not admit the Gateway's own namespace by itself", gateways: in(testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromSelector, sel("expose", "true"))), route: route("infra"), ns: teams},
		{
			name: "Selector with expressions",
			gateways: in(testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromSelector, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "c"}},
			}})),
			route: route("apps"), ns: teams, want: aRec,
		},
		{
			name:     "Selector on the well-known namespace name label",
			gateways: in(testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromSelector, sel("kubernetes.io/metadata.name", "default"))),
			route:    route("default"), want: aRec,
		},
		{name: "Selector that is not given admits nothing", gateways: in(testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromSelector, nil)), route: route("apps"), ns: teams},
		{
			name: "invalid Selector admits nothing",
			gateways: in(testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromSelector, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "team", Operator: "Near"},
			}})),
			route: route("apps"), ns: teams,
		},
		{
			name: "the listener that admits wins over one that does not",
			gateways: in(testutil.AllowFrom(testutil.HTTPListener("closed", "*.example.com"), gwv1.NamespacesFromSame, nil),
				testutil.AllowFrom(testutil.HTTPListener("open", "www.example.com"), gwv1.NamespacesFromAll, nil)),
			route: route("apps"), ns: teams, want: aRec,
		},
		// Kinds.
		{name: "explicit kinds include the route's", gateways: in(testutil.AllowKinds(testutil.HTTPListener("web", ""), "GRPCRoute", "HTTPRoute")), route: route("infra"), want: aRec},
		{name: "explicit kinds with the Gateway API group", gateways: in(testutil.AllowKinds(testutil.HTTPListener("web", ""), gwv1.GroupName+"/HTTPRoute")), route: route("infra"), want: aRec},
		{name: "explicit kinds exclude the route's", gateways: in(testutil.AllowKinds(testutil.HTTPListener("web", ""), "GRPCRoute")), route: route("infra")},
		{name: "explicit kind of another group", gateways: in(testutil.AllowKinds(testutil.HTTPListener("web", ""), "example.com/HTTPRoute")), route: route("infra")},
		{name: "explicit kinds, route not admitted by namespace", gateways: in(testutil.AllowKinds(testutil.HTTPListener("web", ""), "HTTPRoute")), route: route("apps"), ns: teams},
		{name: "HTTP admits HTTPRoute", gateways: in(testutil.HTTPListener("web", "")), route: kindRoute("HTTPRoute"), want: kindRecs},
		{name: "HTTP admits GRPCRoute", gateways: in(testutil.HTTPListener("web", "")), route: kindRoute("GRPCRoute"), want: kindRecs},
		{name: "HTTPS admits GRPCRoute", gateways: in(testutil.Listener("web", gwv1.HTTPSProtocolType, 443, "")), route: kindRoute("GRPCRoute"), want: kindRecs},
		{name: "HTTP does not admit TLSRoute", gateways: in(testutil.HTTPListener("web", "")), route: kindRoute("TLSRoute")},
		{name: "HTTPS does not admit TCPRoute", gateways: in(testutil.Listener("web", gwv1.HTTPSProtocolType, 443, "")), route: kindRoute("TCPRoute")},
		{name: "TLS admits TLSRoute", gateways: in(testutil.Listener("web", gwv1.TLSProtocolType, 443, "")), route: kindRoute("TLSRoute"), want: kindRecs},
		{name: "TLS admits TCPRoute", gateways: in(testutil.Listener("web", gwv1.TLSProtocolType, 443, "")), route: kindRoute("TCPRoute"), want: annRecs},
		{name: "TLS does not admit HTTPRoute", gateways: in(testutil.Listener("web", gwv1.TLSProtocolType, 443, "")), route: kindRoute("HTTPRoute")},
		{name: "TCP admits TCPRoute", gateways: in(testutil.Listener("db", gwv1.TCPProtocolType, 5432, "")), route: kindRoute("TCPRoute"), want: annRecs},
		{name: "TCP does not admit UDPRoute", gateways: in(testutil.Listener("db", gwv1.TCPProtocolType, 5432, "")), route: kindRoute("UDPRoute")},
		{name: "TCP does not admit TLSRoute", gateways: in(testutil.Listener("db", gwv1.TCPProtocolType, 5432, "")), route: kindRoute("TLSRoute")},
		{name: "UDP admits UDPRoute", gateways: in(testutil.Listener("dns", gwv1.UDPProtocolType, 53, "")), route: kindRoute("UDPRoute"), want: annRecs},
		{name: "UDP does not admit TCPRoute", gateways: in(testutil.Listener("dns", gwv1.UDPProtocolType, 53, "")), route: kindRoute("TCPRoute")},
		{name: "explicit kinds override the protocol's", gateways: in(testutil.AllowKinds(testutil.Listener("dns", gwv1.UDPProtocolType, 53, ""), "TCPRoute")), route: kindRoute("TCPRoute"), want: annRecs},
		{name: "empty kinds list means the protocol's", gateways: in(testutil.AllowKinds(testutil.Listener("db", gwv1.TCPProtocolType, 5432, ""))), route: kindRoute("TCPRoute"), want: annRecs},
	})
}

// Annotations and labels on the route, multiple parents.
func TestRouteRecordsAnnotationsAndParents(t *testing.T) {
	ip := []string{"192.0.2.1"}
	web := testutil.HTTPListener("web", "")
	one := []*gwv1.Gateway{testutil.Gateway("default", "gw", ip, web, testutil.Listener("db", gwv1.TCPProtocolType, 5432, ""))}
	ref := testutil.Ref("gw")
	gwtRun(t, []gwtCase{
		{
			name:     "ignore label",
			gateways: one,
			route:    testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, ref).Labeled(IgnoreLabel, "true"),
		},
		{
			name:     "ignore label, any case",
			gateways: one,
			route:    testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, ref).Labeled(IgnoreLabel, "True"),
		},
		{
			name:     "ignore label not true",
			gateways: one,
			route:    testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, ref).Labeled(IgnoreLabel, "false"),
			want:     []string{"www.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "TTL annotation",
			gateways: one,
			route:    testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, ref).Annotated("external-dns.alpha.kubernetes.io/ttl", "300"),
			want:     []string{"www.example.com. 300 IN A 192.0.2.1"},
		},
		{
			name:     "non-alpha TTL annotation",
			gateways: one,
			route:    testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, ref).Annotated("external-dns.kubernetes.io/ttl", "5"),
			want:     []string{"www.example.com. 5 IN A 192.0.2.1"},
		},
		{
			name:     "invalid TTL annotation warns and keeps the default",
			gateways: one,
			route:    testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, ref).Annotated("external-dns.alpha.kubernetes.io/ttl", "soon"),
			want:     []string{"www.example.com. 60 IN A 192.0.2.1"},
			warn:     []string{`invalid TTL "soon"`},
		},
		{
			name:     "TCPRoute published through its hostname annotation only",
			gateways: one,
			route:    testutil.NewRoute("TCPRoute", nil, testutil.RefSection(ref, "db")).Annotated("coredns.io/hostname", "db.example.com"),
			want:     []string{"db.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "TCPRoute without annotation publishes nothing",
			gateways: one,
			route:    testutil.NewRoute("TCPRoute", nil, testutil.RefSection(ref, "db")),
		},
		{
			name:     "TCPRoute: relative annotation names, every zone",
			gateways: one,
			route: testutil.NewRoute("TCPRoute", nil, ref).Annotated(
				"external-dns.alpha.kubernetes.io/hostname", "db",
			),
			want: []string{
				"db.example.com. 60 IN A 192.0.2.1",
				"db.example.org. 60 IN A 192.0.2.1",
			},
		},
		{
			name:     "TCPRoute: the GA hostname annotation wins over the alpha one",
			gateways: one,
			route: testutil.NewRoute("TCPRoute", nil, ref).Annotated(
				"external-dns.alpha.kubernetes.io/hostname", "db",
				"external-dns.kubernetes.io/hostname", "pg.example.org.",
			),
			want: []string{"pg.example.org. 60 IN A 192.0.2.1"},
		},
		{
			name:     "TCPRoute annotation, listener does not admit TCPRoute",
			gateways: one,
			route:    testutil.NewRoute("TCPRoute", nil, testutil.RefSection(ref, "web")).Annotated("coredns.io/hostname", "db.example.com"),
		},
		{
			name:     "TCPRoute annotation, not Accepted",
			gateways: one,
			route: testutil.NewRoute("TCPRoute", nil, ref).Annotated("coredns.io/hostname", "db.example.com").
				WithParents(testutil.Parent(ref, metav1.ConditionFalse)),
		},
		{
			name:     "UDPRoute through its annotation, absolute name outside the zones warns",
			gateways: []*gwv1.Gateway{testutil.Gateway("default", "gw", ip, testutil.Listener("dns", gwv1.UDPProtocolType, 53, ""))},
			route:    testutil.NewRoute("UDPRoute", nil, ref).Annotated("coredns.io/hostname", "ns.example.com,ns.example.net."),
			want:     []string{"ns.example.com. 60 IN A 192.0.2.1"},
			warn:     []string{"outside the zones"},
		},
		{
			name:     "hostname annotation adds names to an HTTPRoute's",
			gateways: one,
			route:    testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, ref).Annotated("coredns.io/hostname", "alias.example.com"),
			want:     []string{"www.example.com. 60 IN A 192.0.2.1", "alias.example.com. 60 IN A 192.0.2.1"},
		},
		{
			// As external-dns: the listener's hostname narrows the annotation's names too.
			name:     "hostname annotation outside the listener hostname",
			gateways: []*gwv1.Gateway{testutil.Gateway("default", "gw", ip, testutil.HTTPListener("web", "*.apps.example.com"))},
			route:    testutil.NewRoute("HTTPRoute", []string{"a.apps.example.com"}, ref).Annotated("coredns.io/hostname", "short.example.com"),
			want:     []string{"a.apps.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "hostname annotation inside the listener hostname",
			gateways: []*gwv1.Gateway{testutil.Gateway("default", "gw", ip, testutil.HTTPListener("web", "*.apps.example.com"))},
			route:    testutil.NewRoute("HTTPRoute", []string{"a.apps.example.com"}, ref).Annotated("coredns.io/hostname", "b.apps.example.com"),
			want:     []string{"a.apps.example.com. 60 IN A 192.0.2.1", "b.apps.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "wildcard hostname annotation narrowed to the listener hostname",
			gateways: []*gwv1.Gateway{testutil.Gateway("default", "gw", ip, testutil.HTTPListener("web", "db.apps.example.com"))},
			route:    testutil.NewRoute("HTTPRoute", []string{"db.apps.example.com"}, ref).Annotated("coredns.io/hostname", "*.apps.example.com"),
			want:     []string{"db.apps.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "relative hostname annotation narrowed in each zone",
			gateways: []*gwv1.Gateway{testutil.Gateway("default", "gw", ip, testutil.HTTPListener("web", "*.example.org"))},
			route:    testutil.NewRoute("HTTPRoute", nil, ref).Annotated("coredns.io/hostname", "alias"),
			want:     []string{"*.example.org. 60 IN A 192.0.2.1", "alias.example.org. 60 IN A 192.0.2.1"},
		},
		{
			name:     "hostname annotation, no listener admits the route",
			gateways: []*gwv1.Gateway{testutil.Gateway("default", "gw", ip, testutil.AllowKinds(web, "GRPCRoute"))},
			route:    testutil.NewRoute("HTTPRoute", nil, ref).Annotated("coredns.io/hostname", "alias.example.com"),
		},
		{
			name: "multiple parents with different addresses: union",
			gateways: []*gwv1.Gateway{
				testutil.Gateway("default", "a", []string{"192.0.2.1"}, web),
				testutil.Gateway("default", "b", []string{"192.0.2.2", "2001:db8::2"}, web),
			},
			route: testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, testutil.Ref("a"), testutil.Ref("b")),
			want: []string{
				"www.example.com. 60 IN A 192.0.2.1",
				"www.example.com. 60 IN A 192.0.2.2",
				"www.example.com. 60 IN AAAA 2001:db8::2",
			},
		},
		{
			name: "multiple parents, each with its own listener hostname",
			gateways: []*gwv1.Gateway{
				testutil.Gateway("default", "a", []string{"192.0.2.1"}, testutil.HTTPListener("web", "*.a.example.com")),
				testutil.Gateway("default", "b", []string{"192.0.2.2"}, testutil.HTTPListener("web", "*.b.example.com")),
			},
			route: testutil.NewRoute("HTTPRoute", []string{"x.a.example.com", "x.b.example.com"}, testutil.Ref("a"), testutil.Ref("b")),
			want: []string{
				"x.a.example.com. 60 IN A 192.0.2.1",
				"x.b.example.com. 60 IN A 192.0.2.2",
			},
		},
		{
			name: "multiple parents with the same address: no duplicates",
			gateways: []*gwv1.Gateway{
				testutil.Gateway("default", "a", []string{"192.0.2.1"}, web),
				testutil.Gateway("default", "b", []string{"192.0.2.1"}, web),
			},
			route: testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, testutil.Ref("a"), testutil.Ref("b")),
			want:  []string{"www.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name: "two listeners of one Gateway by sectionName: no duplicates",
			gateways: []*gwv1.Gateway{testutil.Gateway("default", "gw", ip,
				testutil.HTTPListener("http", ""), testutil.Listener("https", gwv1.HTTPSProtocolType, 443, ""))},
			route: testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, testutil.RefSection(ref, "http"), testutil.RefSection(ref, "https")).
				Annotated("coredns.io/hostname", "alias.example.com"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1", "alias.example.com. 60 IN A 192.0.2.1"},
		},
		{
			// A name cannot be a CNAME and have addresses: the addresses win,
			// as they do for one Gateway that reports both kinds.
			name: "multiple parents, a hostname and an IP address",
			gateways: []*gwv1.Gateway{
				testutil.Gateway("default", "a", []string{"lb.example.net"}, web),
				testutil.Gateway("default", "b", []string{"192.0.2.2"}, web),
			},
			route: testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, testutil.Ref("a"), testutil.Ref("b")),
			want:  []string{"www.example.com. 60 IN A 192.0.2.2"},
		},
		{
			// One CNAME per name: the first parent's, with one warning for all names.
			name: "multiple parents with different hostname addresses",
			gateways: []*gwv1.Gateway{
				testutil.Gateway("default", "a", []string{"lb-a.example.net"}, web),
				testutil.Gateway("default", "b", []string{"lb-b.example.net"}, web),
			},
			route: testutil.NewRoute("HTTPRoute", []string{"www.example.com", "api.example.com"}, testutil.Ref("a"), testutil.Ref("b")),
			want: []string{
				"www.example.com. 60 IN CNAME lb-a.example.net.",
				"api.example.com. 60 IN CNAME lb-a.example.net.",
			},
			warn: []string{"several target hostnames lb-a.example.net.,lb-b.example.net."},
		},
		{
			name: "multiple parents, one accepted",
			gateways: []*gwv1.Gateway{
				testutil.Gateway("default", "a", []string{"192.0.2.1"}, web),
				testutil.Gateway("default", "b", []string{"192.0.2.2"}, web),
			},
			route: testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, testutil.Ref("a"), testutil.Ref("b")).
				WithParents(testutil.Parent(testutil.Ref("a"), metav1.ConditionFalse), testutil.Parent(testutil.Ref("b"), metav1.ConditionTrue)),
			want: []string{"www.example.com. 60 IN A 192.0.2.2"},
		},
		{
			// Regression: the original plugin carried the namespace of one
			// parentRef over to the next one without a namespace.
			name: "parentRef namespace defaults to the route's, for each ref on its own",
			gateways: []*gwv1.Gateway{
				testutil.Gateway("infra", "shared", []string{"192.0.2.10"}, testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromAll, nil)),
				testutil.Gateway("default", "local", []string{"192.0.2.20"}, web),
				// Found only when the first ref's namespace leaks into the second.
				testutil.Gateway("infra", "local", []string{"192.0.2.99"}, testutil.AllowFrom(testutil.HTTPListener("web", ""), gwv1.NamespacesFromAll, nil)),
			},
			route: testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, testutil.RefNS(testutil.Ref("shared"), "infra"), testutil.Ref("local")).
				WithParents(
					testutil.Parent(testutil.RefNS(testutil.Ref("shared"), "infra"), metav1.ConditionTrue),
					testutil.Parent(testutil.Ref("local"), metav1.ConditionTrue),
					testutil.Parent(testutil.RefNS(testutil.Ref("local"), "infra"), metav1.ConditionTrue),
				),
			want: []string{
				"www.example.com. 60 IN A 192.0.2.10",
				"www.example.com. 60 IN A 192.0.2.20",
			},
		},
	})
}

// TestRouteGateways: the Gateway index of the route informers resolves each
// parentRef's namespace on its own, as routeRecords does.
func TestRouteGateways(t *testing.T) {
	r := testutil.NewRoute("HTTPRoute", nil,
		testutil.RefNS(testutil.Ref("shared"), "infra"), testutil.Ref("local"), testutil.RefGK(testutil.Ref("mesh"), "", "Service"),
		testutil.RefSection(testutil.RefNS(testutil.Ref("local"), ""), "web")).InNS("apps")
	got := routeGateways(gwtConvert(t, r.Object()))
	want := []string{"infra/shared", "apps/local", "apps/local"}
	if !slices.Equal(got, want) {
		t.Errorf("routeGateways = %q, want %q", got, want)
	}
}

// TestRouteRecordsTCPUDPNames: TCPRoute and UDPRoute names follow one rule:
// the hostname of a listener that matches hostnames, and the hostname
// annotations narrowed by it; TCP and UDP listeners' hostnames are ignored.
func TestRouteRecordsTCPUDPNames(t *testing.T) {
	ip := []string{"192.0.2.1"}
	gw := func(l gwv1.Listener) []*gwv1.Gateway {
		return []*gwv1.Gateway{testutil.Gateway("default", "gw", ip, l)}
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
			name: "TCPRoute on a TLS listener takes its hostname", gateways: gw(testutil.Listener("tls", gwv1.TLSProtocolType, 443, "db.example.com")),
			route: testutil.NewRoute("TCPRoute", nil, testutil.Ref("gw")),
			want:  a("db.example.com."),
		},
		{
			name: "TCPRoute annotation narrowed by a TLS listener", gateways: gw(testutil.Listener("tls", gwv1.TLSProtocolType, 443, "*.db.example.com")),
			route: testutil.NewRoute("TCPRoute", nil, testutil.Ref("gw")).Annotated("coredns.io/hostname", "a.db.example.com,b.example.com"),
			want:  a("*.db.example.com.", "a.db.example.com."),
		},
		{
			name: "TCPRoute on a TCP listener: its hostname is ignored", gateways: gw(testutil.Listener("tcp", gwv1.TCPProtocolType, 5432, "db.example.com")),
			route: testutil.NewRoute("TCPRoute", nil, testutil.Ref("gw")).Annotated("coredns.io/hostname", "pg.example.com"),
			want:  a("pg.example.com."),
		},
		{
			name: "TCPRoute on a TCP listener without annotation", gateways: gw(testutil.Listener("tcp", gwv1.TCPProtocolType, 5432, "db.example.com")),
			route: testutil.NewRoute("TCPRoute", nil, testutil.Ref("gw")),
		},
		{
			name: "UDPRoute on a UDP listener: its hostname is ignored", gateways: gw(testutil.Listener("udp", gwv1.UDPProtocolType, 53, "dns.example.com")),
			route: testutil.NewRoute("UDPRoute", nil, testutil.Ref("gw")).Annotated("coredns.io/hostname", "resolver.example.com"),
			want:  a("resolver.example.com."),
		},
	})
}

// TestSlimRouteOlderVersions: routes read at older versions become routes
// as v1 ones do, with what the sources read.
func TestSlimRouteOlderVersions(t *testing.T) {
	refs := []gwv1.ParentReference{testutil.Ref("gw")}
	parents := []gwv1.RouteParentStatus{testutil.Parent(refs[0], metav1.ConditionTrue)}
	meta := metav1.ObjectMeta{Name: "r", Namespace: "default", Annotations: map[string]string{"coredns.io/hostname": "db"}}
	hosts := []gwv1.Hostname{"db.example.com"}
	for _, obj := range []any{
		&gwv1a2.TCPRoute{ObjectMeta: meta, Spec: gwv1a2.TCPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: refs}},
			Status: gwv1a2.TCPRouteStatus{RouteStatus: gwv1.RouteStatus{Parents: parents}}},
		&gwv1a2.UDPRoute{ObjectMeta: meta, Spec: gwv1a2.UDPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: refs}},
			Status: gwv1a2.UDPRouteStatus{RouteStatus: gwv1.RouteStatus{Parents: parents}}},
		&gwv1a2.TLSRoute{ObjectMeta: meta, Spec: gwv1a2.TLSRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: refs}, Hostnames: hosts},
			Status: gwv1a2.TLSRouteStatus{RouteStatus: gwv1.RouteStatus{Parents: parents}}},
		&gwv1a3.TLSRoute{ObjectMeta: meta, Spec: gwv1.TLSRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: refs}, Hostnames: hosts},
			Status: gwv1.TLSRouteStatus{RouteStatus: gwv1.RouteStatus{Parents: parents}}},
		&gwv1a2.GRPCRoute{ObjectMeta: meta, Spec: gwv1.GRPCRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: refs}, Hostnames: hosts},
			Status: gwv1.GRPCRouteStatus{RouteStatus: gwv1.RouteStatus{Parents: parents}}},
	} {
		slim, err := slimRoute(obj)
		if err != nil {
			t.Fatal(err)
		}
		rt, ok := slim.(*route)
		if !ok {
			t.Fatalf("%T: slimRoute kept the API type", obj)
		}
		if len(rt.parentRefs) != 1 || !slices.Equal(rt.accepted, []bool{true}) || !annotated(rt, "coredns.io/hostname", "db") ||
			(rt.kind == "TLSRoute" || rt.kind == "GRPCRoute") && len(rt.hostnames) != 1 {
			t.Errorf("%T: slim route lost fields: %+v", obj, rt)
		}
	}
}

// annotated reports whether m has the annotation key with value v.
func annotated(m sourceMeta, key, v string) bool {
	got, ok := m.annotation(key)
	return ok && got == v
}
