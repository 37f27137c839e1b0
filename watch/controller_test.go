package watch

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
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

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// withNS gives the index's zones the apex NS RRset of the nameservers
// names, relative to the zone, as the plugin's apex and secondary options
// give them ("dns1.kube-system").
func withNS(names ...string) func(*index.Config) {
	return func(c *index.Config) {
		c.NS = func(zone string) []dns.RR {
			var out []dns.RR
			for _, n := range names {
				out = append(out, &dns.NS{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: 60}, Ns: n + "." + zone})
			}
			return out
		}
	}
}

// TestControllerPipeline: what the first list brings is in the index once
// the controller has synced; later objects and changes follow.
func TestControllerPipeline(t *testing.T) {
	ctx := context.Background()
	// One Ingress exists before the start: the first list must bring it.
	client := fake.NewSimpleClientset(testutil.NamedIngress("default", "old", []string{"old.example.com"}, "192.0.2.9"))
	p := newPipeline(t, testConfig("example.com."), watchtest.API{Core: client})
	select {
	case <-p.c.Synced():
		t.Fatal("synced before start")
	default:
	}
	p.start(t)
	// Synced means answered at once, without polling.
	if got, want := p.answer("old.example.com.", dns.TypeA), expect(t, "NOERROR", []string{"old.example.com. 60 IN A 192.0.2.9"}); got != want {
		t.Errorf("after start: got %s, want %s", got, want)
	}

	// An Ingress and a Service arrive.
	ing := testutil.NamedIngress("default", "web", []string{"www.example.com", "api.example.com"}, "192.0.2.1")
	create(t, client, ing)
	svc := testutil.WithPorts(testutil.NamedService("apps", "db", "192.0.2.20", "2001:db8::20"), corev1.ServicePort{Name: "pg", Protocol: corev1.ProtocolTCP, Port: 5432})
	create(t, client, svc)
	p.answers(t, "www.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.1"}))
	p.answers(t, "api.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"api.example.com. 60 IN A 192.0.2.1"}))
	p.answers(t, "db.apps.example.com.", dns.TypeAAAA, expect(t, "NOERROR", []string{"db.apps.example.com. 60 IN AAAA 2001:db8::20"}))
	p.answers(t, "_pg._tcp.db.apps.example.com.", dns.TypeSRV, expect(t, "NOERROR",
		[]string{"_pg._tcp.db.apps.example.com. 60 IN SRV 0 100 5432 db.apps.example.com."},
		"db.apps.example.com. 60 IN A 192.0.2.20", "db.apps.example.com. 60 IN AAAA 2001:db8::20"))

	// The load balancer moves: the answers follow the status.
	ing.Status = testutil.IngressLB("192.0.2.2", "2001:db8::2")
	if _, err := client.NetworkingV1().Ingresses("default").UpdateStatus(ctx, ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "www.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.2"}))
	p.answers(t, "www.example.com.", dns.TypeAAAA, expect(t, "NOERROR", []string{"www.example.com. 60 IN AAAA 2001:db8::2"}))

	// A host leaves the spec: its name goes, the other stays.
	ing.Spec.Rules = ing.Spec.Rules[:1]
	if _, err := client.NetworkingV1().Ingresses("default").Update(ctx, ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "api.example.com.", dns.TypeA, nx)
	p.answers(t, "www.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.2"}))

	// The ignore label withdraws the Service's records.
	svc.Labels = map[string]string{source.IgnoreLabel: "true"}
	if _, err := client.CoreV1().Services("apps").Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "db.apps.example.com.", dns.TypeA, nx)
	p.answers(t, "_pg._tcp.db.apps.example.com.", dns.TypeSRV, nx)

	// Deletion withdraws the Ingress's records.
	if err := client.NetworkingV1().Ingresses("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "www.example.com.", dns.TypeA, nx)
	p.answers(t, "old.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"old.example.com. 60 IN A 192.0.2.9"}))
}

// TestControllerNameserverGlue checks that the nameservers' own Services
// (dns1 in kube-system, dns2 in other-system) publish the glue of the NS
// names even when Services are not among the resources.
func TestControllerNameserverGlue(t *testing.T) {
	ctx := context.Background()
	// Each nameserver's namespace holds only its Service (see watchtest:
	// the fake ignores the metadata.name field selector).
	ns := testutil.NamedService("kube-system", "dns1", "192.0.2.53", "2001:db8::53")
	ns2 := testutil.NamedService("other-system", "dns2", "198.51.100.53")
	client := fake.NewSimpleClientset(ns, ns2, testutil.NamedService("apps", "web", "192.0.2.80"))
	zones := []string{"example.com.", "example.org."}
	cfg := testConfig(zones...)
	cfg.Resources = []string{"Ingress"}
	cfg.Nameservers, cfg.NameserverZones = []string{"kube-system/dns1", "other-system/dns2"}, zones
	p := startPipeline(t, cfg, watchtest.API{Core: client}, withNS("dns1.kube-system", "dns2.other-system"))

	for _, zone := range zones {
		p.answers(t, zone, dns.TypeNS, expect(t, "NOERROR",
			[]string{zone + " 60 IN NS dns1.kube-system." + zone, zone + " 60 IN NS dns2.other-system." + zone},
			"dns1.kube-system."+zone+" 60 IN A 192.0.2.53", "dns1.kube-system."+zone+" 60 IN AAAA 2001:db8::53",
			"dns2.other-system."+zone+" 60 IN A 198.51.100.53"))
	}
	p.answers(t, "dns1.kube-system.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"dns1.kube-system.example.com. 60 IN A 192.0.2.53"}))
	// Services are not published: only the nameserver's.
	p.answers(t, "web.apps.example.com.", dns.TypeA, nx)

	// The nameserver's address changes: the glue follows.
	ns.Status = testutil.ServiceLB("192.0.2.54")
	if _, err := client.CoreV1().Services("kube-system").UpdateStatus(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	nsSet := []string{"example.com. 60 IN NS dns1.kube-system.example.com.", "example.com. 60 IN NS dns2.other-system.example.com."}
	p.answers(t, "example.com.", dns.TypeNS, expect(t, "NOERROR", nsSet,
		"dns1.kube-system.example.com. 60 IN A 192.0.2.54", "dns2.other-system.example.com. 60 IN A 198.51.100.53"))

	// Without the Service, its NS name has no glue.
	if err := client.CoreV1().Services("kube-system").Delete(ctx, "dns1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "example.com.", dns.TypeNS, expect(t, "NOERROR", nsSet, "dns2.other-system.example.com. 60 IN A 198.51.100.53"))
}

// TestControllerTwoControllers runs two controllers with different zones
// and options on one client, as two plugin instances do: neither sees the
// other's zones or filters.
func TestControllerTwoControllers(t *testing.T) {
	client := fake.NewSimpleClientset()
	cfg1 := testConfig("example.com.")
	cfg1.Sources.IngressClasses = []string{"nginx"}
	cfg1.Sources.TTL = 30
	p1 := startPipeline(t, cfg1, watchtest.API{Core: client})
	p2 := startPipeline(t, testConfig("example.org."), watchtest.API{Core: client})

	create(t, client, testutil.WithIngressClass(testutil.NamedIngress("default", "a", []string{"a.example.com", "a.example.org"}, "192.0.2.1"), "nginx"))
	create(t, client, testutil.WithIngressClass(testutil.NamedIngress("default", "b", []string{"b.example.com", "b.example.org"}, "192.0.2.2"), "traefik"))

	p1.answers(t, "a.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"a.example.com. 30 IN A 192.0.2.1"}))
	p2.answers(t, "a.example.org.", dns.TypeA, expect(t, "NOERROR", []string{"a.example.org. 60 IN A 192.0.2.1"}))
	p2.answers(t, "b.example.org.", dns.TypeA, expect(t, "NOERROR", []string{"b.example.org. 60 IN A 192.0.2.2"}))
	// p1's class filter hides b; its zone does not include example.org.
	p1.answers(t, "b.example.com.", dns.TypeA, nx)
	for _, tc := range []struct {
		p    *pipeline
		name string
	}{{p1, "a.example.org."}, {p2, "a.example.com."}} {
		if got := tc.p.answer(tc.name, dns.TypeA); got != "REFUSED (no zone)" {
			t.Errorf("%s outside the zones: %s", tc.name, got)
		}
		if tc.p.ix.Snapshot().Has(tc.name) {
			t.Errorf("%s is in the other instance's index", tc.name)
		}
	}
}

// TestControllerForbiddenKind makes the API server refuse to list Ingresses:
// the kind is disabled, Services still answer, the controller syncs, and
// the Ingresses are picked up once the API server allows them.
func TestControllerForbiddenKind(t *testing.T) {
	client := fake.NewSimpleClientset(
		testutil.NamedIngress("default", "web", []string{"www.example.com"}, "192.0.2.1"),
		testutil.NamedService("apps", "db", "192.0.2.20"),
	)
	var forbidden atomic.Bool
	forbidden.Store(true)
	var refused atomic.Int32
	client.PrependReactor("list", "ingresses", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		if !forbidden.Load() {
			return false, nil, nil
		}
		refused.Add(1)
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}, "", errors.New("RBAC: not allowed"))
	})
	p := startPipeline(t, testConfig("example.com."), watchtest.API{Core: client})

	if got, want := p.answer("db.apps.example.com.", dns.TypeA), expect(t, "NOERROR", []string{"db.apps.example.com. 60 IN A 192.0.2.20"}); got != want {
		t.Errorf("Service: got %s, want %s", got, want)
	}
	if got := p.answer("www.example.com.", dns.TypeA); got != nx {
		t.Errorf("forbidden Ingress: got %s, want %s", got, nx)
	}
	// The disabled kind is probed again, and stays disabled while forbidden.
	testutil.Eventually(t, "re-probing", func() string {
		if refused.Load() < 3 {
			return "fewer than 3 list calls"
		}
		return ""
	})

	forbidden.Store(false)
	p.answers(t, "www.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.1"}))
}

// TestControllerFilters checks the label selectors by kind and the
// namespaces, and that neither hides the nameserver's own Service.
func TestControllerFilters(t *testing.T) {
	exposed := testutil.NamedService("apps", "exposed", "192.0.2.1")
	exposed.Labels = map[string]string{"expose": "yes"}
	otherNS := testutil.NamedService("other", "exposed", "192.0.2.2")
	otherNS.Labels = map[string]string{"expose": "yes"}
	// Created before the start: the fake filters lists by label, not watches.
	client := fake.NewSimpleClientset(exposed, otherNS, testutil.NamedService("apps", "hidden", "192.0.2.3"),
		testutil.NamedService("kube-system", "dns1", "192.0.2.53"))
	cfg := testConfig("example.com.")
	cfg.LabelSelectors = map[string][]string{"Service": {"expose=yes"}}
	cfg.Namespaces = []string{"apps"}
	cfg.Nameservers, cfg.NameserverZones = []string{"kube-system/dns1"}, cfg.Sources.Zones
	p := startPipeline(t, cfg, watchtest.API{Core: client}, withNS("dns1.kube-system"))
	p.answers(t, "exposed.apps.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"exposed.apps.example.com. 60 IN A 192.0.2.1"}))
	p.answers(t, "exposed.other.example.com.", dns.TypeA, nx)
	p.answers(t, "hidden.apps.example.com.", dns.TypeA, nx)
	p.answers(t, "example.com.", dns.TypeNS, expect(t, "NOERROR",
		[]string{"example.com. 60 IN NS dns1.kube-system.example.com."}, "dns1.kube-system.example.com. 60 IN A 192.0.2.53"))
}

// TestControllerSelectorsOr: a kind listed with several label selectors
// publishes the objects that match any of them, one claim each, and an
// object that two match is withdrawn only when no informer holds it.
func TestControllerSelectorsOr(t *testing.T) {
	svc := func(name, ip string, labels map[string]string) *corev1.Service {
		s := testutil.NamedService("apps", name, ip)
		s.Labels = labels
		return s
	}
	// Created before the start: the fake filters lists by label, not watches.
	client := fake.NewSimpleClientset(
		svc("a", "192.0.2.1", map[string]string{"app": "a"}),
		svc("b", "192.0.2.2", map[string]string{"tier": "b"}),
		svc("both", "192.0.2.3", map[string]string{"app": "a", "tier": "b"}),
		svc("neither", "192.0.2.4", map[string]string{"app": "c"}))
	cfg := testConfig("example.com.")
	cfg.LabelSelectors = map[string][]string{"Service": {"app=a", "tier=b"}}
	p := startPipeline(t, cfg, watchtest.API{Core: client})
	for name, ip := range map[string]string{"a": "192.0.2.1", "b": "192.0.2.2", "both": "192.0.2.3"} {
		owner := name + ".apps.example.com."
		p.answers(t, owner, dns.TypeA, expect(t, "NOERROR", []string{owner + " 60 IN A " + ip}))
	}
	p.answers(t, "neither.apps.example.com.", dns.TypeA, nx)

	if err := client.CoreV1().Services("apps").Delete(context.Background(), "both", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.answers(t, "both.apps.example.com.", dns.TypeA, nx)
	p.answers(t, "a.apps.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"a.apps.example.com. 60 IN A 192.0.2.1"}))
}

// TestControllerSelectorsLeave: an object whose labels leave one of its
// kind's selectors but still match another stays published, with its new
// contents, whichever of the two watches tells first; it goes when it
// leaves the last.
func TestControllerSelectorsLeave(t *testing.T) {
	both := testutil.NamedService("apps", "both", "192.0.2.3")
	both.Labels = map[string]string{"app": "a", "tier": "b"}
	client := fake.NewSimpleClientset(both)
	// One watch per selector, as the API server filters them.
	watchers := map[string]*kwatch.FakeWatcher{"app=a": kwatch.NewFake(), "tier=b": kwatch.NewFake()}
	client.PrependWatchReactor("services", func(a k8stesting.Action) (bool, kwatch.Interface, error) {
		w, ok := watchers[a.(k8stesting.WatchAction).GetWatchRestrictions().Labels.String()]
		return ok, w, nil
	})
	cfg := testConfig("example.com.")
	cfg.LabelSelectors = map[string][]string{"Service": {"app=a", "tier=b"}}
	p := startPipeline(t, cfg, watchtest.API{Core: client})
	const owner = "both.apps.example.com."
	p.answers(t, owner, dns.TypeA, expect(t, "NOERROR", []string{owner + " 60 IN A 192.0.2.3"}))

	// settled waits until both informers have handled what was sent to
	// them: a marker Service sent after it is published through each.
	markers := 0
	settled := func() {
		t.Helper()
		for _, sel := range []string{"app=a", "tier=b"} {
			markers++
			name := fmt.Sprintf("marker%d", markers)
			m := testutil.NamedService("apps", name, "192.0.2.99")
			watchers[sel].Add(m)
			p.answers(t, name+".apps.example.com.", dns.TypeA, expect(t, "NOERROR", []string{name + ".apps.example.com. 60 IN A 192.0.2.99"}))
		}
	}

	// It leaves app=a with a new address: tier=b's watch tells first.
	moved := testutil.NamedService("apps", "both", "192.0.2.33")
	moved.Labels = map[string]string{"tier": "b"}
	watchers["tier=b"].Modify(moved)
	watchers["app=a"].Delete(both)
	settled()
	if got, want := p.answer(owner, dns.TypeA), expect(t, "NOERROR", []string{owner + " 60 IN A 192.0.2.33"}); got != want {
		t.Fatalf("after leaving one selector: %s, want %s", got, want)
	}

	// Back in app=a, then out of it again, app=a's watch telling first.
	back := moved.DeepCopy()
	back.Labels = map[string]string{"app": "a", "tier": "b"}
	back.Status.LoadBalancer.Ingress[0].IP = "192.0.2.34"
	watchers["app=a"].Add(back)
	watchers["tier=b"].Modify(back)
	settled()
	watchers["app=a"].Delete(back)
	settled()
	if got, want := p.answer(owner, dns.TypeA), expect(t, "NOERROR", []string{owner + " 60 IN A 192.0.2.34"}); got != want {
		t.Fatalf("after leaving one selector again: %s, want %s", got, want)
	}

	watchers["tier=b"].Delete(back)
	p.answers(t, owner, dns.TypeA, nx)
}
