package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/miekg/dns"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
)

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
	k8sCreate(t, client, testutil.ClaimingService("team-b", "thief", 200, "shop.example.com,*.example.com,example.com", "192.0.2.66"))
	k8sAnswers(t, g, "shop.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"shop.example.com. 60 IN A 192.0.2.66"}))
	k8sCreate(t, client, testutil.ClaimingService("team-a", "shop", 100, "shop.example.com", "192.0.2.1"))
	k8sCreate(t, client, testutil.ClaimingService("team-a", "shop2", 300, "shop.example.com", "192.0.2.2"))
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
	k8sCreate(t, client, testutil.ClaimingService("team-b", "thief", 1, "shop.a.example.com,*.a.example.com,www.example.com", "192.0.2.66"))
	k8sCreate(t, client, testutil.ClaimingService("team-a", "shop", 2, "shop.a.example.com", "192.0.2.1"))
	k8sCreate(t, client, testutil.ClaimingService("team-c", "web", 3, "www.c.example.com", "192.0.2.3"))
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

func TestControllerRejectionEvents(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	k8sStartGateway(t, client, []string{"example.com."}, func(g *Gateway) {
		g.resources = []string{"Service"}
		g.ownership = index.First
		g.emitEvents = true
	})
	k8sCreate(t, client, testutil.ClaimingService("team-a", "shop", 100, "shop.example.com", "192.0.2.1"))
	k8sCreate(t, client, testutil.ClaimingService("team-b", "thief", 200, "shop.example.com,*.example.com", "192.0.2.66"))
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
			if ev.Reason != "DNSNameRejected" || ev.Type != corev1.EventTypeWarning || o.Kind != "Service" || o.Namespace != "team-b" || o.Name != "thief" || o.APIVersion != "v1" {
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
	k8sCreate(t, client, testutil.ClaimingService("team-a", "shop2", 300, "shop.example.com", "192.0.2.2"))
	const conflict = "DNS name shop.example.com: records united from Service/team-a/shop, Service/team-a/shop2"
	testutil.Eventually(t, "conflict events", func() string {
		list, err := client.CoreV1().Events("team-a").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		on := map[string]bool{}
		for _, ev := range list.Items {
			if ev.Reason != "DNSNameConflict" || ev.Message != conflict {
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
	k8sCreate(t, client, testutil.ClaimingService("team-a", "shop", 100, "shop.example.com", "192.0.2.1"))
	k8sCreate(t, client, testutil.ClaimingService("team-b", "thief", 200, "shop.example.com", "192.0.2.66"))
	for _, ns := range []string{"team-a", "team-b"} {
		testutil.Eventually(t, ns, func() string {
			list, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err.Error()
			}
			if len(list.Items) != 1 {
				return fmt.Sprintf("%d events", len(list.Items))
			}
			if ev := list.Items[0]; ev.Reason != "DNSNameConflict" || strings.Contains(ev.Message, "team-") {
				return fmt.Sprintf("event %s: %s", ev.Reason, ev.Message)
			}
			return ""
		})
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
