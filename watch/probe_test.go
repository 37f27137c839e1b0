package watch

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// TestProbeAllTransientErrorDelaysOnlyItsKind: Ingresses fail with a 500
// (a webhook down, say); Services still start, the controller has synced
// at the end of the startup wait, the Ingress kind shows as disabled and starts
// once it lists again.
func TestProbeAllTransientErrorDelaysOnlyItsKind(t *testing.T) {
	client := fake.NewSimpleClientset(
		testutil.NamedIngress("default", "web", []string{"www.example.com"}, "192.0.2.1"),
		testutil.NamedService("apps", "db", "192.0.2.20"),
	)
	var failing atomic.Bool
	failing.Store(true)
	client.PrependReactor("list", "ingresses", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		if failing.Load() {
			return true, nil, apierrors.NewInternalError(errors.New("conversion webhook unreachable"))
		}
		return false, nil, nil
	})
	zones := []string{"probeall.example.com.", "example.com."}
	cfg := testConfig(zones...)
	cfg.Timing.StartupWait = 300 * time.Millisecond
	g := startPipeline(t, cfg, watchtest.API{Core: client})
	if got, want := g.answer("db.apps.example.com.", dns.TypeA), expect(t, "NOERROR", []string{"db.apps.example.com. 60 IN A 192.0.2.20"}); got != want {
		t.Errorf("Service: got %s, want %s", got, want)
	}
	var m dto.Metric
	testutil.Eventually(t, "kind_enabled{Ingress, reason=failing} 0", func() string {
		if err := kindEnabled.WithLabelValues("probeall.example.com.", "Ingress", "", "", offFailing).Write(&m); err != nil {
			return err.Error()
		}
		if m.GetGauge().GetValue() != 0 {
			return "not 0"
		}
		return ""
	})
	failing.Store(false)
	g.answers(t, "www.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.1"}))
}

// TestProbeAllWaitsWhileNothingWorks: with every kind failing, probeAll
// does not give up at the startup wait (there is nothing to serve).
func TestProbeAllWaitsWhileNothingWorks(t *testing.T) {
	client := fake.NewSimpleClientset(testutil.NamedService("apps", "db", "192.0.2.20"))
	var calls atomic.Int32
	client.PrependReactor("list", "*", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		if calls.Add(1) < 30 {
			return true, nil, apierrors.NewServiceUnavailable("starting")
		}
		return false, nil, nil
	})
	cfg := testConfig("example.com.")
	cfg.Timing.StartupWait = 50 * time.Millisecond
	c := newPipeline(t, cfg, watchtest.API{Core: client}).c
	t.Cleanup(c.Stop)
	p := &prober{api: c.api, timing: cfg.Timing, stop: make(chan struct{}), joinable: c.share.joinable}
	errs := p.all(c.watches())
	for i, err := range errs {
		if err != nil {
			t.Errorf("kind %d: %v, want it probed until it works", i, err)
		}
	}
}

// TestProbeAllWorksAfterTheWait: a kind refused while the API server's
// authorizer starts works only after the startup wait has ended, while
// another is still refused: the wait ends once, and a kind that works
// afterwards arms nothing (a second end closed a channel already given up:
// a panic).
func TestProbeAllWorksAfterTheWait(t *testing.T) {
	client := fake.NewSimpleClientset(testutil.NamedService("a", "db", "192.0.2.20"))
	var mu sync.Mutex
	calls := map[string]int{}
	aWorked := false
	client.PrependReactor("list", "ingresses", func(a k8stesting.Action) (bool, k8sruntime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		ns := a.GetNamespace()
		calls[ns]++
		refused := apierrors.NewForbidden(schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}, "", nil)
		switch {
		case ns == "a" && calls[ns] == 1:
			return true, nil, refused // works at its retry, after the startup wait
		case ns == "a":
			aWorked = true
		case !aWorked || calls["b:after"] == 0:
			if aWorked {
				calls["b:after"]++
			}
			return true, nil, refused // still refused once a worked
		}
		return false, nil, nil
	})
	cfg := testConfig("example.com.")
	cfg.Namespaces = []string{"a", "b"}
	cfg.Timing.StartupWait = time.Millisecond
	cfg.Timing.RefusalGrace = time.Minute
	c := newPipeline(t, cfg, watchtest.API{Core: client}).c
	t.Cleanup(c.Stop)
	p := &prober{api: c.api, timing: cfg.Timing, stop: make(chan struct{}), joinable: c.share.joinable}
	for i, err := range p.all(c.watches()) {
		if err != nil {
			t.Errorf("kind %d: %v, want it probed until it works", i, err)
		}
	}
}

// TestProberOutcomes: what one probe of a kind returns, by what listing it
// answers: nothing to wait for when it works or is not served; a refusal
// retried through its grace, then returned; a transient error retried until
// another kind's giveUp (errSlow) or the controller's stop (errStopped).
func TestProberOutcomes(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "", errors.New("no Role"))
	for _, tt := range []struct {
		name     string
		answer   error // of every list of Services
		giveUp   bool  // closed from the start
		stop     bool  // closed from the start
		want     func(error) bool
		retrying bool // listed more than once
	}{
		{"lists", nil, false, false, func(err error) bool { return err == nil }, false},
		{"not served", apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, ""), false, false, apierrors.IsNotFound, false},
		{"refused beyond the grace", forbidden, true, false, apierrors.IsForbidden, true},
		{"transient, another kind works", apierrors.NewServiceUnavailable("starting"), true, false, func(err error) bool { return errors.Is(err, errSlow) }, false},
		{"transient, stopped", apierrors.NewServiceUnavailable("starting"), false, true, func(err error) bool { return errors.Is(err, errStopped) }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewSimpleClientset()
			var lists atomic.Int32
			client.PrependReactor("list", "services", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
				lists.Add(1)
				return tt.answer != nil, nil, tt.answer
			})
			giveUp, stop := make(chan struct{}), make(chan struct{})
			if tt.giveUp {
				close(giveUp)
			}
			if tt.stop {
				close(stop)
			}
			timing := testTiming
			timing.RefusalGrace = 30 * time.Millisecond
			p := &prober{api: watchtest.API{Core: client}, timing: timing, stop: stop, joinable: func(*watched) bool { return false }}
			svc := source.KindByName("Service")
			err := p.probe(&watched{Kind: svc, Version: svc, Options: func(*metav1.ListOptions) {}}, giveUp)
			if !tt.want(err) {
				t.Errorf("probe: %v", err)
			}
			if n := lists.Load(); (n > 1) != tt.retrying {
				t.Errorf("listed %d times, retrying %v", n, tt.retrying)
			}
		})
	}
}

// TestColdStartRefusalPastGrace: a refusal that lasts past the grace
// disables its kind, as RBAC that forbids it does: the controller syncs
// only after the grace, and the other kinds answer.
func TestColdStartRefusalPastGrace(t *testing.T) {
	client := fake.NewSimpleClientset(
		testutil.NamedIngress("default", "web", []string{"www.example.com"}, "192.0.2.1"),
		testutil.NamedService("apps", "db", "192.0.2.20"),
	)
	client.PrependReactor("list", "ingresses", func(a k8stesting.Action) (bool, k8sruntime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}, "", nil)
	})
	const grace = 300 * time.Millisecond
	cfg := testConfig("example.com.")
	cfg.Timing.RefusalGrace = grace
	p := newPipeline(t, cfg, watchtest.API{Core: client})
	start := time.Now()
	p.start(t)
	if d := time.Since(start); d < grace {
		t.Errorf("synced after %s, before the grace of %s", d, grace)
	}
	p.answers(t, "db.apps.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"db.apps.example.com. 60 IN A 192.0.2.20"}))
	p.answers(t, "www.example.com.", dns.TypeA, nx)
}
