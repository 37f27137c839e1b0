package gateway

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/seed-e581d630/k8s_gateway/fleet"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/persist"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// The pipeline tests run the controller against client-go's fake clientset:
// objects created there reach the informers, the index and ServeDNS.
//
// The fake's object tracker honours label selectors on lists but ignores field
// selectors, and ignores both on watches. The nameserver informer lists
// Services in one namespace with the field selector metadata.name=<name>; with
// the fake it sees every Service of that namespace, so the tests keep only the
// nameserver's Service in kube-system. Objects that a label selector must hide
// are created before the controller starts, so that only the list sees them.

// k8sTiming is the timing of the controllers of the tests: short waits, so
// that re-probes and retries happen within a test.
var k8sTiming = timing{
	startupWait: 5 * time.Second, reprobe: 50 * time.Millisecond, clusterWait: time.Second,
	health: 10 * time.Millisecond, unreachableAfter: 200 * time.Millisecond,
	guard:   watch.GuardTiming{RetryInitial: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond, ThrottledMax: 20 * time.Millisecond},
	persist: persist.Timing{Interval: 10 * time.Millisecond, Refresh: time.Hour},
}

// k8sNewGateway configures a Gateway for zones, publishing Ingresses and
// Services unless configure says otherwise, and its controller on client.
func k8sNewGateway(client kubernetes.Interface, zones []string, configure func(*Gateway)) *Gateway {
	return k8sNewGatewayAPI(watchtest.API{Core: client}, zones, configure)
}

// k8sNewGatewayAPI is k8sNewGateway on any API.
func k8sNewGatewayAPI(api watch.API, zones []string, configure func(*Gateway)) *Gateway {
	g := newGateway()
	g.Zones = zones
	g.resources = []string{"Ingress", "Service"}
	g.timing = k8sTiming
	if configure != nil {
		configure(g)
	}
	g.buildIndex()
	g.fleet.Add(fleet.NewCluster("", g.controllerConfig(), api, g.index, g.emitEvents))
	return g
}

// k8sStartGateway is k8sNewGateway, then starts the controller, checks that
// it synced, and stops it when the test ends.
func k8sStartGateway(t *testing.T, client kubernetes.Interface, zones []string, configure func(*Gateway)) *Gateway {
	t.Helper()
	return k8sStartGatewayAPI(t, watchtest.API{Core: client}, zones, configure)
}

// k8sStartGatewayAPI is k8sStartGateway on any API.
func k8sStartGatewayAPI(t *testing.T, api watch.API, zones []string, configure func(*Gateway)) *Gateway {
	t.Helper()
	g := k8sNewGatewayAPI(api, zones, configure)
	t.Cleanup(g.stop)
	if err := g.start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	if !g.Ready() {
		t.Fatalf("not ready after start")
	}
	return g
}

func k8sCreate(t *testing.T, client kubernetes.Interface, obj k8sruntime.Object) {
	t.Helper()
	if err := watchtest.Create(client, obj); err != nil {
		t.Fatalf("create: %v", err)
	}
}

// k8sNX is what k8sAnswer gives for a name that does not exist.
const k8sNX = "NXDOMAIN answer=[] extra=[]"

func TestControllerPipeline(t *testing.T) {
	ctx := context.Background()
	// One Ingress exists before the start: the first list must bring it.
	client := fake.NewSimpleClientset(testutil.NamedIngress("default", "old", []string{"old.example.com"}, "192.0.2.9"))
	g := k8sNewGateway(client, []string{"example.com."}, nil)

	if g.Ready() {
		t.Fatal("ready before start")
	}
	if got, want := k8sAnswer(g, "old.example.com.", dns.TypeA), "no reply, rcode SERVFAIL"; got != want {
		t.Errorf("before start: got %s, want %s", got, want)
	}
	t.Cleanup(g.stop)
	if err := g.start(); err != nil {
		t.Fatal(err)
	}
	if !g.Ready() {
		t.Fatal("not ready after start")
	}
	// Synced means answered at once, without polling.
	if got, want := k8sAnswer(g, "old.example.com.", dns.TypeA), k8sExpect(t, "NOERROR", []string{"old.example.com. 60 IN A 192.0.2.9"}); got != want {
		t.Errorf("after start: got %s, want %s", got, want)
	}

	// An Ingress and a Service arrive.
	ing := testutil.NamedIngress("default", "web", []string{"www.example.com", "api.example.com"}, "192.0.2.1")
	k8sCreate(t, client, ing)
	svc := testutil.WithPorts(testutil.NamedService("apps", "db", "192.0.2.20", "2001:db8::20"), corev1.ServicePort{Name: "pg", Protocol: corev1.ProtocolTCP, Port: 5432})
	k8sCreate(t, client, svc)
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.1"}))
	k8sAnswers(t, g, "api.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"api.example.com. 60 IN A 192.0.2.1"}))
	k8sAnswers(t, g, "db.apps.example.com.", dns.TypeAAAA, k8sExpect(t, "NOERROR", []string{"db.apps.example.com. 60 IN AAAA 2001:db8::20"}))
	k8sAnswers(t, g, "_pg._tcp.db.apps.example.com.", dns.TypeSRV, k8sExpect(t, "NOERROR",
		[]string{"_pg._tcp.db.apps.example.com. 60 IN SRV 0 100 5432 db.apps.example.com."},
		"db.apps.example.com. 60 IN A 192.0.2.20", "db.apps.example.com. 60 IN AAAA 2001:db8::20"))

	// The load balancer moves: the answers follow the status.
	ing.Status = testutil.IngressLB("192.0.2.2", "2001:db8::2")
	if _, err := client.NetworkingV1().Ingresses("default").UpdateStatus(ctx, ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.2"}))
	k8sAnswers(t, g, "www.example.com.", dns.TypeAAAA, k8sExpect(t, "NOERROR", []string{"www.example.com. 60 IN AAAA 2001:db8::2"}))

	// A host leaves the spec: its name goes, the other stays.
	ing.Spec.Rules = ing.Spec.Rules[:1]
	if _, err := client.NetworkingV1().Ingresses("default").Update(ctx, ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "api.example.com.", dns.TypeA, k8sNX)
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.2"}))

	// The ignore label withdraws the Service's records.
	svc.Labels = map[string]string{source.IgnoreLabel: "true"}
	if _, err := client.CoreV1().Services("apps").Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "db.apps.example.com.", dns.TypeA, k8sNX)
	k8sAnswers(t, g, "_pg._tcp.db.apps.example.com.", dns.TypeSRV, k8sNX)

	// Deletion withdraws the Ingress's records.
	if err := client.NetworkingV1().Ingresses("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, k8sNX)
	k8sAnswers(t, g, "old.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"old.example.com. 60 IN A 192.0.2.9"}))

	g.stop()
	if g.Ready() {
		t.Error("ready after stop")
	}
	g.stop() // a second stop is harmless
}

// TestControllerNameserverGlue checks that the nameserver's own Service
// (apex dns1.kube-system: Service dns1 in kube-system) publishes the NS names
// and glue even when Services are not among the resources.
func TestControllerNameserverGlue(t *testing.T) {
	ctx := context.Background()
	// Each nameserver's namespace holds only its Service (see the top of the
	// file: the fake ignores the metadata.name field selector).
	ns := testutil.NamedService("kube-system", "dns1", "192.0.2.53", "2001:db8::53")
	ns2 := testutil.NamedService("other-system", "dns2", "198.51.100.53")
	client := fake.NewSimpleClientset(ns, ns2, testutil.NamedService("apps", "web", "192.0.2.80"))
	g := k8sStartGateway(t, client, []string{"example.com.", "example.org."}, func(g *Gateway) {
		g.resources = []string{"Ingress"}
		g.secondary = "dns2.other-system"
	})

	for _, zone := range []string{"example.com.", "example.org."} {
		k8sAnswers(t, g, zone, dns.TypeNS, k8sExpect(t, "NOERROR",
			[]string{zone + " 60 IN NS dns1.kube-system." + zone, zone + " 60 IN NS dns2.other-system." + zone},
			"dns1.kube-system."+zone+" 60 IN A 192.0.2.53", "dns1.kube-system."+zone+" 60 IN AAAA 2001:db8::53",
			"dns2.other-system."+zone+" 60 IN A 198.51.100.53"))
	}
	k8sAnswers(t, g, "dns1.kube-system.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"dns1.kube-system.example.com. 60 IN A 192.0.2.53"}))
	// Services are not published: only the nameserver's.
	k8sAnswers(t, g, "web.apps.example.com.", dns.TypeA, k8sNX)

	// The nameserver's address changes: the glue follows.
	ns.Status = testutil.ServiceLB("192.0.2.54")
	if _, err := client.CoreV1().Services("kube-system").UpdateStatus(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	nsSet := []string{"example.com. 60 IN NS dns1.kube-system.example.com.", "example.com. 60 IN NS dns2.other-system.example.com."}
	k8sAnswers(t, g, "example.com.", dns.TypeNS, k8sExpect(t, "NOERROR", nsSet,
		"dns1.kube-system.example.com. 60 IN A 192.0.2.54", "dns2.other-system.example.com. 60 IN A 198.51.100.53"))

	// Without the Service, its NS name has no glue.
	if err := client.CoreV1().Services("kube-system").Delete(ctx, "dns1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "example.com.", dns.TypeNS, k8sExpect(t, "NOERROR", nsSet, "dns2.other-system.example.com. 60 IN A 198.51.100.53"))
}

// TestControllerTwoGateways runs two plugin instances with different zones
// and options on one client: neither sees the other's zones or filters.
func TestControllerTwoGateways(t *testing.T) {
	client := fake.NewSimpleClientset()
	g1 := k8sStartGateway(t, client, []string{"example.com."}, func(g *Gateway) {
		g.ingressClasses = []string{"nginx"}
		g.ttl = 30
	})
	g2 := k8sStartGateway(t, client, []string{"example.org."}, nil)

	k8sCreate(t, client, testutil.WithIngressClass(testutil.NamedIngress("default", "a", []string{"a.example.com", "a.example.org"}, "192.0.2.1"), "nginx"))
	k8sCreate(t, client, testutil.WithIngressClass(testutil.NamedIngress("default", "b", []string{"b.example.com", "b.example.org"}, "192.0.2.2"), "traefik"))

	k8sAnswers(t, g1, "a.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"a.example.com. 30 IN A 192.0.2.1"}))
	k8sAnswers(t, g2, "a.example.org.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"a.example.org. 60 IN A 192.0.2.1"}))
	k8sAnswers(t, g2, "b.example.org.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"b.example.org. 60 IN A 192.0.2.2"}))
	// g1's class filter hides b; its zone does not include example.org
	// (with no next plugin, the query fails instead of being answered).
	k8sAnswers(t, g1, "b.example.com.", dns.TypeA, k8sNX)
	for _, tc := range []struct {
		g    *Gateway
		name string
	}{{g1, "a.example.org."}, {g2, "a.example.com."}} {
		if _, _, err := k8sAsk(tc.g, tc.name, dns.TypeA); err == nil || !strings.Contains(err.Error(), "no next plugin") {
			t.Errorf("%s outside the zones: error %v, want no next plugin", tc.name, err)
		}
		if tc.g.index.Snapshot().Has(tc.name) {
			t.Errorf("%s is in the other instance's index", tc.name)
		}
	}
}

// TestControllerForbiddenKind makes the API server refuse to list Ingresses:
// the kind is disabled, Services still answer, the plugin becomes ready, and
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
	g := k8sStartGateway(t, client, []string{"example.com."}, nil)

	if got, want := k8sAnswer(g, "db.apps.example.com.", dns.TypeA), k8sExpect(t, "NOERROR", []string{"db.apps.example.com. 60 IN A 192.0.2.20"}); got != want {
		t.Errorf("Service: got %s, want %s", got, want)
	}
	if got := k8sAnswer(g, "www.example.com.", dns.TypeA); got != k8sNX {
		t.Errorf("forbidden Ingress: got %s, want %s", got, k8sNX)
	}
	// The disabled kind is probed again, and stays disabled while forbidden.
	testutil.Eventually(t, "re-probing", func() string {
		if refused.Load() < 3 {
			return "fewer than 3 list calls"
		}
		return ""
	})
	if !g.Ready() {
		t.Error("not ready with a forbidden kind")
	}

	forbidden.Store(false)
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.1"}))
}

// TestControllerUnreachableAPI starts against an API server that only fails:
// start gives up after startupWait, the plugin answers SERVFAIL and is not
// ready, and stop ends the retries at once.
func TestControllerUnreachableAPI(t *testing.T) {
	client := fake.NewSimpleClientset()
	client.PrependReactor("list", "*", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("etcd is down")
	})
	g := k8sNewGateway(client, []string{"example.com."}, func(g *Gateway) { g.timing.startupWait = 200 * time.Millisecond })
	begin := time.Now()
	if err := g.start(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d < g.timing.startupWait {
		t.Errorf("start returned after %s, before startupWait", d)
	}
	if g.Ready() {
		t.Error("ready without a synced informer")
	}
	if got, want := k8sAnswer(g, "www.example.com.", dns.TypeA), "no reply, rcode SERVFAIL"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	stopped := make(chan struct{})
	go func() {
		g.stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("stop did not return while retrying")
	}
}

// TestControllerFilters checks the serviceLabelSelectors and namespaces
// options, and that neither hides the nameserver's own Service.
func TestControllerFilters(t *testing.T) {
	exposed := testutil.NamedService("apps", "exposed", "192.0.2.1")
	exposed.Labels = map[string]string{"expose": "yes"}
	otherNS := testutil.NamedService("other", "exposed", "192.0.2.2")
	otherNS.Labels = map[string]string{"expose": "yes"}
	// Created before the start: the fake filters lists by label, not watches.
	client := fake.NewSimpleClientset(exposed, otherNS, testutil.NamedService("apps", "hidden", "192.0.2.3"),
		testutil.NamedService("kube-system", "dns1", "192.0.2.53"))
	g := k8sStartGateway(t, client, []string{"example.com."}, func(g *Gateway) {
		g.labelSelectors["Service"] = "expose=yes"
		g.namespaces = []string{"apps"}
	})
	k8sAnswers(t, g, "exposed.apps.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"exposed.apps.example.com. 60 IN A 192.0.2.1"}))
	k8sAnswers(t, g, "exposed.other.example.com.", dns.TypeA, k8sNX)
	k8sAnswers(t, g, "hidden.apps.example.com.", dns.TypeA, k8sNX)
	k8sAnswers(t, g, "example.com.", dns.TypeNS, k8sExpect(t, "NOERROR",
		[]string{"example.com. 60 IN NS dns1.kube-system.example.com."}, "dns1.kube-system.example.com. 60 IN A 192.0.2.53"))
}

// TestControllerStopLeavesNoGoroutines starts and stops plugin instances as
// a Corefile reload does (a new instance is started, the old one stopped) and
// checks that no goroutine is left behind.
func TestControllerStopLeavesNoGoroutines(t *testing.T) {
	client := fake.NewSimpleClientset(testutil.NamedIngress("default", "web", []string{"www.example.com"}, "192.0.2.1"),
		testutil.NamedService("kube-system", "dns1", "192.0.2.53"))
	forbidding := fake.NewSimpleClientset(testutil.NamedService("apps", "db", "192.0.2.20"))
	var probes atomic.Int64
	forbidding.PrependReactor("list", "ingresses", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		probes.Add(1)
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}, "", errors.New("RBAC"))
	})
	cycle := func(i int) {
		c, name, want := kubernetes.Interface(client), "www.example.com.", "192.0.2.1"
		if i%2 == 1 { // with a disabled kind, so that the re-probe loop runs
			c, name, want = forbidding, "db.apps.example.com.", "192.0.2.20"
		}
		before := probes.Load()
		g := k8sNewGateway(c, []string{"example.com."}, nil)
		if err := g.start(); err != nil {
			t.Fatal(err)
		}
		if got, w := k8sAnswer(g, name, dns.TypeA), k8sExpect(t, "NOERROR", []string{name + " 60 IN A " + want}); got != w {
			t.Errorf("cycle %d: got %s, want %s", i, got, w)
		}
		if i%2 == 1 {
			// Let a re-probe run.
			testutil.Eventually(t, "a re-probe", func() string {
				if probes.Load() < before+2 {
					return fmt.Sprintf("%d probes", probes.Load()-before)
				}
				return ""
			})
		}
		g.stop()
	}
	cycle(0) // warm up: packages start their own goroutines once
	cycle(1)
	before := runtime.NumGoroutine()
	for i := range 5 {
		cycle(i)
	}
	testutil.Eventually(t, "goroutines", func() string {
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			return fmt.Sprintf("%d goroutines, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
		}
		return ""
	})
}

// k8sCtrl returns the controller of a Gateway without cluster blocks.
func k8sCtrl(g *Gateway) *watch.Controller { return g.fleet.List()[0].Controller }
