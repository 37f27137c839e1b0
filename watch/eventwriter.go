package watch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
)

// EventSink is an API client that can write Events: the API server's events
// resource (restAPI), or a fake one in tests (watchtest.API). Its methods
// take plain values, so that a fake needs nothing of this package.
type EventSink interface {
	// ObjectUID returns the UID of the object apiVersion/kind namespace/name,
	// "" when it cannot tell: kubectl describe shows the Events whose
	// involvedObject has it.
	ObjectUID(ctx context.Context, apiVersion, kind, namespace, name string) string
	// CreateEvent creates the Event object, a core/v1 Event, in namespace.
	CreateEvent(ctx context.Context, namespace string, object map[string]any) error
	// PatchEvent applies a JSON merge patch to the Event namespace/name.
	PatchEvent(ctx context.Context, namespace, name string, mergePatch []byte) error
}

// eventSink is where an eventWriter writes: an EventSink (apiEvents), or a
// recording one in tests.
type eventSink interface {
	uid(ctx context.Context, ref ObjectRef) string
	create(ctx context.Context, ev *event) error
	patch(ctx context.Context, namespace, name string, mergePatch []byte) error
}

// apiEvents writes an eventWriter's Events to an API client.
type apiEvents struct{ api EventSink }

func (a apiEvents) uid(ctx context.Context, ref ObjectRef) string {
	return a.api.ObjectUID(ctx, ref.ApiVersion, ref.Kind, ref.Namespace, ref.Name)
}

func (a apiEvents) create(ctx context.Context, ev *event) error {
	return a.api.CreateEvent(ctx, ev.about.Namespace, ev.Object())
}

func (a apiEvents) patch(ctx context.Context, namespace, name string, mergePatch []byte) error {
	return a.api.PatchEvent(ctx, namespace, name, mergePatch)
}

// Limits of an eventWriter, those of client-go's recorder for kubelet.
const (
	eventQueue     = 1000            // Events waiting to be written; more are dropped
	eventCacheSize = 4096            // Events remembered, to count repeats up
	eventBurst     = 25              // Events an object gets at once
	eventRefill    = 5 * time.Minute // and one more each this often
	eventTimeout   = 10 * time.Second
	eventTries     = 3 // attempts at a write that failed for a transient reason
)

// eventWriter writes Events about objects in the background. An Event
// repeated (same object, type, reason and message) counts up, by a patch of
// its count and lastTimestamp, instead of piling up. Each object gets at most
// eventBurst Events at once and one more each eventRefill. Emitting never
// blocks: Events wait in a bounded queue and are dropped when it is full.
type eventWriter struct {
	sink   eventSink
	queue  chan pendingEvent
	cancel context.CancelFunc
	done   chan struct{}
	now    func() time.Time
	retry  time.Duration // the first wait before another try

	// lastName is the time in the name of the last Event created, in Unix
	// nanoseconds: names are made of strictly increasing times.
	lastName int64

	// Owned by the writing goroutine.
	sent    boundedMap[eventKey, *sentEvent]
	budgets boundedMap[ObjectRef, *eventBudget]
}

// ObjectRef names the object an Event is about (its involvedObject).
type ObjectRef struct{ ApiVersion, Kind, Namespace, Name string }

// Types of Events.
const eventWarning = "Warning"

// event is an Event of the core API group, as the plugin writes it.
type event struct {
	name                  string
	about                 ObjectRef
	uid                   string // of the object about, if known
	kind, reason, message string // kind is the Event's type: Warning or Normal
	first, last           time.Time
	count                 int32
}

func (ev *event) involvedObject() map[string]any {
	o := map[string]any{"apiVersion": ev.about.ApiVersion, "kind": ev.about.Kind, "namespace": ev.about.Namespace, "name": ev.about.Name}
	if ev.uid != "" {
		o["uid"] = ev.uid
	}
	return o
}

// Object returns ev as the API server reads a core/v1 Event.
func (ev *event) Object() map[string]any {
	return map[string]any{
		"apiVersion":         "v1",
		"kind":               "Event",
		"metadata":           map[string]any{"name": ev.name, "namespace": ev.about.Namespace},
		"involvedObject":     ev.involvedObject(),
		"type":               ev.kind,
		"reason":             ev.reason,
		"message":            ev.message,
		"source":             map[string]any{"component": metrics.Plugin},
		"reportingComponent": metrics.Plugin,
		"firstTimestamp":     ev.first.UTC().Format(time.RFC3339),
		"lastTimestamp":      ev.last.UTC().Format(time.RFC3339),
		"count":              int64(ev.count),
	}
}

// pendingEvent is an Event emitted and not yet written.
type pendingEvent struct {
	ref                   ObjectRef
	kind, reason, message string
	at                    time.Time
}

// eventKey identifies the Events that count up together.
type eventKey struct {
	ref                   ObjectRef
	kind, reason, message string
}

// sentEvent is an Event written: its name, its object's UID and what it
// has counted.
type sentEvent struct {
	name, uid string
	first     time.Time
	count     int32
}

// eventBudget is an object's token bucket.
type eventBudget struct {
	tokens float64
	at     time.Time
}

func newEventWriter(sink eventSink) *eventWriter {
	ctx, cancel := context.WithCancel(context.Background())
	w := &eventWriter{
		sink: sink, queue: make(chan pendingEvent, eventQueue), cancel: cancel, done: make(chan struct{}),
		now: time.Now, retry: time.Second,
		sent: newBoundedMap[eventKey, *sentEvent](eventCacheSize), budgets: newBoundedMap[ObjectRef, *eventBudget](eventCacheSize),
	}
	go w.run(ctx)
	return w
}

// emit queues an Event about ref, or drops it when the queue is full.
func (w *eventWriter) emit(ref ObjectRef, kind, reason, message string) {
	select {
	case w.queue <- pendingEvent{ref: ref, kind: kind, reason: reason, message: message, at: w.now()}:
	default:
		log.Debugf("Event %s on %s/%s dropped: %d Events are waiting", reason, ref.Namespace, ref.Name, eventQueue)
	}
}

// stop ends the writing, abandoning a write under way and what waits.
func (w *eventWriter) stop() {
	w.cancel()
	<-w.done
}

func (w *eventWriter) run(ctx context.Context) {
	defer close(w.done)
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
			return
		case p := <-w.queue:
			w.write(ctx, p)
		}
	}
}

// write writes p: a new Event, or a repeat that counts an earlier one up.
func (w *eventWriter) write(ctx context.Context, p pendingEvent) {
	if !w.allowed(p.ref, p.at) {
		log.Debugf("Event %s on %s/%s dropped: too many Events on the object", p.reason, p.ref.Namespace, p.ref.Name)
		return
	}
	key := eventKey{ref: p.ref, kind: p.kind, reason: p.reason, message: p.message}
	if s, ok := w.sent.get(key); ok {
		s.count++
		patch, _ := json.Marshal(map[string]any{"count": s.count, "lastTimestamp": metav1.NewTime(p.at)})
		err := w.try(ctx, func(ctx context.Context) error { return w.sink.patch(ctx, p.ref.Namespace, s.name, patch) })
		if !apierrors.IsNotFound(err) {
			w.logFailure(p, err)
			return
		}
		// Gone (Events expire): write it again, with what it has counted.
		w.create(ctx, p, s)
		return
	}
	stamp := max(p.at.UnixNano(), w.lastName+1)
	w.lastName = stamp
	s := &sentEvent{name: fmt.Sprintf("%s.%x", p.ref.Name, stamp), first: p.at, count: 1}
	if w.create(ctx, p, s) {
		w.sent.put(key, s)
	}
}

// create writes the Event s for p; false when it failed.
func (w *eventWriter) create(ctx context.Context, p pendingEvent, s *sentEvent) bool {
	if s.uid == "" {
		s.uid = w.sink.uid(ctx, p.ref)
	}
	ev := &event{name: s.name, about: p.ref, uid: s.uid, kind: p.kind, reason: p.reason, message: p.message, first: s.first, last: p.at, count: s.count}
	err := w.try(ctx, func(ctx context.Context) error { return w.sink.create(ctx, ev) })
	if apierrors.IsAlreadyExists(err) {
		err = nil
	}
	w.logFailure(p, err)
	return err == nil
}

// try calls write until it succeeds, fails for good, or has been tried
// eventTries times.
func (w *eventWriter) try(ctx context.Context, write func(context.Context) error) error {
	wait := w.retry
	for n := 1; ; n++ {
		wctx, cancel := context.WithTimeout(ctx, eventTimeout)
		err := write(wctx)
		cancel()
		if err == nil || n == eventTries || !transientEventError(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// transientEventError is true for errors that another try may not have.
func transientEventError(err error) bool {
	if _, ok := err.(apierrors.APIStatus); !ok {
		return true // no answer from the API server
	}
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err)
}

func (w *eventWriter) logFailure(p pendingEvent, err error) {
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Warningf("Event %s on %s %s/%s not written: %v", p.reason, p.ref.Kind, p.ref.Namespace, p.ref.Name, err)
	}
}

// allowed takes a token from ref's bucket, which holds eventBurst and
// gains one each eventRefill.
func (w *eventWriter) allowed(ref ObjectRef, at time.Time) bool {
	b, ok := w.budgets.get(ref)
	if !ok {
		b = &eventBudget{tokens: eventBurst, at: at}
		w.budgets.put(ref, b)
	}
	if elapsed := at.Sub(b.at); elapsed > 0 {
		b.tokens = min(eventBurst, b.tokens+float64(elapsed)/float64(eventRefill))
		b.at = at
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
