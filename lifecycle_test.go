package gateway

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// The plugin's own lifecycle (lifecycle.go) on a controller: readiness,
// the startup wait, stop. What the controller publishes is watch's test.

// TestLifecycleStartStop: before start the plugin is not ready and answers
// SERVFAIL; start returns once the controller has synced, ready, with what
// the first list brought answered at once; stop ends readiness, twice.
func TestLifecycleStartStop(t *testing.T) {
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

	g.stop()
	if g.Ready() {
		t.Error("ready after stop")
	}
	g.stop() // a second stop is harmless
}

// TestLifecycleUnreachableAPI starts against an API server that only fails:
// start gives up after startupWait, the plugin answers SERVFAIL and is not
// ready, and stop ends the retries at once.
func TestLifecycleUnreachableAPI(t *testing.T) {
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

// TestLifecycleStopLeavesNoGoroutines starts and stops plugin instances as
// a Corefile reload does (a new instance is started, the old one stopped) and
// checks that no goroutine is left behind.
func TestLifecycleStopLeavesNoGoroutines(t *testing.T) {
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
