package watch

import (
	"sync"

	"k8s.io/client-go/tools/cache"
)

// queued is a controller's handler on a shared informer: it takes each
// event at once into a queue of its own and hands it to the handler on a
// goroutine of its own, in order. client-go keeps, per handler, a ring of
// the events the handler has not read yet, which grows and never shrinks:
// a block that joins a running informer gets its whole cache at once,
// faster than it publishes, and kept 2 MiB of ring per view at 100,000
// objects. Here the ring stays small, and the queue's blocks are freed as
// they are read.
type queued struct {
	h cache.ResourceEventHandler

	mu      sync.Mutex
	wake    sync.Cond
	head    *eventBlock // read from
	tail    *eventBlock // written to
	initial int         // events of the initial list queued and not handled yet
	stopped bool
}

// notice is one call of a cache.ResourceEventHandler.
type notice struct {
	op       uint8 // opAdd, opUpdate, opDelete
	initial  bool  // an add of the initial list
	old, obj any
}

const (
	opAdd = iota
	opUpdate
	opDelete
)

// eventBlock is a piece of the queue.
type eventBlock struct {
	events     [128]notice
	read, used int
	next       *eventBlock
}

// newQueued returns h behind a queue, handling events until stop.
func newQueued(h cache.ResourceEventHandler) *queued {
	q := &queued{h: h}
	q.wake.L = &q.mu
	go q.run()
	return q
}

func (q *queued) OnAdd(obj any, initial bool) {
	q.put(notice{op: opAdd, initial: initial, obj: obj})
}
func (q *queued) OnUpdate(old, obj any) { q.put(notice{op: opUpdate, old: old, obj: obj}) }
func (q *queued) OnDelete(obj any)      { q.put(notice{op: opDelete, obj: obj}) }

func (q *queued) put(e notice) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return
	}
	if q.tail == nil || q.tail.used == len(q.tail.events) {
		b := &eventBlock{}
		if q.tail == nil {
			q.head = b
		} else {
			q.tail.next = b
		}
		q.tail = b
	}
	q.tail.events[q.tail.used] = e
	q.tail.used++
	if e.initial {
		q.initial++
	}
	q.wake.Signal()
}

// run hands the events to the handler until stop.
func (q *queued) run() {
	for {
		q.mu.Lock()
		for !q.stopped && (q.head == nil || q.head.read == q.head.used) {
			q.wake.Wait()
		}
		if q.stopped {
			q.mu.Unlock()
			return
		}
		b := q.head
		e := b.events[b.read]
		b.events[b.read] = notice{}
		if b.read++; b.read == len(b.events) || b == q.tail && b.read == b.used {
			q.head = b.next // a block read to its end, or the last one emptied, goes
			if q.head == nil {
				q.tail = nil
			}
		}
		q.mu.Unlock()
		switch e.op {
		case opAdd:
			q.h.OnAdd(e.obj, e.initial)
		case opUpdate:
			q.h.OnUpdate(e.old, e.obj)
		case opDelete:
			q.h.OnDelete(e.obj)
		}
		if e.initial {
			q.mu.Lock()
			q.initial--
			q.mu.Unlock()
		}
	}
}

// synced returns the synced function of the handler whose registration's
// is handed: the informer handed it the initial list, and it has handled it.
func (q *queued) synced(handed cache.InformerSynced) cache.InformerSynced {
	return func() bool {
		if !handed() { // first: then every event of the list is queued
			return false
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.initial == 0
	}
}

// stop drops the events not handled yet, as client-go drops those of a
// handler removed; one being handled finishes.
func (q *queued) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped, q.head, q.tail = true, nil, nil
	q.wake.Signal()
}
