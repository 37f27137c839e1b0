package watch

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"k8s.io/client-go/tools/cache"
)

// gatedHandler records the events it handles; each waits for a value on
// gate first, when gate is set.
type gatedHandler struct {
	gate chan struct{}
	mu   sync.Mutex
	got  []string
	done chan string // every event handled, when set
}

func (h *gatedHandler) handle(s string) {
	if h.gate != nil {
		<-h.gate
	}
	h.mu.Lock()
	h.got = append(h.got, s)
	h.mu.Unlock()
	if h.done != nil {
		h.done <- s
	}
}

func (h *gatedHandler) OnAdd(obj any, initial bool) { h.handle(fmt.Sprintf("add %v %v", obj, initial)) }
func (h *gatedHandler) OnUpdate(old, obj any)       { h.handle(fmt.Sprintf("update %v %v", old, obj)) }
func (h *gatedHandler) OnDelete(obj any)            { h.handle(fmt.Sprintf("delete %v", obj)) }

// syncedRegistration has a HasSynced that says what the test sets.
type syncedRegistration struct {
	mu     sync.Mutex
	synced bool
}

func (r *syncedRegistration) HasSynced() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.synced
}

// TestQueuedOrder: the handler gets every event in the order the
// informer gave them, across the queue's blocks, and the queue keeps no
// block once it is read.
func TestQueuedOrder(t *testing.T) {
	for _, n := range []int{1, 127, 128, 129, 1000} {
		h := &gatedHandler{done: make(chan string, n+2)}
		q := newQueued(h)
		var want []string
		for i := range n {
			q.OnAdd(i, i%2 == 0)
			want = append(want, fmt.Sprintf("add %d %v", i, i%2 == 0))
		}
		q.OnUpdate(1, 2)
		q.OnDelete(3)
		want = append(want, "update 1 2", "delete 3")
		for range want {
			<-h.done
		}
		if !slices.Equal(h.got, want) {
			t.Errorf("%d events: handled %q", n, h.got)
		}
		q.mu.Lock()
		if q.head != nil || q.tail != nil || q.initial != 0 {
			t.Errorf("%d events: the queue keeps blocks (%p, %p) or %d initial events", n, q.head, q.tail, q.initial)
		}
		q.mu.Unlock()
		q.stop()
	}
}

// TestQueuedSynced: synced waits until the informer has handed over its
// initial list and the handler has handled every event of it; events
// after the list do not hold it back.
func TestQueuedSynced(t *testing.T) {
	h := &gatedHandler{gate: make(chan struct{}), done: make(chan string, 10)}
	q := newQueued(h)
	reg := &syncedRegistration{}
	synced := q.synced(reg.HasSynced)
	q.OnAdd("a", true)
	q.OnAdd("b", true)
	if synced() {
		t.Fatal("synced before the informer handed over its list")
	}
	reg.mu.Lock()
	reg.synced = true
	reg.mu.Unlock()
	q.OnAdd("c", false)
	for i, want := range []bool{false, true, true} { // after a, b, then c
		if i < 2 && synced() {
			t.Fatalf("synced with %d events of the list not handled", 2-i)
		}
		h.gate <- struct{}{}
		<-h.done
		if got := synced(); got != want {
			t.Errorf("after %d events: synced %v, want %v", i+1, got, want)
		}
	}
	q.stop()
}

// TestQueuedStop: stop drops what is not handled yet and takes nothing
// more; the event being handled finishes.
func TestQueuedStop(t *testing.T) {
	h := &gatedHandler{gate: make(chan struct{}), done: make(chan string, 10)}
	q := newQueued(h)
	q.OnAdd("a", false)
	q.OnAdd("b", false)
	stopped := make(chan struct{})
	go func() {
		for q.queuedLen() > 1 { // wait until a is being handled
		}
		q.stop()
		close(stopped)
	}()
	<-stopped
	q.OnAdd("c", false)
	h.gate <- struct{}{} // a finishes
	<-h.done
	close(h.gate) // nothing else may come
	q.mu.Lock()
	defer q.mu.Unlock()
	if !slices.Equal(h.got, []string{"add a false"}) || q.head != nil {
		t.Errorf("handled %q after stop, queue %p", h.got, q.head)
	}
}

// queuedLen returns the number of events queued and not taken.
func (q *queued) queuedLen() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for b := q.head; b != nil; b = b.next {
		n += b.used - b.read
	}
	return n
}

var _ cache.ResourceEventHandler = (*queued)(nil)
