package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-e581d630/k8s_gateway/watch"

	"github.com/seed-e581d630/k8s_gateway/source"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"

	"github.com/miekg/dns"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// k8sClaimingService is a LoadBalancer Service that claims hostnames by
// annotation, created at second sec.
func k8sClaimingService(namespace, name string, sec int64, hostnames, ip string) *corev1.Service {
	svc := testutil.NamedService(namespace, name, ip)
	svc.Annotations = map[string]string{source.CoreDNSHostnameAnnotation: hostnames}
	svc.CreationTimestamp = metav1.NewTime(time.Unix(sec, 0))
	return svc
}

func k8sTenantNamespace(name, domains string) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if domains != "" {
		ns.Annotations = map[string]string{source.DomainsAnnotation: domains}
	}
	return ns
}

func TestControllerOwnershipFirst(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	g := k8sStartGateway(t, client, []string{"example.com."}, func(g *Gateway) {
		g.resources = []string{"Service"}
		g.ownership = index.First
	})
	// The later claim arrives first: creation order decides, not events.
	k8sCreate(t, client, k8sClaimingService("team-b", "thief", 200, "shop.example.com,*.example.com,example.com", "192.0.2.66"))
	k8sAnswers(t, g, "shop.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"shop.example.com. 60 IN A 192.0.2.66"}))
	k8sCreate(t, client, k8sClaimingService("team-a", "shop", 100, "shop.example.com", "192.0.2.1"))
	k8sCreate(t, client, k8sClaimingService("team-a", "shop2", 300, "shop.example.com", "192.0.2.2"))
	k8sAnswers(t, g, "shop.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"shop.example.com. 60 IN A 192.0.2.1", "shop.example.com. 60 IN A 192.0.2.2"}))
	// The wildcard at the apex and the apex itself stay the plugin's.
	k8sAnswers(t, g, "nothing.example.com.", dns.TypeA, k8sNX)
	k8sAnswers(t, g, "example.com.", dns.TypeA, k8sExpect(t, "NOERROR", nil))
	// Only when the oldest claim of team-a goes does team-b's older claim win.
	if err := client.CoreV1().Services("team-a").Delete(ctx, "shop", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "shop.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"shop.example.com. 60 IN A 192.0.2.66"}))
}

func TestControllerOwnershipDelegated(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset(k8sTenantNamespace("team-a", "a.example.com, A.example.org"), k8sTenantNamespace("team-b", ""))
	g := k8sStartGateway(t, client, []string{"example.com."}, func(g *Gateway) {
		g.resources = []string{"Service"}
		g.ownership = index.Delegated
		g.delegations = map[string][]string{"team-c": {"c.example.com."}}
	})
	k8sCreate(t, client, k8sClaimingService("team-b", "thief", 1, "shop.a.example.com,*.a.example.com,www.example.com", "192.0.2.66"))
	k8sCreate(t, client, k8sClaimingService("team-a", "shop", 2, "shop.a.example.com", "192.0.2.1"))
	k8sCreate(t, client, k8sClaimingService("team-c", "web", 3, "www.c.example.com", "192.0.2.3"))
	k8sAnswers(t, g, "shop.a.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"shop.a.example.com. 60 IN A 192.0.2.1"}))
	k8sAnswers(t, g, "www.c.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"www.c.example.com. 60 IN A 192.0.2.3"}))
	k8sAnswers(t, g, "other.a.example.com.", dns.TypeA, k8sNX)
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, k8sNX)
	// Objects' own names (<name>.<namespace>) follow the same rule.
	k8sAnswers(t, g, "thief.team-b.example.com.", dns.TypeA, k8sNX)

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
	nb := k8sTenantNamespace("team-b", "a.example.com")
	if _, err := client.CoreV1().Namespaces().Update(ctx, nb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "shop.a.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"shop.a.example.com. 60 IN A 192.0.2.66"}))
	k8sAnswers(t, g, "other.a.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"other.a.example.com. 60 IN A 192.0.2.66"}))
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, k8sNX)

	// A deleted Namespace takes its domains along.
	if err := client.CoreV1().Namespaces().Delete(ctx, "team-b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "shop.a.example.com.", dns.TypeA, k8sNX)
}

// TestControllerMayPublish: the domains a namespace may publish at under
// each policy, from the Corefile and from its Namespace's annotation.
func TestControllerMayPublish(t *testing.T) {
	client := fake.NewSimpleClientset(k8sTenantNamespace("team-a", "a.example.com"), k8sTenantNamespace("team-b", ""))
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
		g := k8sStartGateway(t, client, []string{"example.com."}, func(g *Gateway) {
			g.resources = []string{"Service"}
			g.ownership = policy
			g.delegations = map[string][]string{"team-c": {"c.example.com."}}
		})
		for _, tt := range tests {
			want := tt.union
			if policy == index.Delegated {
				want = tt.want
			}
			if got := k8sCtrl(g).MayPublish(tt.namespace, tt.name); got != want {
				t.Errorf("%s: mayPublish(%s, %s) = %v, want %v", policy, tt.namespace, tt.name, got, want)
			}
		}
		g.stop()
	}
}

func TestClaimOf(t *testing.T) {
	created := metav1.NewTime(time.Unix(1700000000, 0))
	route := &metav1.ObjectMeta{Namespace: "team-b", Name: "r", CreationTimestamp: created}
	tests := []struct {
		name string
		w    *watch.Watched
		meta metav1.Object
		want index.Claim
	}{
		// A route is checked against its own namespace, whichever Gateway it attaches to.
		{"route through a shared Gateway", &watch.Watched{Kind: source.KindByName("HTTPRoute")}, route, index.Claim{Namespace: "team-b", Created: created.UnixNano()}},
		{"nameserver Service", &watch.Watched{Kind: source.KindByName("Service"), Nameserver: true}, &metav1.ObjectMeta{Namespace: "kube-system", Name: "dns1"}, index.Claim{}},
		// Its hostnames through the Service informer, the nameserver name among them.
		{"nameserver Service as a Service", &watch.Watched{Kind: source.KindByName("Service")}, &metav1.ObjectMeta{Namespace: "kube-system", Name: "dns1", CreationTimestamp: created}, index.Claim{}},
		{"another Service of its namespace", &watch.Watched{Kind: source.KindByName("Service")}, &metav1.ObjectMeta{Namespace: "kube-system", Name: "dns2", CreationTimestamp: created}, index.Claim{Namespace: "kube-system", Created: created.UnixNano()}},
		{"an Ingress named like it", &watch.Watched{Kind: source.KindByName("Ingress")}, &metav1.ObjectMeta{Namespace: "kube-system", Name: "dns1", CreationTimestamp: created}, index.Claim{Namespace: "kube-system", Created: created.UnixNano()}},
		{"cluster-scoped object", &watch.Watched{Kind: source.KindByName("Service")}, &metav1.ObjectMeta{Name: "x", CreationTimestamp: created}, index.Claim{Namespace: "/", Created: created.UnixNano()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := watch.ClaimOf(tt.w, tt.meta, []string{"kube-system/dns1"}); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestNamespaceDomains(t *testing.T) {
	tests := []struct {
		value    string
		want     []string
		warnings int
	}{
		{"", nil, 0},
		{"team-a.example.com", []string{"team-a.example.com."}, 0},
		{"A.example.com., b.example.com  c.example.com", []string{"a.example.com.", "b.example.com.", "c.example.com."}, 0},
		{"ok.example.com,bad..example.com", []string{"ok.example.com."}, 1},
	}
	for _, tt := range tests {
		meta := &metav1.ObjectMeta{Name: "ns", Annotations: map[string]string{source.DomainsAnnotation: tt.value}}
		got, warnings := source.NamespaceDomains(meta)
		if !slices.Equal(got, tt.want) || len(warnings) != tt.warnings {
			t.Errorf("%q: got %q %q, want %q and %d warnings", tt.value, got, warnings, tt.want, tt.warnings)
		}
	}
}

func TestControllerRejectionEvents(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	k8sStartGateway(t, client, []string{"example.com."}, func(g *Gateway) {
		g.resources = []string{"Service"}
		g.ownership = index.First
		g.emitEvents = true
	})
	k8sCreate(t, client, k8sClaimingService("team-a", "shop", 100, "shop.example.com", "192.0.2.1"))
	k8sCreate(t, client, k8sClaimingService("team-b", "thief", 200, "shop.example.com,*.example.com", "192.0.2.66"))
	want := map[string]bool{
		"DNS name shop.example.com (zone example.com.) not published: another namespace published it first":                         false,
		"DNS name *.example.com (zone example.com.) not published: the zone apex and the nameserver names belong to the DNS server": false,
	}
	testutil.Eventually(t, "events", func() string {
		list, err := client.CoreV1().Events("team-b").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		for _, ev := range list.Items {
			o := ev.InvolvedObject
			if ev.Reason != watch.EventNameRejected || ev.Type != corev1.EventTypeWarning || o.Kind != "Service" || o.Namespace != "team-b" || o.Name != "thief" || o.APIVersion != "v1" {
				return fmt.Sprintf("unexpected event %+v", ev)
			}
			if _, ok := want[ev.Message]; !ok {
				return "unexpected message " + ev.Message
			}
			want[ev.Message] = true
		}
		for msg, seen := range want {
			if !seen {
				return "missing " + msg
			}
		}
		return ""
	})
	// The owner hears nothing of the rejection; two of its own objects that
	// disagree each get a DNSNameConflict naming both.
	if list, err := client.CoreV1().Events("team-a").List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("events in the owner's namespace: %v %v", list, err)
	}
	k8sCreate(t, client, k8sClaimingService("team-a", "shop2", 300, "shop.example.com", "192.0.2.2"))
	const conflict = "DNS name shop.example.com: records united from Service/team-a/shop, Service/team-a/shop2"
	testutil.Eventually(t, "conflict events", func() string {
		list, err := client.CoreV1().Events("team-a").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		on := map[string]bool{}
		for _, ev := range list.Items {
			if ev.Reason != watch.EventNameConflict || ev.Message != conflict {
				return fmt.Sprintf("unexpected event %s: %s", ev.Reason, ev.Message)
			}
			on[ev.InvolvedObject.Name] = true
		}
		if !on["shop"] || !on["shop2"] {
			return fmt.Sprintf("conflict events on %v, want shop and shop2", on)
		}
		return ""
	})
}

// Under union, a conflict between namespaces names no object to either.
func TestControllerConflictEventsAcrossNamespaces(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	k8sStartGateway(t, client, []string{"example.com."}, func(g *Gateway) {
		g.resources = []string{"Service"}
		g.emitEvents = true
	})
	k8sCreate(t, client, k8sClaimingService("team-a", "shop", 100, "shop.example.com", "192.0.2.1"))
	k8sCreate(t, client, k8sClaimingService("team-b", "thief", 200, "shop.example.com", "192.0.2.66"))
	for _, ns := range []string{"team-a", "team-b"} {
		testutil.Eventually(t, ns, func() string {
			list, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err.Error()
			}
			if len(list.Items) != 1 {
				return fmt.Sprintf("%d events", len(list.Items))
			}
			if ev := list.Items[0]; ev.Reason != watch.EventNameConflict || strings.Contains(ev.Message, "team-") {
				return fmt.Sprintf("event %s: %s", ev.Reason, ev.Message)
			}
			return ""
		})
	}
}

func TestObjectReference(t *testing.T) {
	tests := []struct {
		key  string
		want watch.ObjectRef
		ok   bool
	}{
		{"Service/a/web", watch.ObjectRef{ApiVersion: "v1", Kind: "Service", Namespace: "a", Name: "web"}, true},
		{"HTTPRoute/b/r", watch.ObjectRef{ApiVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute", Namespace: "b", Name: "r"}, true},
		{"Gateway/infra/gw", watch.ObjectRef{ApiVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway", Namespace: "infra", Name: "gw"}, true},
		{"Nameserver/kube-system/dns1", watch.ObjectRef{}, false},
		{"Service//x", watch.ObjectRef{}, false},
		{"garbage", watch.ObjectRef{}, false},
	}
	for _, tt := range tests {
		if got, ok := watch.ObjectReference(tt.key); got != tt.want || ok != tt.ok {
			t.Errorf("%s: got %+v %v, want %+v %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

// TestRejectedMetric: each rejection counts once in rejected_total, by zone and reason.
func TestRejectedMetric(t *testing.T) {
	value := func(zone, reason string) float64 {
		var d dto.Metric
		if err := rejectedTotal.WithLabelValues(zone, reason).Write(&d); err != nil {
			t.Fatal(err)
		}
		return d.GetCounter().GetValue()
	}
	const zone = "metric.test."
	g := newGateway()
	g.Zones = []string{zone}
	g.ownership = index.First
	g.buildIndex()
	t.Cleanup(g.index.Close)
	g.index.Flush()
	owned, reserved := value(zone, index.ReasonOwned), value(zone, index.ReasonReserved)
	g.index.UpdateClaim("Service/a/x", index.Claim{Namespace: "a", Created: 1}, testutil.RRs("www.metric.test. 60 IN A 192.0.2.1"))
	for range 3 { // the same rejection again and again counts once
		g.index.UpdateClaim("Service/b/y", index.Claim{Namespace: "b", Created: 2}, testutil.RRs("www.metric.test. 60 IN A 192.0.2.2", "*.metric.test. 60 IN A 192.0.2.2"))
		g.index.UpdateClaim("Service/b/y", index.Claim{Namespace: "b", Created: 2}, testutil.RRs("www.metric.test. 60 IN A 192.0.2.2", "*.metric.test. 60 IN A 192.0.2.2", "b.metric.test. 60 IN A 192.0.2.2"))
	}
	if got := value(zone, index.ReasonOwned) - owned; got != 1 {
		t.Errorf("owned: counted %v, want 1", got)
	}
	if got := value(zone, index.ReasonReserved) - reserved; got != 1 {
		t.Errorf("reserved: counted %v, want 1", got)
	}
}

func TestResourceOf(t *testing.T) {
	for _, tt := range []struct {
		ref  watch.ObjectRef
		want string
	}{
		{watch.ObjectRef{ApiVersion: "v1", Kind: "Service"}, "/v1, Resource=services"},
		{watch.ObjectRef{ApiVersion: "networking.k8s.io/v1", Kind: "Ingress"}, "networking.k8s.io/v1, Resource=ingresses"},
		{watch.ObjectRef{ApiVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway"}, "gateway.networking.k8s.io/v1, Resource=gateways"},
		{watch.ObjectRef{ApiVersion: "v1", Kind: "Pod"}, ""},
	} {
		got := ""
		if gvr, ok := watch.ResourceOf(tt.ref); ok {
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
	e := &watch.Events{Version: func(kind, namespace string) string {
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
		if ref, ok := e.Reference(key); !ok || ref.ApiVersion != want {
			t.Errorf("%s: %+v %v, want apiVersion %s", key, ref, ok, want)
		}
	}
}
