package watch

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// TestControllerComplete: a controller's view is whole once it has synced
// and every kind is read; otherwise it says what is missing.
func TestControllerComplete(t *testing.T) {
	forbidIngresses := func(client *fake.Clientset) {
		client.PrependReactor("list", "ingresses", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "ingresses"}, "", errors.New("no Role"))
		})
	}
	for _, tt := range []struct {
		name    string
		setup   func(*fake.Clientset)
		start   bool
		within  time.Duration
		missing string // "": complete
	}{
		{"not started", nil, false, time.Minute, "have not synced yet"},
		{"synced, heard from within the minute", nil, true, time.Minute, ""},
		{"a kind refused by RBAC", forbidIngresses, true, time.Minute, "Ingress cannot be read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewSimpleClientset(testutil.NamedService("apps", "web", "192.0.2.1"))
			if tt.setup != nil {
				tt.setup(client)
			}
			p := newPipeline(t, testConfig("example.com."), watchtest.API{Core: client})
			if tt.start {
				p.start(t)
			}
			ok, why := p.c.Complete(tt.within)
			if ok != (tt.missing == "") || !strings.Contains(why, tt.missing) {
				t.Errorf("Complete: %v %q, want missing %q", ok, why, tt.missing)
			}
		})
	}
}

// TestControllerContact: SinceContact knows nothing before an informer
// runs; Ping fails then, and once one runs counts as contact.
func TestControllerContact(t *testing.T) {
	ctx := context.Background()
	p := newPipeline(t, testConfig("example.com."), watchtest.API{Core: fake.NewSimpleClientset()})
	if _, ok := p.c.SinceContact(); ok {
		t.Error("SinceContact before start: known")
	}
	if err := p.c.Ping(ctx); err == nil {
		t.Error("Ping before start: no error")
	}
	p.start(t)
	if d, ok := p.c.SinceContact(); !ok || d > time.Minute {
		t.Errorf("SinceContact after the sync: %v %v", d, ok)
	}
	before := time.Now()
	time.Sleep(10 * time.Millisecond)
	if err := p.c.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if d, ok := p.c.SinceContact(); !ok || d > time.Since(before) {
		t.Errorf("SinceContact after Ping: %v %v, want at most %v", d, ok, time.Since(before))
	}
}

// TestControllerContactShared: a controller that joins the informers of
// another (the blocks of a reloaded Corefile join those of the instance they
// replace) knows of that one's pings: a quiet cluster that answered a ping
// of the old instance has not been silent since its last event.
func TestControllerContactShared(t *testing.T) {
	client := fake.NewSimpleClientset(testutil.NamedService("apps", "web", "192.0.2.1"))
	api := watchtest.API{Core: client, Share: "cluster-1"}
	old := newPipeline(t, testConfig("example.com."), api)
	old.start(t)
	reloaded := newPipeline(t, testConfig("example.com."), api)
	reloaded.start(t)
	time.Sleep(10 * time.Millisecond) // the informer's last list is older than the ping
	before := time.Now()
	if err := old.c.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if d, ok := reloaded.c.SinceContact(); !ok || d > time.Since(before) {
		t.Errorf("SinceContact of the block that joined, after the other's Ping: %v %v, want at most %v", d, ok, time.Since(before))
	}
}

// TestControllerCompleteAfterEnable: a kind refused at the start and allowed
// later is complete only once its objects are in the sink. Complete is
// polled as fast as it answers while the kind is enabled, in several rounds,
// since the decision it guards (who owns a name) must never see the moment
// between.
func TestControllerCompleteAfterEnable(t *testing.T) {
	for round := range 20 {
		client := fake.NewSimpleClientset(testutil.NamedIngress("team-a", "web", []string{"www.example.com"}, "192.0.2.1"))
		var forbidden atomic.Bool
		forbidden.Store(true)
		client.PrependReactor("list", "ingresses", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
			if !forbidden.Load() {
				return false, nil, nil
			}
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}, "", errors.New("no Role"))
		})
		p := newPipeline(t, testConfig("example.com."), watchtest.API{Core: client})
		p.start(t)
		if ok, _ := p.c.Complete(time.Minute); ok {
			t.Fatalf("round %d: complete while Ingresses are refused", round)
		}
		forbidden.Store(false)
		deadline := time.Now().Add(10 * time.Second)
		for {
			if ok, _ := p.c.Complete(time.Minute); ok {
				if owners := p.ix.OwnersBelow("www.example.com."); len(owners) == 0 {
					t.Fatalf("round %d: complete, but the Ingress is not in the index", round)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: not complete 10s after the Ingresses were allowed", round)
			}
		}
		p.c.Stop()
	}
}
