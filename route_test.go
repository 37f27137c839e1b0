package gateway

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Hostnames and addresses: listener intersection, inheritance, zones, address types.
func TestRouteRecordsHostnames(t *testing.T) {
	ip := []string{"192.0.2.1"}
	gw := func(ls ...gwv1.Listener) []*gwv1.Gateway {
		return []*gwv1.Gateway{gwtGateway("default", "gw", ip, ls...)}
	}
	http := func(hosts ...string) gwtR { return gwtRoute("HTTPRoute", hosts, gwtRef("gw")) }
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
			gateways: gw(gwtHTTP("http", "")),
			route:    http("www.example.com", "api.example.com"),
			want:     a("www.example.com.", "api.example.com."),
		},
		{
			name:     "hostnames are lower-cased",
			gateways: gw(gwtHTTP("http", "")),
			route:    http("WWW.Example.COM"),
			want:     a("www.example.com."),
		},
		{
			name:     "wildcard listener admits a name below it",
			gateways: gw(gwtHTTP("http", "*.example.com")),
			route:    http("foo.example.com"),
			want:     a("foo.example.com."),
		},
		{
			name:     "wildcard listener admits a name several labels below it",
			gateways: gw(gwtHTTP("http", "*.example.com")),
			route:    http("a.b.example.com"),
			want:     a("a.b.example.com."),
		},
		{
			name:     "wildcard listener does not admit its own suffix",
			gateways: gw(gwtHTTP("http", "*.example.com")),
			route:    http("example.com"),
		},
		{
			name:     "wildcard route narrowed to a specific listener",
			gateways: gw(gwtHTTP("http", "foo.example.com")),
			route:    http("*.example.com"),
			want:     a("foo.example.com."),
		},
		{
			name:     "wildcard route narrowed to a narrower wildcard listener",
			gateways: gw(gwtHTTP("http", "*.a.example.com")),
			route:    http("*.example.com"),
			want:     a("*.a.example.com."),
		},
		{
			name:     "narrower wildcard route inside a wildcard listener",
			gateways: gw(gwtHTTP("http", "*.example.com")),
			route:    http("*.a.example.com"),
			want:     a("*.a.example.com."),
		},
		{
			name:     "equal wildcards",
			gateways: gw(gwtHTTP("http", "*.example.com")),
			route:    http("*.example.com"),
			want:     a("*.example.com."),
		},
		{
			name:     "equal names, different case",
			gateways: gw(gwtHTTP("http", "WWW.example.com")),
			route:    http("www.EXAMPLE.com"),
			want:     a("www.example.com."),
		},
		{
			name:     "no overlap publishes nothing",
			gateways: gw(gwtHTTP("http", "foo.example.com")),
			route:    http("bar.example.com", "*.example.org"),
		},
		{
			name:     "no overlap between wildcards of different suffixes",
			gateways: gw(gwtHTTP("http", "*.a.example.com")),
			route:    http("*.b.example.com"),
		},
		{
			name:     "suffix match is by label, not by string",
			gateways: gw(gwtHTTP("http", "*.example.com")),
			route:    http("fooexample.com", "x.notexample.com"),
		},
		{
			name:     "only the hostnames inside the listener's are kept",
			gateways: gw(gwtHTTP("http", "*.example.com")),
			route:    http("www.example.com", "www.example.org"),
			want:     a("www.example.com."),
		},
		{
			name:     "route without hostnames inherits the listener hostname",
			gateways: gw(gwtHTTP("http", "app.example.com")),
			route:    http(),
			want:     a("app.example.com."),
		},
		{
			name:     "route without hostnames inherits a wildcard listener hostname",
			gateways: gw(gwtHTTP("http", "*.apps.example.com")),
			route:    http(),
			want:     a("*.apps.example.com."),
		},
		{
			name:     "route without hostnames inherits from every listener; none from one without hostname",
			gateways: gw(gwtHTTP("a", "a.example.com"), gwtHTTP("b", "b.example.com"), gwtHTTP("c", "")),
			route:    http(),
			want:     a("a.example.com.", "b.example.com."),
		},
		{
			name:     "route and listener without hostnames publish nothing",
			gateways: gw(gwtHTTP("http", "")),
			route:    http(),
		},
		{
			name:     "each listener intersected on its own, names deduplicated",
			gateways: gw(gwtHTTP("a", "*.example.com"), gwtHTTP("b", "www.example.com"), gwtHTTP("c", "*.example.org")),
			route:    http("www.example.com", "api.example.org"),
			want:     a("www.example.com.", "api.example.org."),
		},
		{
			name:     "hostname outside the zones is skipped with a warning",
			gateways: gw(gwtHTTP("http", "")),
			route:    http("www.example.com", "www.example.net"),
			want:     a("www.example.com."),
			warn:     []string{`"www.example.net" in hostname is outside the zones`},
		},
		{
			name:     "inherited listener hostname outside the zones warns",
			gateways: gw(gwtHTTP("http", "app.example.net")),
			route:    http(),
			warn:     []string{"outside the zones"},
		},
		{
			name:     "IPv4 and IPv6 addresses, typed and untyped",
			gateways: []*gwv1.Gateway{gwtGateway("default", "gw", []string{"192.0.2.1", "untyped:2001:db8::1", "untyped:192.0.2.2"}, gwtHTTP("http", ""))},
			route:    http("www.example.com"),
			want: []string{
				"www.example.com. 60 IN A 192.0.2.1",
				"www.example.com. 60 IN A 192.0.2.2",
				"www.example.com. 60 IN AAAA 2001:db8::1",
			},
		},
		{
			name:     "Hostname address is a CNAME",
			gateways: []*gwv1.Gateway{gwtGateway("default", "gw", []string{"lb-1.elb.example.net"}, gwtHTTP("http", ""))},
			route:    http("www.example.com"),
			want:     []string{"www.example.com. 60 IN CNAME lb-1.elb.example.net."},
		},
		{
			name:     "invalid IP address warns, the others are published",
			gateways: []*gwv1.Gateway{gwtGateway("default", "gw", []string{"192.0.2.300", "192.0.2.1"}, gwtHTTP("http", ""))},
			route:    http("www.example.com"),
			want:     a("www.example.com."),
			warn:     []string{`invalid IP "192.0.2.300" in status.addresses`},
		},
		{
			name: "address of an implementation-specific type is not used",
			gateways: func() []*gwv1.Gateway {
				g := gwtGateway("default", "gw", ip, gwtHTTP("http", ""))
				typ := gwv1.AddressType("example.com/named")
				g.Status.Addresses = append(g.Status.Addresses, gwv1.GatewayStatusAddress{Type: &typ, Value: "pool-1"})
				return []*gwv1.Gateway{g}
			}(),
			route: http("www.example.com"),
			want:  a("www.example.com."),
		},
		{
			name:     "Gateway without addresses publishes nothing",
			gateways: []*gwv1.Gateway{gwtGateway("default", "gw", nil, gwtHTTP("http", ""))},
			route:    http("www.example.com"),
		},
		{
			name: "target annotation on the Gateway overrides its addresses",
			gateways: []*gwv1.Gateway{gwtGatewayAnnotated(gwtGateway("default", "gw", ip, gwtHTTP("http", "")),
				"external-dns.alpha.kubernetes.io/target", "198.51.100.7, 2001:db8::7")},
			route: http("www.example.com"),
			want: []string{
				"www.example.com. 60 IN A 198.51.100.7",
				"www.example.com. 60 IN AAAA 2001:db8::7",
			},
		},
		{
			name: "non-alpha target annotation, a hostname",
			gateways: []*gwv1.Gateway{gwtGatewayAnnotated(gwtGateway("default", "gw", ip, gwtHTTP("http", "")),
				"external-dns.kubernetes.io/target", "edge.example.net")},
			route: http("www.example.com"),
			want:  []string{"www.example.com. 60 IN CNAME edge.example.net."},
		},
		{
			name:     "target annotation on the route is not read",
			gateways: gw(gwtHTTP("http", "")),
			route:    http("www.example.com").annotated("external-dns.alpha.kubernetes.io/target", "198.51.100.9"),
			want:     a("www.example.com."),
		},
	})
}

// Which parentRefs and listeners a route publishes through.
func TestRouteRecordsParents(t *testing.T) {
	ip := []string{"192.0.2.1"}
	aRec := []string{"www.example.com. 60 IN A 192.0.2.1"}
	two := func() []*gwv1.Gateway {
		return []*gwv1.Gateway{gwtGateway("default", "gw", ip,
			gwtHTTP("web", "www.example.com"),
			gwtListener("alt", gwv1.HTTPProtocolType, 8080, "alt.example.com"),
		)}
	}
	gwRoute := func(refs ...gwv1.ParentReference) gwtR { return gwtRoute("HTTPRoute", nil, refs...) }
	gwtRun(t, []gwtCase{
		{
			name:     "no sectionName or port: every listener",
			gateways: two(),
			route:    gwRoute(gwtRef("gw")),
			want:     []string{"www.example.com. 60 IN A 192.0.2.1", "alt.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "sectionName selects its listener",
			gateways: two(),
			route:    gwRoute(gwtRefSection(gwtRef("gw"), "web")),
			want:     aRec,
		},
		{
			name:     "sectionName naming no listener",
			gateways: two(),
			route:    gwRoute(gwtRefSection(gwtRef("gw"), "missing")),
		},
		{
			name: "sectionName selects a listener whose hostname does not match",
			gateways: []*gwv1.Gateway{gwtGateway("default", "gw", ip,
				gwtHTTP("web", "www.example.com"), gwtHTTP("other", "*.example.com"))},
			route: gwtRoute("HTTPRoute", []string{"api.example.com"}, gwtRefSection(gwtRef("gw"), "web")),
		},
		{
			name:     "port selects its listener",
			gateways: two(),
			route:    gwRoute(gwtRefPort(gwtRef("gw"), 8080)),
			want:     []string{"alt.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "port of no listener",
			gateways: two(),
			route:    gwRoute(gwtRefPort(gwtRef("gw"), 443)),
		},
		{
			name:     "sectionName and port both match",
			gateways: two(),
			route:    gwRoute(gwtRefPort(gwtRefSection(gwtRef("gw"), "alt"), 8080)),
			want:     []string{"alt.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "sectionName matches, port does not",
			gateways: two(),
			route:    gwRoute(gwtRefPort(gwtRefSection(gwtRef("gw"), "web"), 8080)),
		},
		{
			name:     "explicit group and kind Gateway",
			gateways: two(),
			route:    gwRoute(gwtRefSection(gwtRefGK(gwtRef("gw"), gwv1.GroupName, "Gateway"), "web")),
			want:     aRec,
		},
		{
			name:     "parent of another group",
			gateways: two(),
			route:    gwRoute(gwtRefGK(gwtRef("gw"), "example.com", "Gateway")),
		},
		{
			name:     "parent of another kind",
			gateways: two(),
			route:    gwRoute(gwtRefGK(gwtRef("gw"), gwv1.GroupName, "ListenerSet")),
		},
		{
			// GAMMA: a Service as parent has no external address, even when a
			// Gateway of the same name exists.
			name:     "Service parentRef (GAMMA) ignored",
			gateways: two(),
			route:    gwRoute(gwtRefPort(gwtRefGK(gwtRef("gw"), "", "Service"), 80)),
		},
		{
			name:     "Service parentRef next to a Gateway parentRef",
			gateways: two(),
			route:    gwRoute(gwtRefGK(gwtRef("gw"), "", "Service"), gwtRefSection(gwtRef("gw"), "web")),
			want:     aRec,
		},
		{
			name:     "Gateway does not exist",
			gateways: two(),
			route:    gwRoute(gwtRef("nope")),
		},
		{
			name:     "Gateway in another namespace than the route's, no namespace in the ref",
			gateways: []*gwv1.Gateway{gwtGateway("infra", "gw", ip, gwtFrom(gwtHTTP("web", "www.example.com"), gwv1.NamespacesFromAll, nil))},
			route:    gwRoute(gwtRef("gw")),
		},
		{
			name:     "class filter admits the Gateway's class",
			cfg:      func(c *sourceConfig) { c.gatewayClasses = []string{"internal", "public"} },
			gateways: two(),
			route:    gwRoute(gwtRefSection(gwtRef("gw"), "web")),
			want:     aRec,
		},
		{
			name:     "class filter excludes the Gateway's class",
			cfg:      func(c *sourceConfig) { c.gatewayClasses = []string{"internal"} },
			gateways: two(),
			route:    gwRoute(gwtRefSection(gwtRef("gw"), "web")),
		},
		{
			name: "class filter with two Gateways: only the admitted class publishes",
			cfg:  func(c *sourceConfig) { c.gatewayClasses = []string{"internal"} },
			gateways: []*gwv1.Gateway{
				gwtGateway("default", "public", []string{"192.0.2.1"}, gwtHTTP("web", "")),
				gwtWithClass(gwtGateway("default", "private", []string{"10.0.0.1"}, gwtHTTP("web", "")), "internal"),
			},
			route: gwtRoute("HTTPRoute", []string{"www.example.com"}, gwtRef("public"), gwtRef("private")),
			want:  []string{"www.example.com. 60 IN A 10.0.0.1"},
		},
	})
}

// The route's status must say that the parent accepted it.
func TestRouteRecordsAccepted(t *testing.T) {
	ip := []string{"192.0.2.1"}
	gws := []*gwv1.Gateway{
		gwtGateway("default", "gw", ip, gwtHTTP("web", ""), gwtListener("alt", gwv1.HTTPProtocolType, 8080, "")),
		gwtGateway("infra", "gw", []string{"192.0.2.99"}, gwtFrom(gwtHTTP("web", ""), gwv1.NamespacesFromAll, nil)),
	}
	hosts := []string{"www.example.com"}
	aRec := []string{"www.example.com. 60 IN A 192.0.2.1"}
	ref, web := gwtRef("gw"), gwtRefSection(gwtRef("gw"), "web")
	gwtRun(t, []gwtCase{
		{
			name:     "Accepted=True",
			gateways: gws,
			route:    gwtRoute("HTTPRoute", hosts, ref),
			want:     aRec,
		},
		{
			name:     "Accepted=False",
			gateways: gws,
			route:    gwtRoute("HTTPRoute", hosts, ref).withParents(gwtParent(ref, metav1.ConditionFalse)),
		},
		{
			name:     "Accepted=Unknown",
			gateways: gws,
			route:    gwtRoute("HTTPRoute", hosts, ref).withParents(gwtParent(ref, metav1.ConditionUnknown)),
		},
		{
			name:     "no Accepted condition",
			gateways: gws,
			route:    gwtRoute("HTTPRoute", hosts, ref).withParents(gwtParent(ref, "")),
		},
		{
			name:     "no status at all",
			gateways: gws,
			route:    gwtRoute("HTTPRoute", hosts, ref).withoutStatus(),
		},
		{
			name:     "status for another Gateway",
			gateways: gws,
			route:    gwtRoute("HTTPRoute", hosts, ref).withParents(gwtParent(gwtRef("other"), metav1.ConditionTrue)),
		},
		{
			name:     "status for the same name in another namespace",
			gateways: gws,
			route:    gwtRoute("HTTPRoute", hosts, ref).withParents(gwtParent(gwtRefNS(ref, "infra"), metav1.ConditionTrue)),
		},
		{
			name:     "status for another sectionName",
			gateways: gws,
			route:    gwtRoute("HTTPRoute", hosts, web).withParents(gwtParent(gwtRefSection(ref, "alt"), metav1.ConditionTrue)),
		},
		{
			name:     "status without the sectionName of the spec",
			gateways: gws,
			route:    gwtRoute("HTTPRoute", hosts, web).withParents(gwtParent(ref, metav1.ConditionTrue)),
		},
		{
			name:     "status for another port",
			gateways: gws,
			route:    gwtRoute("HTTPRoute", hosts, gwtRefPort(ref, 80)).withParents(gwtParent(gwtRefPort(ref, 8080), metav1.ConditionTrue)),
		},
		{
			name:     "status for a Service parent of the same name",
			gateways: gws,
			route:    gwtRoute("HTTPRoute", hosts, ref).withParents(gwtParent(gwtRefGK(ref, "", "Service"), metav1.ConditionTrue)),
		},
		{
			// Controllers write the parentRef with defaults filled in.
			name:     "status with explicit namespace, group and kind matches a spec ref without them",
			gateways: gws,
			route: gwtRoute("HTTPRoute", hosts, web).withParents(
				gwtParent(gwtRefSection(gwtRefGK(gwtRefNS(gwtRef("gw"), "default"), gwv1.GroupName, "Gateway"), "web"), metav1.ConditionTrue)),
			want: aRec,
		},
		{
			name:     "status without namespace matches a spec ref naming the route's namespace",
			gateways: gws,
			route:    gwtRoute("HTTPRoute", hosts, gwtRefNS(web, "default")).withParents(gwtParent(web, metav1.ConditionTrue)),
			want:     aRec,
		},
		{
			name:     "accepted by one of two parents",
			gateways: gws,
			route: gwtRoute("HTTPRoute", hosts, ref, gwtRefNS(ref, "infra")).withParents(
				gwtParent(ref, metav1.ConditionTrue), gwtParent(gwtRefNS(ref, "infra"), metav1.ConditionFalse)),
			want: aRec,
		},
		{
			name:     "accepted by one listener of a Gateway, refused by the other",
			gateways: gws,
			route: gwtRoute("HTTPRoute", hosts, web, gwtRefSection(ref, "alt")).withParents(
				gwtParent(web, metav1.ConditionTrue), gwtParent(gwtRefSection(ref, "alt"), metav1.ConditionFalse)),
			want: aRec,
		},
	})
}

// allowedRoutes: namespaces and kinds.
func TestRouteRecordsListenerAllowedRoutes(t *testing.T) {
	ip := []string{"192.0.2.1"}
	in := func(ls ...gwv1.Listener) []*gwv1.Gateway {
		return []*gwv1.Gateway{gwtGateway("infra", "gw", ip, ls...)}
	}
	sel := func(kv ...string) *metav1.LabelSelector {
		s := &metav1.LabelSelector{MatchLabels: map[string]string{}}
		for i := 0; i+1 < len(kv); i += 2 {
			s.MatchLabels[kv[i]] = kv[i+1]
		}
		return s
	}
	teams := map[string]map[string]string{"apps": {"expose": "true", "team": "a"}, "other": {"team": "b"}}
	ref := gwtRefNS(gwtRef("gw"), "infra")
	route := func(ns string) gwtR { return gwtRoute("HTTPRoute", []string{"www.example.com"}, ref).inNS(ns) }
	kindRoute := func(kind string) gwtR {
		return gwtRoute(kind, []string{"www.example.com"}, ref).inNS("infra").annotated("coredns.io/hostname", "svc.example.com")
	}
	aRec := []string{"www.example.com. 60 IN A 192.0.2.1"}
	// Routes without hostnames (TCPRoute, UDPRoute) publish the annotation only.
	kindRecs := []string{"www.example.com. 60 IN A 192.0.2.1", "svc.example.com. 60 IN A 192.0.2.1"}
	annRecs := []string{"svc.example.com. 60 IN A 192.0.2.1"}
	gwtRun(t, []gwtCase{
		{name: "Same (default), same namespace", gateways: in(gwtHTTP("web", "")), route: route("infra"), want: aRec},
		{name: "Same (default), other namespace", gateways: in(gwtHTTP("web", "")), route: route("apps"), ns: teams},
		{name: "Same (explicit), other namespace", gateways: in(gwtFrom(gwtHTTP("web", ""), gwv1.NamespacesFromSame, nil)), route: route("apps"), ns: teams},
		{name: "All, other namespace", gateways: in(gwtFrom(gwtHTTP("web", ""), gwv1.NamespacesFromAll, nil)), route: route("apps"), ns: teams, want: aRec},
		{name: "All, namespace not in the cache", gateways: in(gwtFrom(gwtHTTP("web", ""), gwv1.NamespacesFromAll, nil)), route: route("unknown"), want: aRec},
		{name: "None", gateways: in(gwtFrom(gwtHTTP("web", ""), gwv1.NamespacesFromNone, nil)), route: route("infra")},
		{name: "Selector matches", gateways: in(gwtFrom(gwtHTTP("web", ""), gwv1.NamespacesFromSelector, sel("expose", "true"))), route: route("apps"), ns: teams, want: aRec},
		{name: "Selector does not match", gateways: in(gwtFrom(gwtHTTP("web", ""), gwv1.NamespacesFromSelector, sel("expose", "true"))), route: route("other"), ns: teams},
		{name: "Selector, namespace unknown", gateways: in(gwtFrom(gwtHTTP("web", ""), gwv1.NamespacesFromSelector, sel("expose", "true"))), route: route("unknown"), ns: teams},
		{name: "Selector does not admit the Gateway's own namespace by itself", gateways: in(gwtFrom(gwtHTTP("web", ""), gwv1.NamespacesFromSelector, sel("expose", "true"))), route: route("infra"), ns: teams},
		{
			name: "Selector with expressions",
			gateways: in(gwtFrom(gwtHTTP("web", ""), gwv1.NamespacesFromSelector, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "c"}},
			}})),
			route: route("apps"), ns: teams, want: aRec,
		},
		{
			name:     "Selector on the well-known namespace name label",
			gateways: in(gwtFrom(gwtHTTP("web", ""), gwv1.NamespacesFromSelector, sel("kubernetes.io/metadata.name", "default"))),
			route:    route("default"), want: aRec,
		},
		{name: "Selector that is not given admits nothing", gateways: in(gwtFrom(gwtHTTP("web", ""), gwv1.NamespacesFromSelector, nil)), route: route("apps"), ns: teams},
		{
			name: "invalid Selector admits nothing",
			gateways: in(gwtFrom(gwtHTTP("web", ""), gwv1.NamespacesFromSelector, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "team", Operator: "Near"},
			}})),
			route: route("apps"), ns: teams,
		},
		{
			name: "the listener that admits wins over one that does not",
			gateways: in(gwtFrom(gwtHTTP("closed", "*.example.com"), gwv1.NamespacesFromSame, nil),
				gwtFrom(gwtHTTP("open", "www.example.com"), gwv1.NamespacesFromAll, nil)),
			route: route("apps"), ns: teams, want: aRec,
		},
		// Kinds.
		{name: "explicit kinds include the route's", gateways: in(gwtKinds(gwtHTTP("web", ""), "GRPCRoute", "HTTPRoute")), route: route("infra"), want: aRec},
		{name: "explicit kinds with the Gateway API group", gateways: in(gwtKinds(gwtHTTP("web", ""), gwv1.GroupName+"/HTTPRoute")), route: route("infra"), want: aRec},
		{name: "explicit kinds exclude the route's", gateways: in(gwtKinds(gwtHTTP("web", ""), "GRPCRoute")), route: route("infra")},
		{name: "explicit kind of another group", gateways: in(gwtKinds(gwtHTTP("web", ""), "example.com/HTTPRoute")), route: route("infra")},
		{name: "explicit kinds, route not admitted by namespace", gateways: in(gwtKinds(gwtHTTP("web", ""), "HTTPRoute")), route: route("apps"), ns: teams},
		{name: "HTTP admits HTTPRoute", gateways: in(gwtHTTP("web", "")), route: kindRoute("HTTPRoute"), want: kindRecs},
		{name: "HTTP admits GRPCRoute", gateways: in(gwtHTTP("web", "")), route: kindRoute("GRPCRoute"), want: kindRecs},
		{name: "HTTPS admits GRPCRoute", gateways: in(gwtListener("web", gwv1.HTTPSProtocolType, 443, "")), route: kindRoute("GRPCRoute"), want: kindRecs},
		{name: "HTTP does not admit TLSRoute", gateways: in(gwtHTTP("web", "")), route: kindRoute("TLSRoute")},
		{name: "HTTPS does not admit TCPRoute", gateways: in(gwtListener("web", gwv1.HTTPSProtocolType, 443, "")), route: kindRoute("TCPRoute")},
		{name: "TLS admits TLSRoute", gateways: in(gwtListener("web", gwv1.TLSProtocolType, 443, "")), route: kindRoute("TLSRoute"), want: kindRecs},
		{name: "TLS admits TCPRoute", gateways: in(gwtListener("web", gwv1.TLSProtocolType, 443, "")), route: kindRoute("TCPRoute"), want: annRecs},
		{name: "TLS does not admit HTTPRoute", gateways: in(gwtListener("web", gwv1.TLSProtocolType, 443, "")), route: kindRoute("HTTPRoute")},
		{name: "TCP admits TCPRoute", gateways: in(gwtListener("db", gwv1.TCPProtocolType, 5432, "")), route: kindRoute("TCPRoute"), want: annRecs},
		{name: "TCP does not admit UDPRoute", gateways: in(gwtListener("db", gwv1.TCPProtocolType, 5432, "")), route: kindRoute("UDPRoute")},
		{name: "TCP does not admit TLSRoute", gateways: in(gwtListener("db", gwv1.TCPProtocolType, 5432, "")), route: kindRoute("TLSRoute")},
		{name: "UDP admits UDPRoute", gateways: in(gwtListener("dns", gwv1.UDPProtocolType, 53, "")), route: kindRoute("UDPRoute"), want: annRecs},
		{name: "UDP does not admit TCPRoute", gateways: in(gwtListener("dns", gwv1.UDPProtocolType, 53, "")), route: kindRoute("TCPRoute")},
		{name: "explicit kinds override the protocol's", gateways: in(gwtKinds(gwtListener("dns", gwv1.UDPProtocolType, 53, ""), "TCPRoute")), route: kindRoute("TCPRoute"), want: annRecs},
		{name: "empty kinds list means the protocol's", gateways: in(gwtKinds(gwtListener("db", gwv1.TCPProtocolType, 5432, ""))), route: kindRoute("TCPRoute"), want: annRecs},
	})
}

// Annotations and labels on the route, multiple parents.
func TestRouteRecordsAnnotationsAndParents(t *testing.T) {
	ip := []string{"192.0.2.1"}
	web := gwtHTTP("web", "")
	one := []*gwv1.Gateway{gwtGateway("default", "gw", ip, web, gwtListener("db", gwv1.TCPProtocolType, 5432, ""))}
	ref := gwtRef("gw")
	gwtRun(t, []gwtCase{
		{
			name:     "ignore label",
			gateways: one,
			route:    gwtRoute("HTTPRoute", []string{"www.example.com"}, ref).labeled(ignoreLabel, "true"),
		},
		{
			name:     "ignore label, any case",
			gateways: one,
			route:    gwtRoute("HTTPRoute", []string{"www.example.com"}, ref).labeled(ignoreLabel, "True"),
		},
		{
			name:     "ignore label not true",
			gateways: one,
			route:    gwtRoute("HTTPRoute", []string{"www.example.com"}, ref).labeled(ignoreLabel, "false"),
			want:     []string{"www.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "TTL annotation",
			gateways: one,
			route:    gwtRoute("HTTPRoute", []string{"www.example.com"}, ref).annotated("external-dns.alpha.kubernetes.io/ttl", "300"),
			want:     []string{"www.example.com. 300 IN A 192.0.2.1"},
		},
		{
			name:     "non-alpha TTL annotation",
			gateways: one,
			route:    gwtRoute("HTTPRoute", []string{"www.example.com"}, ref).annotated("external-dns.kubernetes.io/ttl", "5"),
			want:     []string{"www.example.com. 5 IN A 192.0.2.1"},
		},
		{
			name:     "invalid TTL annotation warns and keeps the default",
			gateways: one,
			route:    gwtRoute("HTTPRoute", []string{"www.example.com"}, ref).annotated("external-dns.alpha.kubernetes.io/ttl", "soon"),
			want:     []string{"www.example.com. 60 IN A 192.0.2.1"},
			warn:     []string{`invalid TTL "soon"`},
		},
		{
			name:     "TCPRoute published through its hostname annotation only",
			gateways: one,
			route:    gwtRoute("TCPRoute", nil, gwtRefSection(ref, "db")).annotated("coredns.io/hostname", "db.example.com"),
			want:     []string{"db.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "TCPRoute without annotation publishes nothing",
			gateways: one,
			route:    gwtRoute("TCPRoute", nil, gwtRefSection(ref, "db")),
		},
		{
			name:     "TCPRoute: relative annotation names, every zone",
			gateways: one,
			route: gwtRoute("TCPRoute", nil, ref).annotated(
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
			route: gwtRoute("TCPRoute", nil, ref).annotated(
				"external-dns.alpha.kubernetes.io/hostname", "db",
				"external-dns.kubernetes.io/hostname", "pg.example.org.",
			),
			want: []string{"pg.example.org. 60 IN A 192.0.2.1"},
		},
		{
			name:     "TCPRoute annotation, listener does not admit TCPRoute",
			gateways: one,
			route:    gwtRoute("TCPRoute", nil, gwtRefSection(ref, "web")).annotated("coredns.io/hostname", "db.example.com"),
		},
		{
			name:     "TCPRoute annotation, not Accepted",
			gateways: one,
			route: gwtRoute("TCPRoute", nil, ref).annotated("coredns.io/hostname", "db.example.com").
				withParents(gwtParent(ref, metav1.ConditionFalse)),
		},
		{
			name:     "UDPRoute through its annotation, absolute name outside the zones warns",
			gateways: []*gwv1.Gateway{gwtGateway("default", "gw", ip, gwtListener("dns", gwv1.UDPProtocolType, 53, ""))},
			route:    gwtRoute("UDPRoute", nil, ref).annotated("coredns.io/hostname", "ns.example.com,ns.example.net."),
			want:     []string{"ns.example.com. 60 IN A 192.0.2.1"},
			warn:     []string{"outside the zones"},
		},
		{
			name:     "hostname annotation adds names to an HTTPRoute's",
			gateways: one,
			route:    gwtRoute("HTTPRoute", []string{"www.example.com"}, ref).annotated("coredns.io/hostname", "alias.example.com"),
			want:     []string{"www.example.com. 60 IN A 192.0.2.1", "alias.example.com. 60 IN A 192.0.2.1"},
		},
		{
			// As external-dns: the listener's hostname narrows the annotation's names too.
			name:     "hostname annotation outside the listener hostname",
			gateways: []*gwv1.Gateway{gwtGateway("default", "gw", ip, gwtHTTP("web", "*.apps.example.com"))},
			route:    gwtRoute("HTTPRoute", []string{"a.apps.example.com"}, ref).annotated("coredns.io/hostname", "short.example.com"),
			want:     []string{"a.apps.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "hostname annotation inside the listener hostname",
			gateways: []*gwv1.Gateway{gwtGateway("default", "gw", ip, gwtHTTP("web", "*.apps.example.com"))},
			route:    gwtRoute("HTTPRoute", []string{"a.apps.example.com"}, ref).annotated("coredns.io/hostname", "b.apps.example.com"),
			want:     []string{"a.apps.example.com. 60 IN A 192.0.2.1", "b.apps.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "wildcard hostname annotation narrowed to the listener hostname",
			gateways: []*gwv1.Gateway{gwtGateway("default", "gw", ip, gwtHTTP("web", "db.apps.example.com"))},
			route:    gwtRoute("HTTPRoute", []string{"db.apps.example.com"}, ref).annotated("coredns.io/hostname", "*.apps.example.com"),
			want:     []string{"db.apps.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name:     "relative hostname annotation narrowed in each zone",
			gateways: []*gwv1.Gateway{gwtGateway("default", "gw", ip, gwtHTTP("web", "*.example.org"))},
			route:    gwtRoute("HTTPRoute", nil, ref).annotated("coredns.io/hostname", "alias"),
			want:     []string{"*.example.org. 60 IN A 192.0.2.1", "alias.example.org. 60 IN A 192.0.2.1"},
		},
		{
			name:     "hostname annotation, no listener admits the route",
			gateways: []*gwv1.Gateway{gwtGateway("default", "gw", ip, gwtKinds(web, "GRPCRoute"))},
			route:    gwtRoute("HTTPRoute", nil, ref).annotated("coredns.io/hostname", "alias.example.com"),
		},
		{
			name: "multiple parents with different addresses: union",
			gateways: []*gwv1.Gateway{
				gwtGateway("default", "a", []string{"192.0.2.1"}, web),
				gwtGateway("default", "b", []string{"192.0.2.2", "2001:db8::2"}, web),
			},
			route: gwtRoute("HTTPRoute", []string{"www.example.com"}, gwtRef("a"), gwtRef("b")),
			want: []string{
				"www.example.com. 60 IN A 192.0.2.1",
				"www.example.com. 60 IN A 192.0.2.2",
				"www.example.com. 60 IN AAAA 2001:db8::2",
			},
		},
		{
			name: "multiple parents, each with its own listener hostname",
			gateways: []*gwv1.Gateway{
				gwtGateway("default", "a", []string{"192.0.2.1"}, gwtHTTP("web", "*.a.example.com")),
				gwtGateway("default", "b", []string{"192.0.2.2"}, gwtHTTP("web", "*.b.example.com")),
			},
			route: gwtRoute("HTTPRoute", []string{"x.a.example.com", "x.b.example.com"}, gwtRef("a"), gwtRef("b")),
			want: []string{
				"x.a.example.com. 60 IN A 192.0.2.1",
				"x.b.example.com. 60 IN A 192.0.2.2",
			},
		},
		{
			name: "multiple parents with the same address: no duplicates",
			gateways: []*gwv1.Gateway{
				gwtGateway("default", "a", []string{"192.0.2.1"}, web),
				gwtGateway("default", "b", []string{"192.0.2.1"}, web),
			},
			route: gwtRoute("HTTPRoute", []string{"www.example.com"}, gwtRef("a"), gwtRef("b")),
			want:  []string{"www.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name: "two listeners of one Gateway by sectionName: no duplicates",
			gateways: []*gwv1.Gateway{gwtGateway("default", "gw", ip,
				gwtHTTP("http", ""), gwtListener("https", gwv1.HTTPSProtocolType, 443, ""))},
			route: gwtRoute("HTTPRoute", []string{"www.example.com"}, gwtRefSection(ref, "http"), gwtRefSection(ref, "https")).
				annotated("coredns.io/hostname", "alias.example.com"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1", "alias.example.com. 60 IN A 192.0.2.1"},
		},
		{
			// A name cannot be a CNAME and have addresses: the addresses win,
			// as they do for one Gateway that reports both kinds.
			name: "multiple parents, a hostname and an IP address",
			gateways: []*gwv1.Gateway{
				gwtGateway("default", "a", []string{"lb.example.net"}, web),
				gwtGateway("default", "b", []string{"192.0.2.2"}, web),
			},
			route: gwtRoute("HTTPRoute", []string{"www.example.com"}, gwtRef("a"), gwtRef("b")),
			want:  []string{"www.example.com. 60 IN A 192.0.2.2"},
		},
		{
			// One CNAME per name: the first parent's, with one warning for all names.
			name: "multiple parents with different hostname addresses",
			gateways: []*gwv1.Gateway{
				gwtGateway("default", "a", []string{"lb-a.example.net"}, web),
				gwtGateway("default", "b", []string{"lb-b.example.net"}, web),
			},
			route: gwtRoute("HTTPRoute", []string{"www.example.com", "api.example.com"}, gwtRef("a"), gwtRef("b")),
			want: []string{
				"www.example.com. 60 IN CNAME lb-a.example.net.",
				"api.example.com. 60 IN CNAME lb-a.example.net.",
			},
			warn: []string{"several target hostnames lb-a.example.net.,lb-b.example.net."},
		},
		{
			name: "multiple parents, one accepted",
			gateways: []*gwv1.Gateway{
				gwtGateway("default", "a", []string{"192.0.2.1"}, web),
				gwtGateway("default", "b", []string{"192.0.2.2"}, web),
			},
			route: gwtRoute("HTTPRoute", []string{"www.example.com"}, gwtRef("a"), gwtRef("b")).
				withParents(gwtParent(gwtRef("a"), metav1.ConditionFalse), gwtParent(gwtRef("b"), metav1.ConditionTrue)),
			want: []string{"www.example.com. 60 IN A 192.0.2.2"},
		},
		{
			// Regression: the original plugin carried the namespace of one
			// parentRef over to the next one without a namespace.
			name: "parentRef namespace defaults to the route's, for each ref on its own",
			gateways: []*gwv1.Gateway{
				gwtGateway("infra", "shared", []string{"192.0.2.10"}, gwtFrom(gwtHTTP("web", ""), gwv1.NamespacesFromAll, nil)),
				gwtGateway("default", "local", []string{"192.0.2.20"}, web),
				// Found only when the first ref's namespace leaks into the second.
				gwtGateway("infra", "local", []string{"192.0.2.99"}, gwtFrom(gwtHTTP("web", ""), gwv1.NamespacesFromAll, nil)),
			},
			route: gwtRoute("HTTPRoute", []string{"www.example.com"}, gwtRefNS(gwtRef("shared"), "infra"), gwtRef("local")).
				withParents(
					gwtParent(gwtRefNS(gwtRef("shared"), "infra"), metav1.ConditionTrue),
					gwtParent(gwtRef("local"), metav1.ConditionTrue),
					gwtParent(gwtRefNS(gwtRef("local"), "infra"), metav1.ConditionTrue),
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
	r := gwtRoute("HTTPRoute", nil,
		gwtRefNS(gwtRef("shared"), "infra"), gwtRef("local"), gwtRefGK(gwtRef("mesh"), "", "Service"),
		gwtRefSection(gwtRefNS(gwtRef("local"), ""), "web")).inNS("apps")
	got := routeGateways(gwtConvert(t, r.object()))
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
	gw := func(l gwv1.Listener) []*gwv1.Gateway { return []*gwv1.Gateway{gwtGateway("default", "gw", ip, l)} }
	a := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, n+" 60 IN A 192.0.2.1")
		}
		return out
	}
	gwtRun(t, []gwtCase{
		{
			name: "TCPRoute on a TLS listener takes its hostname", gateways: gw(gwtListener("tls", gwv1.TLSProtocolType, 443, "db.example.com")),
			route: gwtRoute("TCPRoute", nil, gwtRef("gw")),
			want:  a("db.example.com."),
		},
		{
			name: "TCPRoute annotation narrowed by a TLS listener", gateways: gw(gwtListener("tls", gwv1.TLSProtocolType, 443, "*.db.example.com")),
			route: gwtRoute("TCPRoute", nil, gwtRef("gw")).annotated("coredns.io/hostname", "a.db.example.com,b.example.com"),
			want:  a("*.db.example.com.", "a.db.example.com."),
		},
		{
			name: "TCPRoute on a TCP listener: its hostname is ignored", gateways: gw(gwtListener("tcp", gwv1.TCPProtocolType, 5432, "db.example.com")),
			route: gwtRoute("TCPRoute", nil, gwtRef("gw")).annotated("coredns.io/hostname", "pg.example.com"),
			want:  a("pg.example.com."),
		},
		{
			name: "TCPRoute on a TCP listener without annotation", gateways: gw(gwtListener("tcp", gwv1.TCPProtocolType, 5432, "db.example.com")),
			route: gwtRoute("TCPRoute", nil, gwtRef("gw")),
		},
		{
			name: "UDPRoute on a UDP listener: its hostname is ignored", gateways: gw(gwtListener("udp", gwv1.UDPProtocolType, 53, "dns.example.com")),
			route: gwtRoute("UDPRoute", nil, gwtRef("gw")).annotated("coredns.io/hostname", "resolver.example.com"),
			want:  a("resolver.example.com."),
		},
	})
}
