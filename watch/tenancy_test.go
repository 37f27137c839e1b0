package watch

import (
	"context"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

func TestObjectReference(t *testing.T) {
	tests := []struct {
		key  string
		want ObjectRef
		ok   bool
	}{
		{"Service/a/web", ObjectRef{ApiVersion: "v1", Kind: "Service", Namespace: "a", Name: "web"}, true},
		{"HTTPRoute/b/r", ObjectRef{ApiVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute", Namespace: "b", Name: "r"}, true},
		{"Gateway/infra/gw", ObjectRef{ApiVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway", Namespace: "infra", Name: "gw"}, true},
		{"Nameserver/kube-system/dns1", ObjectRef{}, false},
		{"Service//x", ObjectRef{}, false},
		{"garbage", ObjectRef{}, false},
	}
	for _, tt := range tests {
		if got, ok := objectReference(tt.key); got != tt.want || ok != tt.ok {
			t.Errorf("%s: got %+v %v, want %+v %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

func TestResourceOf(t *testing.T) {
	for _, tt := range []struct {
		ref  ObjectRef
		want string
	}{
		{ObjectRef{ApiVersion: "v1", Kind: "Service"}, "/v1, Resource=services"},
		{ObjectRef{ApiVersion: "networking.k8s.io/v1", Kind: "Ingress"}, "networking.k8s.io/v1, Resource=ingresses"},
		{ObjectRef{ApiVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway"}, "gateway.networking.k8s.io/v1, Resource=gateways"},
		{ObjectRef{ApiVersion: "v1", Kind: "Pod"}, ""},
	} {
		got := ""
		if gvr, ok := resourceOf(tt.ref); ok {
			got = gvr.String()
		}
		if got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.ref, got, tt.want)
		}
	}
}

// TestEventReferenceReadVersion: an Event names the object at the version
// the plugin reads it, which for routes may be older than v1.
func TestEventReferenceReadVersion(t *testing.T) {
	e := &Events{version: func(kind, namespace string) string {
		if kind == "TLSRoute" && namespace == "apps" {
			return "gateway.networking.k8s.io/v1alpha2"
		}
		return ""
	}}
	for key, want := range map[string]string{
		"TLSRoute/apps/db":  "gateway.networking.k8s.io/v1alpha2",
		"TLSRoute/other/db": "gateway.networking.k8s.io/v1",
		"Service/apps/web":  "v1",
	} {
		if ref, ok := e.reference(key); !ok || ref.ApiVersion != want {
			t.Errorf("%s: %+v %v, want apiVersion %s", key, ref, ok, want)
		}
	}
}

func tenantNamespace(name, domains string) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if domains != "" {
		ns.Annotations = map[string]string{source.DomainsAnnotation: domains}
	}
	return ns
}

func TestControllerOwnershipFirst(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	cfg := testConfig("example.com.")
	cfg.Resources, cfg.Ownership = []string{"Service"}, index.First
	p := startPipeline(t, cfg, watchtest.API{Core: client})
	// The later claim arrives first: creation order decides, not events.
	create(t, client, testutil.ClaimingService("team-b", "thief", 200, "shop.example.com,*.example.com,example.com", "192.0.2.66"))
	p.answers(t, "shop.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"shop.example.com. 60 IN A 192.0.2.66"}))
	create(t, client, testutil.ClaimingService("team-a", "shop", 100, "shop.example.com", "192.0.2.1"))
	create(t, client, testutil.ClaimingService("team-a", "shop2", 300, "shop.example.com", "192.0.2.2"))
	p.answers(t, "shop.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"shop.example.com. 60 IN A 192.0.2.1", "shop.example.com. 60 IN A 192.0.2.2"}))
	// The wildcard at the apex and the apex itself stay the plugin's.
	p.answers(t, "nothing.example.com.", dns.TypeA, nx)
	p.answers(t, "example.com.", dns.TypeA, expect(t, "NOERROR", nil))
	// Only when the oldest claim of team-a goes does team-b's older claim win.
	if err := client.CoreV1().Services("team-a").Delete(ctx, "shop", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "shop.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"shop.example.com. 60 IN A 192.0.2.66"}))
}

func TestControllerOwnershipDelegated(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset(tenantNamespace("team-a", "a.example.com, A.example.org"), tenantNamespace("team-b", ""))
	cfg := testConfig("example.com.")
	cfg.Resources, cfg.Ownership = []string{"Service"}, index.Delegated
	cfg.Delegations = map[string][]string{"team-c": {"c.example.com."}}
	p := startPipeline(t, cfg, watchtest.API{Core: client})
	create(t, client, testutil.ClaimingService("team-b", "thief", 1, "shop.a.example.com,*.a.example.com,www.example.com", "192.0.2.66"))
	create(t, client, testutil.ClaimingService("team-a", "shop", 2, "shop.a.example.com", "192.0.2.1"))
	create(t, client, testutil.ClaimingService("team-c", "web", 3, "www.c.example.com", "192.0.2.3"))
	p.answers(t, "shop.a.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"shop.a.example.com. 60 IN A 192.0.2.1"}))
	p.answers(t, "www.c.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"www.c.example.com. 60 IN A 192.0.2.3"}))
	p.answers(t, "other.a.example.com.", dns.TypeA, nx)
	p.answers(t, "www.example.com.", dns.TypeA, nx)
	// Objects' own names (<name>.<namespace>) follow the same rule.
	p.answers(t, "thief.team-b.example.com.", dns.TypeA, nx)

	// The administrator delegates a.example.com to team-b instead: team-b's
	// claims are now the only ones there.
	ns, err := client.CoreV1().Namespaces().Get(ctx, "team-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Annotations = nil
	if _, err := client.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	nb := tenantNamespace("team-b", "a.example.com")
	if _, err := client.CoreV1().Namespaces().Update(ctx, nb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "shop.a.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"shop.a.example.com. 60 IN A 192.0.2.66"}))
	p.answers(t, "other.a.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"other.a.example.com. 60 IN A 192.0.2.66"}))
	p.answers(t, "www.example.com.", dns.TypeA, nx)

	// A deleted Namespace takes its domains along.
	if err := client.CoreV1().Namespaces().Delete(ctx, "team-b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "shop.a.example.com.", dns.TypeA, nx)
}

// TestControllerMayPublish: the domains a namespace may publish at under
// each policy, from the Corefile and from its Namespace's annotation.
func TestControllerMayPublish(t *testing.T) {
	client := fake.NewSimpleClientset(tenantNamespace("team-a", "a.example.com"), tenantNamespace("team-b", ""))
	tests := []struct {
		namespace, name string
		union, want     bool // under union (and first), and under delegated
	}{
		{"team-a", "www.a.example.com.", true, true},
		{"team-a", "a.example.com.", true, true},
		{"team-a", "*.a.example.com.", true, true},
		{"team-a", "www.example.com.", true, false},
		{"team-b", "www.a.example.com.", true, false},
		{"team-c", "www.c.example.com.", true, true}, // the Corefile's delegate
		{"team-c", "www.a.example.com.", true, false},
		{"unknown", "www.a.example.com.", true, false},
	}
	for _, policy := range []index.Policy{index.Union, index.Delegated} {
		cfg := testConfig("example.com.")
		cfg.Resources, cfg.Ownership = []string{"Service"}, policy
		cfg.Delegations = map[string][]string{"team-c": {"c.example.com."}}
		p := startPipeline(t, cfg, watchtest.API{Core: client})
		for _, tt := range tests {
			want := tt.union
			if policy == index.Delegated {
				want = tt.want
			}
			if got := p.c.stores.MayPublish(tt.namespace, tt.name); got != want {
				t.Errorf("%s: mayPublish(%s, %s) = %v, want %v", policy, tt.namespace, tt.name, got, want)
			}
		}
		p.c.Stop()
	}
}
