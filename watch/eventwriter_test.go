package watch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// recordingSink keeps what an eventWriter wrote, and fails as told.
type recordingSink struct {
	mu      sync.Mutex
	created []event
	patched []string // "namespace/name patch"
	fail    []error  // returned by the next calls, in order
	block   chan struct{}
}

func (s *recordingSink) next(ctx context.Context) error {
	if s.block != nil {
		select {
		case <-s.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.fail) == 0 {
		return nil
	}
	err := s.fail[0]
	s.fail = s.fail[1:]
	return err
}

func (s *recordingSink) uid(_ context.Context, ref ObjectRef) string { return "uid-" + ref.Name }

func (s *recordingSink) create(ctx context.Context, ev *event) error {
	if err := s.next(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.created = append(s.created, *ev)
	return nil
}

func (s *recordingSink) patch(ctx context.Context, namespace, name string, mergePatch []byte) error {
	if err := s.next(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.patched = append(s.patched, namespace+"/"+name+" "+string(mergePatch))
	return nil
}

func (s *recordingSink) counts() (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.created), len(s.patched)
}

// testEventWriter is an eventWriter that nobody runs: tests call write.
func testEventWriter(sink eventSink, now time.Time) *eventWriter {
	return &eventWriter{
		sink: sink, queue: make(chan pendingEvent, 2), done: make(chan struct{}), now: func() time.Time { return now },
		sent: newBoundedMap[eventKey, *sentEvent](eventCacheSize), budgets: newBoundedMap[ObjectRef, *eventBudget](eventCacheSize),
	}
}

var thief = ObjectRef{ApiVersion: "v1", Kind: "Service", Namespace: "team-b", Name: "thief"}

func pending(ref ObjectRef, message string, at time.Time) pendingEvent {
	return pendingEvent{ref: ref, kind: eventWarning, reason: eventNameRejected, message: message, at: at}
}

func TestEventWriterCountsRepeatsUp(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	sink := &recordingSink{}
	w := testEventWriter(sink, t0)
	w.write(ctx, pending(thief, "DNS name a", t0))
	w.write(ctx, pending(thief, "DNS name a", t0.Add(time.Second)))
	w.write(ctx, pending(thief, "DNS name a", t0.Add(2*time.Second)))
	w.write(ctx, pending(thief, "DNS name b", t0.Add(3*time.Second)))

	if len(sink.created) != 2 {
		t.Fatalf("created %d Events, want 2 (one per message): %+v", len(sink.created), sink.created)
	}
	ev := sink.created[0]
	if ev.about != thief || ev.kind != eventWarning || ev.reason != eventNameRejected || ev.message != "DNS name a" ||
		ev.count != 1 || !ev.first.Equal(t0) || !ev.last.Equal(t0) || ev.name != fmt.Sprintf("thief.%x", t0.UnixNano()) ||
		ev.uid != "uid-thief" || ev.involvedObject()["uid"] != "uid-thief" {
		t.Errorf("first Event: %+v", ev)
	}
	want := []string{
		fmt.Sprintf(`team-b/%s {"count":2,"lastTimestamp":"2026-11-24T01:00:01Z"}`, ev.name),
		fmt.Sprintf(`team-b/%s {"count":3,"lastTimestamp":"2026-11-24T01:00:02Z"}`, ev.name),
	}
	if fmt.Sprint(sink.patched) != fmt.Sprint(want) {
		t.Errorf("patches %q, want %q", sink.patched, want)
	}
}

func TestEventWriterRecreatesExpiredEvents(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	sink := &recordingSink{}
	w := testEventWriter(sink, t0)
	w.write(ctx, pending(thief, "DNS name a", t0))
	sink.fail = []error{apierrors.NewNotFound(schema.GroupResource{Resource: "events"}, "x")}
	w.write(ctx, pending(thief, "DNS name a", t0.Add(2*time.Hour)))
	if len(sink.created) != 2 {
		t.Fatalf("created %d Events, want the expired one again", len(sink.created))
	}
	again := sink.created[1]
	if again.count != 2 || !again.first.Equal(t0) || !again.last.Equal(t0.Add(2*time.Hour)) || again.name != sink.created[0].name {
		t.Errorf("recreated Event: %+v", again)
	}
}

func TestEventWriterRateLimitsPerObject(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	sink := &recordingSink{}
	w := testEventWriter(sink, t0)
	for i := range eventBurst + 5 {
		w.write(ctx, pending(thief, fmt.Sprintf("DNS name %d", i), t0))
	}
	other := thief
	other.Name = "other"
	w.write(ctx, pending(other, "DNS name 0", t0))
	if created, _ := sink.counts(); created != eventBurst+1 {
		t.Fatalf("created %d Events, want %d for the object and 1 for another", created, eventBurst)
	}
	w.write(ctx, pending(thief, "DNS name late", t0.Add(eventRefill/2)))
	w.write(ctx, pending(thief, "DNS name later", t0.Add(eventRefill)))
	w.write(ctx, pending(thief, "DNS name latest", t0.Add(eventRefill)))
	if created, _ := sink.counts(); created != eventBurst+2 {
		t.Errorf("created %d Events, want one more after %v", created, eventRefill)
	}
}

func TestEventWriterRetriesTransientErrors(t *testing.T) {
	ctx := context.Background()
	t0 := time.Now()
	tests := []struct {
		name    string
		fail    []error
		created int
	}{
		{"unreachable, then written", []error{errors.New("connection refused")}, 1},
		{"busy twice, then written", []error{apierrors.NewTooManyRequests("busy", 0), apierrors.NewServiceUnavailable("down")}, 1},
		{"unreachable every time", []error{errors.New("a"), errors.New("b"), errors.New("c")}, 0},
		{"forbidden: no retry", []error{apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "x", errors.New("no")), nil}, 0},
		{"already there", []error{apierrors.NewAlreadyExists(schema.GroupResource{Resource: "events"}, "x")}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &recordingSink{fail: tt.fail}
			w := testEventWriter(sink, t0)
			w.retry = time.Millisecond
			w.write(ctx, pending(thief, "DNS name a", t0))
			if created, _ := sink.counts(); created != tt.created {
				t.Errorf("created %d, want %d", created, tt.created)
			}
		})
	}
}

// within fails the test when f has not returned after a while.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still blocked", what)
	}
}

func TestEventWriterNeverBlocks(t *testing.T) {
	sink := &recordingSink{block: make(chan struct{})}
	w := newEventWriter(sink)
	within(t, "emitting more Events than the queue holds", func() {
		for i := range eventQueue + 10 {
			w.emit(thief, eventWarning, eventNameRejected, fmt.Sprintf("DNS name %d", i))
		}
	})
	close(sink.block)
	testutil.Eventually(t, "the Events", func() string {
		if created, _ := sink.counts(); created != eventBurst {
			return fmt.Sprintf("%d written, want %d", created, eventBurst)
		}
		return ""
	})
	w.stop()
}

func TestEventWriterStopAbandonsWrites(t *testing.T) {
	sink := &recordingSink{block: make(chan struct{})}
	w := newEventWriter(sink)
	w.emit(thief, eventWarning, eventNameRejected, "DNS name a")
	w.emit(thief, eventWarning, eventNameRejected, "DNS name b")
	within(t, "stopping while a write hangs", w.stop)
	if created, _ := sink.counts(); created != 0 {
		t.Errorf("%d Events written after stop", created)
	}
}

// TestEventWriterNamesAreUnique: Events made at the same moment, about one
// object, get names of their own.
func TestEventWriterNamesAreUnique(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	sink := &recordingSink{}
	w := testEventWriter(sink, t0)
	for _, m := range []string{"DNS name a", "DNS name b", "DNS name c"} {
		w.write(context.Background(), pending(thief, m, t0))
	}
	seen := map[string]bool{}
	for _, ev := range sink.created {
		if seen[ev.name] {
			t.Errorf("two Events named %s", ev.name)
		}
		seen[ev.name] = true
	}
	if len(seen) != 3 {
		t.Errorf("%d Events, want 3", len(seen))
	}
}
