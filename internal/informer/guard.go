package informer

import (
	"context"
	"math/rand/v2"
	"reflect"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// An Guard wraps the list and watch calls of one informer so that the
// informer recovers within about a second of the API server answering again.
//
// client-go's reflector backs off after every failed list or watch, doubling
// from 0.8 s to 30 s (twice that with its jitter), and lists again only after
// that wait when a watch expires. Measured against a real API server, a
// change made after an outage then reached DNS 20 to 60 s later. The guard
// keeps the reflector out of that backoff:
//
//   - a list or watch that fails because the API server is unreachable,
//     overloaded or refuses access is retried inside the call, after a short
//     jittered backoff (retryInitial doubling to retryMax), until it works or
//     the informer stops; the reflector never sees the error;
//   - a watch that the API server ends as expired (410: resumed after a
//     restart or an etcd compaction) is not handed back to the reflector
//     either: the guard lists at once, sends the reflector the difference as
//     watch events and a bookmark with the list's resource version, and goes
//     on watching from there.
//
// The jitter spreads the retries of many replicas and kinds over time.
type Guard struct {
	kind  string // for metrics
	what  string // for log lines: the kind, and the namespace if one
	list  ListFunc
	watch WatchFunc
	// known returns the objects the informer holds, to find the ones that
	// an expired watch missed the deletion of. Set once the informer exists.
	known func() []any
	// newObject returns an empty object of the kind, for bookmarks.
	newObject func() runtime.Object
	timing    Timing
	state     *State
}

// Timing are the guard's waits; tests shorten them.
type Timing struct {
	RetryInitial time.Duration // the first wait after a failure
	RetryMax     time.Duration // the longest wait, whatever failed
	// ThrottledMax is the longest wait the API server may ask for (429 with
	// Retry-After): its priority and fairness asks for what it needs, and a
	// fleet of clients that retries sooner only adds to the load.
	ThrottledMax time.Duration
}

var DefaultTiming = Timing{RetryInitial: 100 * time.Millisecond, RetryMax: time.Second, ThrottledMax: time.Minute}

// State is what the guard reports about one informer: whether the API
// server lets it read, when it last talked to it, how often it listed.
type State struct {
	mu          sync.Mutex
	allowed     bool      // the last call was not refused (403, 401, 404)
	watching    bool      // a watch is open
	lastContact time.Time // last successful call or event, or the end of the last watch
	heard       time.Time // last successful call or event (a bookmark included)
	lists       int       // successful lists (the first one included)
	// onChange, and the subscribers (one per controller sharing the
	// informer), hear when the API server starts or stops refusing the kind.
	onChange    func(allowed bool, err error)
	subscribers map[*func(bool, error)]struct{}
}

func newState(onChange func(allowed bool, err error)) *State {
	now := time.Now()
	return &State{allowed: true, lastContact: now, heard: now, onChange: onChange}
}

// subscribe adds fn to the callbacks of a change, until the returned
// function is called.
func (s *State) Subscribe(fn func(allowed bool, err error)) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subscribers == nil {
		s.subscribers = map[*func(bool, error)]struct{}{}
	}
	s.subscribers[&fn] = struct{}{}
	return func() {
		s.mu.Lock()
		delete(s.subscribers, &fn)
		s.mu.Unlock()
	}
}

// callbacksLocked returns onChange and the subscribers; s.mu is held.
func (s *State) callbacksLocked() []func(bool, error) {
	var cbs []func(bool, error)
	if s.onChange != nil {
		cbs = append(cbs, s.onChange)
	}
	for fn := range s.subscribers {
		cbs = append(cbs, *fn)
	}
	return cbs
}

func (s *State) success(watching bool) {
	s.mu.Lock()
	changed := !s.allowed
	s.allowed, s.watching, s.lastContact = true, watching, time.Now()
	s.heard = s.lastContact
	cbs := s.callbacksLocked()
	s.mu.Unlock()
	if changed {
		for _, cb := range cbs {
			cb(true, nil)
		}
	}
}

func (s *State) failure(err error) {
	refused := refusedError(err)
	s.mu.Lock()
	changed := refused && s.allowed
	if refused {
		s.allowed = false
	}
	s.watching = false
	cbs := s.callbacksLocked()
	s.mu.Unlock()
	if changed {
		for _, cb := range cbs {
			cb(false, err)
		}
	}
}

func (s *State) IsAllowed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allowed
}

func (s *State) watchEnded() {
	s.mu.Lock()
	if s.watching {
		s.watching, s.lastContact = false, time.Now()
	}
	s.mu.Unlock()
}

func (s *State) touch() {
	s.mu.Lock()
	s.lastContact = time.Now()
	s.heard = s.lastContact
	s.mu.Unlock()
}

// Heard records an answer of the API server to a call made beside the
// informer (a ping of a quiet cluster): every controller that shares the
// informer, such as the blocks of a reloaded Corefile that joined it, counts
// it as contact (SinceHeard).
func (s *State) Heard() {
	s.mu.Lock()
	s.heard = time.Now()
	s.mu.Unlock()
}

// SinceHeard is the time since the API server last answered a call or sent
// an event or a bookmark, open watch or not: a watch on a connection that
// neither answers nor closes stays open for a long time (until client-go's
// health check fails), saying nothing.
func (s *State) SinceHeard() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.heard)
}

// SinceContact is 0 while a watch is open, else the time since the last
// successful call or event (since the start before the first).
func (s *State) SinceContact() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watching {
		return 0
	}
	return time.Since(s.lastContact)
}

// ContactTime is now while a watch is open, else the time of the last
// successful call or event.
func (s *State) ContactTime() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watching {
		return time.Now()
	}
	return s.lastContact
}

// refusedError reports whether the API server refuses the kind: RBAC forbids
// it, the credentials are rejected, or the resource is not served (CRD
// not installed).
func refusedError(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err)
}

// passThrough reports errors the reflector handles itself, at once: an
// expired or too new resource version (it lists again without one), and
// requests the server does not understand (it falls back from WatchList to
// a list).
func passThrough(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsInvalid(err) || apierrors.IsMethodNotSupported(err) || apierrors.IsNotAcceptable(err) ||
		apierrors.IsUnsupportedMediaType(err) || isTooLargeResourceVersion(err)
}

func isTooLargeResourceVersion(err error) bool {
	return apierrors.IsTimeout(err) && apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge)
}

// backoff returns the wait before retry number n (0 for the first): it
// doubles from retryInitial up to retryMax, and is jittered down by up to a
// half, so that replicas spread out. A 429 is retried when the server asks,
// within throttledMax.
func (t Timing) Backoff(n int, err error) time.Duration {
	if secs, ok := apierrors.SuggestsClientDelay(err); ok && apierrors.IsTooManyRequests(err) {
		return min(time.Duration(secs)*time.Second, t.ThrottledMax)
	}
	d := t.RetryInitial << min(n, 20)
	if d <= 0 || d > t.RetryMax {
		d = t.RetryMax
	}
	return d/2 + rand.N(d/2+1)
}

// wait sleeps d or until ctx ends.
func wait(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// List lists, retrying failures that are not the reflector's to handle.
func (g *Guard) List(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	for n := 0; ; n++ {
		apiRequests.WithLabelValues(g.kind, "list").Inc()
		obj, err := g.list(ctx, o)
		if err == nil {
			g.listed()
			g.state.success(false)
			return obj, nil
		}
		if ctx.Err() != nil || passThrough(err) {
			return nil, err
		}
		g.state.failure(err)
		if n == 0 {
			log.Warningf("listing %s: %v; retrying until it works", g.what, err)
		}
		if werr := wait(ctx, g.timing.Backoff(n, err)); werr != nil {
			return nil, err
		}
	}
}

// listed counts a list, and one after the first as a relist.
func (g *Guard) listed() {
	g.state.mu.Lock()
	g.state.lists++
	relist := g.state.lists > 1
	g.state.mu.Unlock()
	if relist {
		relistsTotal.WithLabelValues(g.kind).Inc()
	}
}

// Watch opens a watch, retrying failures, and lists again itself when the
// API server ends it as expired.
func (g *Guard) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	o.AllowWatchBookmarks = true // a bookmark is contact (see SinceHeard)
	w, err := g.open(ctx, o)
	if err != nil {
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) || o.SendInitialEvents != nil {
			return nil, err
		}
		w = nil // expired at once: the relay lists first
	}
	r := &relay{g: g, opts: o, out: make(chan watch.Event), done: make(chan struct{})}
	r.ctx, r.cancel = context.WithCancel(ctx)
	go r.run(w)
	return r, nil
}

// open opens one watch, retrying failures that are not the reflector's to handle.
func (g *Guard) open(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	for n := 0; ; n++ {
		apiRequests.WithLabelValues(g.kind, "watch").Inc()
		w, err := g.watch(ctx, o)
		if err == nil {
			g.state.success(true)
			if o.SendInitialEvents != nil {
				g.listed() // a WatchList is a list too
			}
			return w, nil
		}
		if ctx.Err() != nil || passThrough(err) {
			return nil, err
		}
		g.state.failure(err)
		if werr := wait(ctx, g.timing.Backoff(n, err)); werr != nil {
			return nil, err
		}
	}
}

// tombstone returns the object a deleted event carries for obj, an object
// the informer holds: obj itself when it has the kind's API type; else, as
// the reflector takes only that type and the informers of some kinds keep
// types of their own (see object.go), an object of the API type with obj's
// namespace, name and resource version.
func (g *Guard) tombstone(obj any) runtime.Object {
	o := g.newObject()
	if ro, ok := obj.(runtime.Object); ok && reflect.TypeOf(ro) == reflect.TypeOf(o) {
		return ro
	}
	from, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	to, err := meta.Accessor(o)
	if err != nil {
		return nil
	}
	to.SetNamespace(from.GetNamespace())
	to.SetName(from.GetName())
	to.SetResourceVersion(from.GetResourceVersion())
	return o
}
