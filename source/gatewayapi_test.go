package source

// Table tests of the Gateway API sources: routeRecords, gatewayRecords and the
// informer transforms they read through (slimRoute, slimGateway). Helpers carry
// a gwt prefix so that they do not collide with those of other test files.

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// gwtZones are the zones of these tests; example.org is there so that
// relative annotation names expand to two names.
var gwtZones = []string{"example.com.", "example.org."}

func gwtConfig() *Config { return &Config{Zones: gwtZones, TTL: 60} }

// gwtContext is a fake Context: Gateways by namespace/name and the labels
// of the namespaces it knows.
type gwtContext struct {
	gateways     map[string]*gwv1.Gateway
	listenerSets map[string]*gwv1.ListenerSet
	lsVersion    *Kind // the version ListenerSets are read at; nil: v1
	namespaces   map[string]map[string]string
	delegated    map[string][]string // namespace → domains; nil: every namespace may publish anywhere
}

func (c *gwtContext) Gateway(namespace, name string) *gwv1.Gateway {
	return c.gateways[namespace+"/"+name]
}

func (c *gwtContext) ListenerSet(namespace, name string) *ListenerSet {
	ls, ok := c.listenerSets[namespace+"/"+name]
	if !ok {
		return nil
	}
	v := c.lsVersion
	if v == nil {
		v = ListenerSetKind
	}
	return v.ListenerSet(ls)
}

func (c *gwtContext) NamespaceLabels(name string) (map[string]string, bool) {
	l, ok := c.namespaces[name]
	return l, ok
}

func (c *gwtContext) DefaultIngressClass() string { return "" }

func (c *gwtContext) MayPublish(namespace, name string) bool {
	if c.delegated == nil {
		return true
	}
	for _, d := range c.delegated[namespace] {
		if dns.IsSubDomain(d, name) {
			return true
		}
	}
	return false
}

// gwtNewContext returns a context holding gws and the namespaces ns
// (name → labels). The namespaces "default" and "infra" always exist.
func gwtNewContext(gws []*gwv1.Gateway, ns map[string]map[string]string) *gwtContext {
	c := &gwtContext{gateways: map[string]*gwv1.Gateway{}, namespaces: map[string]map[string]string{
		"default": {"kubernetes.io/metadata.name": "default"},
		"infra":   {"kubernetes.io/metadata.name": "infra"},
	}}
	for _, gw := range gws {
		c.gateways[gw.Namespace+"/"+gw.Name] = gw
	}
	for k, v := range ns {
		c.namespaces[k] = v
	}
	return c
}

// gwtConvert turns a typed route into what routeRecords reads, as the informers do.
func gwtConvert(t *testing.T, obj any) *route {
	t.Helper()
	if rt, ok := obj.(*route); ok {
		return rt
	}
	slim, err := slimRoute(obj)
	if err != nil {
		t.Fatal(err)
	}
	rt, ok := slim.(*route)
	if !ok {
		t.Fatalf("slimRoute kept the %T", obj)
	}
	return rt
}

// ---- comparison ----

// gwtCheck compares records exactly (duplicates count) and warnings by substring;
// no warnings are allowed when warn is empty.
func gwtCheck(t *testing.T, what string, res Result, want, warn []string) {
	t.Helper()
	got, exp := testutil.Strings(res.RRs), testutil.Want(t, want...)
	if !slices.Equal(got, exp) {
		t.Errorf("%s records:\ngot:\n\t%s\nwant:\n\t%s", what, strings.Join(got, "\n\t"), strings.Join(exp, "\n\t"))
	}
	if len(warn) == 0 && len(res.Warnings) > 0 {
		t.Errorf("%s: unexpected warnings %q", what, res.Warnings)
	}
	for _, w := range warn {
		if !slices.ContainsFunc(res.Warnings, func(g string) bool { return strings.Contains(g, w) }) {
			t.Errorf("%s: no warning contains %q; warnings: %q", what, w, res.Warnings)
		}
	}
}

func gwtSlimContext(t *testing.T, c *gwtContext) *gwtContext {
	t.Helper()
	out := &gwtContext{gateways: map[string]*gwv1.Gateway{}, listenerSets: map[string]*gwv1.ListenerSet{},
		lsVersion: c.lsVersion, namespaces: c.namespaces, delegated: c.delegated}
	for k, gw := range c.gateways {
		slim, err := slimGateway(gw.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		out.gateways[k] = slim.(*gwv1.Gateway)
	}
	for k, ls := range c.listenerSets {
		slim, err := slimListenerSet(ls.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		out.listenerSets[k] = slim.(*gwv1.ListenerSet)
	}
	return out
}

// ---- the tests ----

type gwtCase struct {
	name         string
	cfg          func(*Config)
	gateways     []*gwv1.Gateway
	listenerSets []*gwv1.ListenerSet
	experimental bool                         // ListenerSets are read as XListenerSets
	ns           map[string]map[string]string // namespaces besides default and infra
	delegated    map[string][]string          // the delegated policy's domains; nil: another policy
	route        testutil.Route
	want         []string
	warn         []string
}

func gwtRun(t *testing.T, tests []gwtCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := gwtConfig()
			if tc.cfg != nil {
				tc.cfg(cfg)
			}
			ctx := gwtNewContext(tc.gateways, tc.ns)
			ctx.delegated = tc.delegated
			ctx.listenerSets = map[string]*gwv1.ListenerSet{}
			for _, ls := range tc.listenerSets {
				ctx.listenerSets[ls.Namespace+"/"+ls.Name] = ls
			}
			if tc.experimental {
				ctx.lsVersion = ListenerSetKind.Older[0]
			}
			obj := tc.route.Object()
			res := routeRecords(gwtConvert(t, obj), ctx, cfg)
			gwtCheck(t, "full objects", res, tc.want, tc.warn)

			// What the informers keep must publish the same.
			slim, err := slimRoute(obj)
			if err != nil {
				t.Fatal(err)
			}
			if slim == obj {
				t.Fatalf("slimRoute returned the %T unchanged", obj)
			}
			slimRes := routeRecords(gwtConvert(t, slim), gwtSlimContext(t, ctx), cfg)
			if got, want := testutil.Strings(slimRes.RRs), testutil.Strings(res.RRs); !slices.Equal(got, want) {
				t.Errorf("slim objects publish\n\t%s\nfull objects\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
			}
			if !slices.Equal(slimRes.Warnings, res.Warnings) {
				t.Errorf("slim objects warn %q, full objects %q", slimRes.Warnings, res.Warnings)
			}
		})
	}
}

func TestGatewayRecords(t *testing.T) {
	ip := []string{"192.0.2.1", "2001:db8::1"}
	listeners := []gwv1.Listener{testutil.HTTPListener("web", "www.example.com"), testutil.HTTPListener("any", "*.example.com")}
	tests := []struct {
		name string
		cfg  func(*Config)
		gw   *gwv1.Gateway
		want []string
		warn []string
	}{
		{
			name: "listener hostnames alone publish nothing",
			gw:   testutil.Gateway("default", "gw", ip, listeners...),
		},
		{
			name: "hostname annotation publishes the addresses",
			gw:   testutil.GatewayAnnotated(testutil.Gateway("default", "gw", ip, listeners...), "coredns.io/hostname", "gw.example.com"),
			want: []string{"gw.example.com. 60 IN A 192.0.2.1", "gw.example.com. 60 IN AAAA 2001:db8::1"},
		},
		{
			name: "relative hostname annotation, every zone, with TTL",
			gw: testutil.GatewayAnnotated(testutil.Gateway("default", "gw", []string{"192.0.2.1"}),
				"external-dns.alpha.kubernetes.io/hostname", "edge", "external-dns.alpha.kubernetes.io/ttl", "10"),
			want: []string{"edge.example.com. 10 IN A 192.0.2.1", "edge.example.org. 10 IN A 192.0.2.1"},
		},
		{
			name: "hostname and target annotations",
			gw: testutil.GatewayAnnotated(testutil.Gateway("default", "gw", ip, listeners...),
				"external-dns.kubernetes.io/hostname", "gw.example.com", "external-dns.kubernetes.io/target", "lb.example.net"),
			want: []string{"gw.example.com. 60 IN CNAME lb.example.net."},
		},
		{
			name: "hostname annotation, no addresses",
			gw:   testutil.GatewayAnnotated(testutil.Gateway("default", "gw", nil, listeners...), "coredns.io/hostname", "gw.example.com"),
		},
		{
			name: "ignore label",
			gw: func() *gwv1.Gateway {
				g := testutil.GatewayAnnotated(testutil.Gateway("default", "gw", ip, listeners...), "coredns.io/hostname", "gw.example.com")
				g.Labels[IgnoreLabel] = "true"
				return g
			}(),
		},
		{
			name: "class filter excludes the Gateway",
			cfg:  func(c *Config) { c.GatewayClasses = []string{"internal"} },
			gw:   testutil.GatewayAnnotated(testutil.Gateway("default", "gw", ip, listeners...), "coredns.io/hostname", "gw.example.com"),
		},
		{
			name: "class filter admits the Gateway",
			cfg:  func(c *Config) { c.GatewayClasses = []string{"public"} },
			gw:   testutil.GatewayAnnotated(testutil.Gateway("default", "gw", []string{"192.0.2.1"}, listeners...), "coredns.io/hostname", "gw.example.com"),
			want: []string{"gw.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name: "annotation outside the zones warns",
			gw:   testutil.GatewayAnnotated(testutil.Gateway("default", "gw", []string{"192.0.2.1"}), "coredns.io/hostname", "gw.example.net."),
			warn: []string{"outside the zones"},
		},
		{
			name: "labelSelector excludes the Gateway",
			cfg:  func(c *Config) { c.GatewaySelector = labels.SelectorFromSet(labels.Set{"app": "internal"}) },
			gw:   testutil.GatewayAnnotated(testutil.Gateway("default", "gw", ip, listeners...), "coredns.io/hostname", "gw.example.com"),
		},
		{
			name: "labelSelector admits the Gateway",
			cfg:  func(c *Config) { c.GatewaySelector = labels.SelectorFromSet(labels.Set{"app": "edge"}) },
			gw:   testutil.GatewayAnnotated(testutil.Gateway("default", "gw", []string{"192.0.2.1"}, listeners...), "coredns.io/hostname", "gw.example.com"),
			want: []string{"gw.example.com. 60 IN A 192.0.2.1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := gwtConfig()
			if tc.cfg != nil {
				tc.cfg(cfg)
			}
			res := gatewayRecords(tc.gw, cfg)
			gwtCheck(t, "full Gateway", res, tc.want, tc.warn)
			slim, err := slimGateway(tc.gw.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			gwtCheck(t, "slim Gateway", gatewayRecords(slim.(*gwv1.Gateway), cfg), tc.want, tc.warn)
		})
	}
}

// TestSlimGatewayAPI: the transforms drop what the sources do not read and keep the rest.
func TestSlimGatewayAPI(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"expose": "true"}}
	gw := testutil.GatewayAnnotated(testutil.Gateway("infra", "gw", []string{"192.0.2.1", "lb.example.net"},
		testutil.AllowKinds(testutil.AllowFrom(testutil.Listener("tls", gwv1.TLSProtocolType, 443, "*.example.com"), gwv1.NamespacesFromSelector, sel), "TLSRoute"),
	), "external-dns.alpha.kubernetes.io/target", "198.51.100.1", "coredns.io/hostname", "gw", "external-dns.alpha.kubernetes.io/ttl", "7")
	gw.Labels[IgnoreLabel] = "false"
	obj, err := slimGateway(gw)
	if err != nil {
		t.Fatal(err)
	}
	s := obj.(*gwv1.Gateway)
	if s.Spec.Infrastructure != nil || len(s.Status.Listeners) != 0 || len(s.Status.Conditions) > 1 || s.Spec.Listeners[0].TLS != nil {
		t.Errorf("slimGateway kept fields no source reads: %+v", s)
	}
	// The labels stay: the labelSelector option applies to the Gateway's own names.
	if _, ok := s.Annotations["kubectl.kubernetes.io/last-applied-configuration"]; ok || s.Labels["app"] != "edge" {
		t.Errorf("slimGateway kept unread metadata or lost the labels: labels %v annotations %v", s.Labels, s.Annotations)
	}
	if s.Labels[IgnoreLabel] != "false" || len(s.Annotations) != 3 || s.Spec.GatewayClassName != "public" ||
		len(s.Status.Addresses) != 2 || len(s.Spec.Listeners) != 1 {
		t.Errorf("slimGateway lost fields the sources read: %+v", s)
	}
	l := s.Spec.Listeners[0]
	if l.Name != "tls" || l.Port != 443 || l.Protocol != gwv1.TLSProtocolType || l.Hostname == nil || *l.Hostname != "*.example.com" ||
		l.AllowedRoutes == nil || *l.AllowedRoutes.Namespaces.From != gwv1.NamespacesFromSelector ||
		l.AllowedRoutes.Namespaces.Selector.MatchLabels["expose"] != "true" || len(l.AllowedRoutes.Kinds) != 1 {
		t.Errorf("slimGateway changed the listener: %+v", l)
	}

	// Routes keep their hostnames, parentRefs, the source annotations and the
	// parents that accepted them; no rules, labels or other annotations.
	r := testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, testutil.Ref("gw"), testutil.Ref("refused"), testutil.Ref("pending")).
		Annotated("coredns.io/hostname", "x").Labeled(IgnoreLabel, "false").
		WithParents(testutil.Parent(testutil.Ref("gw"), metav1.ConditionTrue), testutil.Parent(testutil.Ref("refused"), metav1.ConditionFalse))
	robj, _ := slimRoute(r.Object())
	hr, ok := robj.(*route)
	if !ok {
		t.Fatalf("slimRoute made a %T", robj)
	}
	if _, ok := hr.annotation("unrelated.example.com/x"); ok || hr.GetLabels()["app"] != "" {
		t.Errorf("slimRoute kept metadata no source reads: %+v", hr)
	}
	if hr.kind != "HTTPRoute" || hr.GetName() != "web" || hr.GetNamespace() != "default" || hr.GetResourceVersion() != "42" ||
		len(hr.hostnames) != 1 || len(hr.parentRefs) != 3 || hr.ignored() || !annotated(hr, "coredns.io/hostname", "x") {
		t.Errorf("slimRoute lost fields the sources read: %+v", hr)
	}
	if !slices.Equal(hr.accepted, []bool{true, false, false}) {
		t.Errorf("slimRoute accepted parents %v, want gw only", hr.accepted)
	}
	if cp := hr.DeepCopyObject().(*route); &cp.parentRefs[0] == &hr.parentRefs[0] || &cp.accepted[0] == &hr.accepted[0] ||
		!slices.Equal(cp.accepted, hr.accepted) || !reflect.DeepEqual(cp.parentRefs, hr.parentRefs) || cp.kind != hr.kind {
		t.Errorf("DeepCopyObject shares memory or lost fields: %+v", cp)
	}
	ignored, _ := slimRoute(testutil.NewRoute("HTTPRoute", nil, testutil.Ref("gw")).Labeled(IgnoreLabel, "true").Object())
	if !ignored.(*route).ignored() {
		t.Error("slimRoute lost the ignore label")
	}
	// Every route kind is slimmed, and anything else passes through.
	for _, kind := range []string{"HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute"} {
		obj := testutil.NewRoute(kind, nil, testutil.Ref("gw")).Object()
		if out, _ := slimRoute(obj); out == obj {
			t.Errorf("slimRoute returned the %s unchanged", kind)
		}
	}
	other := 42
	if out, _ := slimRoute(other); out != any(other) {
		t.Errorf("slimRoute changed a %T", other)
	}
}

// slimRoute is the transform of the row version whose objects are of obj's
// type: what a route informer stores. Anything else passes unchanged.
func slimRoute(obj any) (any, error) {
	for _, k := range Kinds {
		for _, v := range k.Versions() {
			if v.Route != nil && reflect.TypeOf(v.Object) == reflect.TypeOf(obj) {
				return v.Transform(obj)
			}
		}
	}
	return obj, nil
}

// slimRouteBackends is slimRoute: the transform keeps the backends too.
func slimRouteBackends(obj any) (any, error) { return slimRoute(obj) }
