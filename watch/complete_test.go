package watch

import (
	"context"
	"errors"
	"strings"
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
