package watch

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// TestWatchesPerNamespace: with the namespaces option, every namespaced kind
// has one informer per listed namespace (each once, whatever the order or
// repetitions), and so has the Namespace kind (the listed Namespaces, each by
// name); IngressClasses have one for all namespaces.
func TestWatchesPerNamespace(t *testing.T) {
	for _, c := range []struct {
		name      string
		configure func(c *Config)
		want      []string // kind/namespace
	}{
		{
			name:      "without namespaces: one informer per kind",
			configure: func(c *Config) {},
			want:      []string{"Ingress/", "Service/"},
		},
		{
			name:      "two namespaces, one repeated",
			configure: func(c *Config) { c.Namespaces = []string{"web", "apps", "web"} },
			want:      []string{"Ingress/apps", "Ingress/web", "Service/apps", "Service/web"},
		},
		{
			name: "ingressClasses: IngressClasses stay cluster-wide",
			configure: func(c *Config) {
				c.Namespaces = []string{"apps"}
				c.Sources.IngressClasses = []string{"nginx"}
			},
			want: []string{"Ingress/apps", "IngressClass/", "Service/apps"},
		},
		{
			name: "routes: Gateways, ListenerSets and the Namespace objects per namespace",
			configure: func(c *Config) {
				c.Resources = []string{"HTTPRoute"}
				c.Namespaces = []string{"apps", "infra"}
			},
			want: []string{"Gateway/apps", "Gateway/infra", "HTTPRoute/apps", "HTTPRoute/infra",
				"ListenerSet/apps", "ListenerSet/infra", "Namespace/apps", "Namespace/infra"},
		},
		{
			name: "delegated ownership: the listed Namespace objects",
			configure: func(c *Config) {
				c.Resources = []string{"Service"}
				c.Namespaces = []string{"apps"}
				c.Ownership = index.Delegated
			},
			want: []string{"Namespace/apps", "Service/apps"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig("example.com.")
			cfg.Nameservers = []string{"kube-system/dns1"}
			c.configure(&cfg)
			var got []string
			for _, w := range New(cfg, watchtest.API{Core: fake.NewSimpleClientset(), Gateway: watchtest.NewGatewayTracker()}, nil).watches() {
				if !w.nameserver {
					got = append(got, w.Kind.Name+"/"+w.Namespace)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("informers %q, want %q", got, c.want)
			}
		})
	}
}

// roleOnly makes a fake clientset behave as if the plugin had Roles in the
// namespaces allowed only: a list or watch of Ingresses or Services anywhere
// else, all namespaces included, is forbidden. It records the namespaces asked.
type roleOnly struct {
	allowed []string
	mu      sync.Mutex
	asked   map[string]bool // the namespaces asked for, "" for all
}

func (r *roleOnly) install(client *fake.Clientset) {
	for _, res := range []string{"ingresses", "services"} {
		forbid := func(a k8stesting.Action) error {
			r.mu.Lock()
			r.asked[a.GetNamespace()] = true
			allowed := slices.Contains(r.allowed, a.GetNamespace())
			r.mu.Unlock()
			if allowed {
				return nil
			}
			return apierrors.NewForbidden(schema.GroupResource{Resource: res}, "", fmt.Errorf("no Role in namespace %q", a.GetNamespace()))
		}
		client.PrependReactor("list", res, func(a k8stesting.Action) (bool, k8sruntime.Object, error) {
			err := forbid(a)
			return err != nil, nil, err
		})
		client.PrependWatchReactor(res, func(a k8stesting.Action) (bool, kwatch.Interface, error) {
			err := forbid(a)
			return err != nil, nil, err
		})
	}
}

// TestControllerNamespaceScoped: with the namespaces option, the plugin
// works with Roles in the listed namespaces alone. Objects of two listed
// namespaces, created before and after the start, are published; an object
// of an unlisted namespace is never published, nor asked for; a listed
// namespace without a Role disables only its own informers, says so in
// kind_enabled, and is read once it has one.
func TestControllerNamespaceScoped(t *testing.T) {
	client := fake.NewSimpleClientset(
		testutil.NamedService("apps", "db", "192.0.2.1"),
		testutil.NamedService("web", "db", "192.0.2.2"),
		testutil.NamedService("other", "db", "192.0.2.3"),
		testutil.NamedService("kube-system", "dns1", "192.0.2.53"))
	rbac := &roleOnly{allowed: []string{"apps", "web", "kube-system"}, asked: map[string]bool{}}
	rbac.install(client)
	zone := "nsscoped.example."
	cfg := testConfig(zone)
	cfg.Namespaces = []string{"apps", "web", "locked"}
	// The nameserver's own Service, read whatever the namespaces option says.
	cfg.Nameservers, cfg.NameserverZones = []string{"kube-system/dns1"}, []string{zone}
	g := startPipeline(t, cfg, watchtest.API{Core: client})
	a := func(name, addr string) string {
		return expect(t, "NOERROR", []string{name + " 60 IN A " + addr})
	}
	g.answers(t, "db.apps."+zone, dns.TypeA, a("db.apps."+zone, "192.0.2.1"))
	g.answers(t, "db.web."+zone, dns.TypeA, a("db.web."+zone, "192.0.2.2"))

	// Events of both namespaces reach the index.
	create(t, client, testutil.NamedService("apps", "new", "192.0.2.11"))
	create(t, client, testutil.NamedIngress("web", "www", []string{"www." + zone}, "192.0.2.12"))
	create(t, client, testutil.NamedService("other", "new", "192.0.2.13"))
	g.answers(t, "new.apps."+zone, dns.TypeA, a("new.apps."+zone, "192.0.2.11"))
	g.answers(t, "www."+zone, dns.TypeA, a("www."+zone, "192.0.2.12"))
	for _, name := range []string{"db.other." + zone, "new.other." + zone} {
		if got := g.answer(name, dns.TypeA); got != nx {
			t.Errorf("%s (unlisted namespace): %s", name, got)
		}
	}

	rbac.mu.Lock()
	asked := slices.Sorted(maps.Keys(rbac.asked))
	rbac.mu.Unlock()
	if want := []string{"apps", "kube-system", "locked", "web"}; !slices.Equal(asked, want) {
		t.Errorf("Ingresses and Services listed or watched in namespaces %q, want %q", asked, want)
	}

	testutil.Eventually(t, "kind_enabled per namespace", func() string {
		got := kindSeries(t, zone)
		want := map[string]float64{
			"Service/apps v1": 1, "Service/web v1": 1, "Service/locked  refused": 0,
			"Ingress/apps networking.k8s.io/v1": 1, "Ingress/web networking.k8s.io/v1": 1, "Ingress/locked  refused": 0,
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				return fmt.Sprintf("%v, want %v", got, want)
			}
		}
		return ""
	})

	// The Role arrives: the next probe starts that namespace's informers.
	rbac.mu.Lock()
	rbac.allowed = append(rbac.allowed, "locked")
	rbac.mu.Unlock()
	create(t, client, testutil.NamedService("locked", "db", "192.0.2.4"))
	g.answers(t, "db.locked."+zone, dns.TypeA, a("db.locked."+zone, "192.0.2.4"))
	testutil.Eventually(t, "kind_enabled of the namespace with a Role", func() string {
		if got := kindSeries(t, zone); got["Service/locked v1"] != 1 || got["Service/apps v1"] != 1 {
			return fmt.Sprintf("%v", got)
		}
		return ""
	})
}

// TestControllerNamespaceScopedRoutes: with the namespaces option, a route
// publishes through a Gateway of a listed namespace, which admits it by the
// labels of its Namespace (read by name); a Gateway of an unlisted
// namespace is not read, so routes attached to it publish nothing, and the
// routes of an unlisted namespace are not read either.
func TestControllerNamespaceScopedRoutes(t *testing.T) {
	tracker := watchtest.NewGatewayTracker()
	gatewaysGVR, routesGVR := gwv1.SchemeGroupVersion.WithResource("gateways"), gwv1.SchemeGroupVersion.WithResource("httproutes")
	for _, gw := range []*gwv1.Gateway{
		testutil.Gateway("infra", "gw", []string{"192.0.2.1"}, testutil.AllowFrom(testutil.HTTPListener("http", "*.example.com"), gwv1.NamespacesFromSelector,
			&metav1.LabelSelector{MatchLabels: map[string]string{"expose": "yes"}})),
		testutil.Gateway("edge", "gw", []string{"192.0.2.2"}, testutil.AllowFrom(testutil.HTTPListener("http", "*.example.com"), gwv1.NamespacesFromAll, nil)),
	} {
		if err := tracker.Create(gatewaysGVR, gw, gw.Namespace); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []struct{ ns, host, gwNS string }{
		{"apps", "listed.example.com", "infra"},
		{"apps", "edge.example.com", "edge"},
		{"other", "other.example.com", "infra"},
	} {
		route := testutil.NewRoute("HTTPRoute", []string{r.host}, testutil.RefNS(testutil.Ref("gw"), r.gwNS)).InNS(r.ns).Object().(*gwv1.HTTPRoute)
		route.Name = r.host
		if err := tracker.Create(routesGVR, route, r.ns); err != nil {
			t.Fatal(err)
		}
	}
	apps := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps", Labels: map[string]string{"expose": "yes"}}}
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: map[string]string{"expose": "yes"}}}
	cfg := testConfig("example.com.")
	cfg.Resources = []string{"HTTPRoute"}
	cfg.Namespaces = []string{"apps", "infra"}
	g := startPipeline(t, cfg, watchtest.API{Core: fake.NewSimpleClientset(apps, other), Gateway: tracker})
	for _, c := range []struct{ name, want string }{
		{"listed.example.com.", expect(t, "NOERROR", []string{"listed.example.com. 60 IN A 192.0.2.1"})},
		{"edge.example.com.", nx},
		{"other.example.com.", nx},
	} {
		g.answers(t, c.name, dns.TypeA, c.want)
	}
}
