package watch

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// eventsListener tells the index's rejections and conflicts to a
// controller's Events, as the plugin's listener does for the objects of a
// block without cluster blocks.
type eventsListener struct{ ev atomic.Pointer[Events] }

func (*eventsListener) SerialChanged(string, uint32) {}
func (*eventsListener) Conflict(string, string)      {}

func (l *eventsListener) Rejected(r index.Rejection) {
	if e := l.ev.Load(); e != nil {
		e.Rejected(r)
	}
}

func (l *eventsListener) Conflicted(c index.Conflict) {
	if e := l.ev.Load(); e != nil {
		e.Conflicted(c)
	}
}

// startWithEvents is startPipeline with the controller's Events told of
// the index's rejections and conflicts.
func startWithEvents(t *testing.T, cfg Config, api API) *pipeline {
	t.Helper()
	l := &eventsListener{}
	p := newPipeline(t, cfg, api, func(c *index.Config) { c.Listener = l })
	ev, err := p.c.Events()
	if err != nil || ev == nil {
		t.Fatalf("events: %v %v", ev, err)
	}
	t.Cleanup(ev.Stop)
	l.ev.Store(ev)
	p.start(t)
	return p
}

func TestControllerRejectionEvents(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	cfg := testConfig("example.com.")
	cfg.Resources, cfg.Ownership = []string{"Service"}, index.First
	startWithEvents(t, cfg, watchtest.API{Core: client})
	create(t, client, testutil.ClaimingService("team-a", "shop", 100, "shop.example.com", "192.0.2.1"))
	create(t, client, testutil.ClaimingService("team-b", "thief", 200, "shop.example.com,*.example.com", "192.0.2.66"))
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
	create(t, client, testutil.ClaimingService("team-a", "shop2", 300, "shop.example.com", "192.0.2.2"))
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
	cfg := testConfig("example.com.")
	cfg.Resources = []string{"Service"}
	startWithEvents(t, cfg, watchtest.API{Core: client})
	create(t, client, testutil.ClaimingService("team-a", "shop", 100, "shop.example.com", "192.0.2.1"))
	create(t, client, testutil.ClaimingService("team-b", "thief", 200, "shop.example.com", "192.0.2.66"))
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
