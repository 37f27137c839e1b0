package informer

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
)

var testTiming = Timing{RetryInitial: time.Millisecond, RetryMax: 4 * time.Millisecond, ThrottledMax: 4 * time.Millisecond}

func svcObj(name, rv string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

func TestGuardBackoff(t *testing.T) {
	tm := DefaultTiming
	refused := errors.New("connection refused")
	for n, want := range []time.Duration{100, 200, 400, 800, 1000, 1000, 1000} {
		want *= time.Millisecond
		for range 50 {
			if d := tm.Backoff(n, refused); d < want/2 || d > want {
				t.Fatalf("backoff(%d) = %s, want within [%s, %s]", n, d, want/2, want)
			}
		}
	}
	throttled := apierrors.NewTooManyRequests("slow down", 3)
	if d := tm.Backoff(0, throttled); d != 3*time.Second {
		t.Errorf("429 with Retry-After 3: backoff %s, want 3s", d)
	}
	if d := tm.Backoff(0, apierrors.NewTooManyRequests("slow down", 45)); d != 45*time.Second {
		t.Errorf("429 with Retry-After 45: backoff %s, want 45s", d)
	}
	if d := tm.Backoff(0, apierrors.NewTooManyRequests("slow down", 600)); d != time.Minute {
		t.Errorf("429 with Retry-After 600: backoff %s, want the 1m cap", d)
	}
}

// TestGuardListRetries: failures are retried inside the call, refusals turn
// the kind off and on again, and what the reflector handles passes through.
func TestGuardListRetries(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "", errors.New("no"))
	for _, tc := range []struct {
		name     string
		errs     []error
		wantErr  bool
		wantOffs int // times the kind was reported refused
	}{
		{"unreachable then back", []error{syscall.ECONNREFUSED, syscall.ECONNREFUSED}, false, 0},
		{"5xx then back", []error{apierrors.NewServiceUnavailable("starting"), apierrors.NewInternalError(errors.New("etcd"))}, false, 0},
		{"forbidden then allowed", []error{forbidden, forbidden}, false, 1},
		{"CRD gone then back", []error{apierrors.NewNotFound(schema.GroupResource{Resource: "httproutes"}, "")}, false, 1},
		{"expired goes to the reflector", []error{apierrors.NewResourceExpired("too old")}, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, offs, ons := 0, 0, 0
			g := &Guard{
				kind: "Service", timing: testTiming,
				list: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
					calls++
					if calls <= len(tc.errs) {
						return nil, tc.errs[calls-1]
					}
					return &corev1.ServiceList{}, nil
				},
				state: newState(func(allowed bool, _ error) {
					if allowed {
						ons++
					} else {
						offs++
					}
				}),
			}
			_, err := g.List(context.Background(), metav1.ListOptions{})
			if (err != nil) != tc.wantErr {
				t.Fatalf("List: %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && calls != len(tc.errs)+1 {
				t.Errorf("%d calls, want %d", calls, len(tc.errs)+1)
			}
			if offs != tc.wantOffs || ons != tc.wantOffs {
				t.Errorf("reported refused %d times and allowed %d times, want %d each", offs, ons, tc.wantOffs)
			}
		})
	}
}

func TestGuardListHonoursContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	g := &Guard{
		kind: "Service", timing: testTiming, state: newState(nil),
		list: func(context.Context, metav1.ListOptions) (runtime.Object, error) { return nil, syscall.ECONNREFUSED },
	}
	if _, err := g.List(ctx, metav1.ListOptions{}); err == nil {
		t.Fatal("List returned no error after its context ended")
	}
}

// TestGuardWatchRelistsOnExpiry: a watch that the server ends as expired is
// followed, without the reflector's backoff, by the difference of a new list
// (changed objects, deleted objects, a bookmark) and the next watch.
func TestGuardWatchRelistsOnExpiry(t *testing.T) {
	first, second := watch.NewFake(), watch.NewFake()
	watches := []*watch.FakeWatcher{first, second}
	var watchRVs []string
	g := &Guard{
		kind: "Service", timing: testTiming, state: newState(nil),
		newObject: func() runtime.Object { return &corev1.Service{} },
		list: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
			if o.LabelSelector != "app=web" {
				t.Errorf("relist with selector %q", o.LabelSelector)
			}
			return &corev1.ServiceList{ListMeta: metav1.ListMeta{ResourceVersion: "50"},
				Items: []corev1.Service{*svcObj("kept", "40"), *svcObj("new", "45")}}, nil
		},
		watch: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			watchRVs = append(watchRVs, o.ResourceVersion)
			if len(watches) == 0 {
				return nil, errors.New("too many watches")
			}
			w := watches[0]
			watches = watches[1:]
			return w, nil
		},
		// What the informer holds: services, as the Service informers keep
		// them (the deletion carries a Service in their place), and a Service.
		known: func() []any {
			return []any{asInformed(svcObj("kept", "10")), asInformed(svcObj("gone", "11")), svcObj("old", "9")}
		},
	}
	w, err := g.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "12", LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	go func() {
		first.Modify(svcObj("kept", "13"))
		first.Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
	}()
	var got []string
	for len(got) < 7 {
		select {
		case e := <-w.ResultChan():
			o := e.Object.(*corev1.Service)
			got = append(got, string(e.Type)+" "+o.Name+"@"+o.ResourceVersion)
			if len(got) == 6 {
				go second.Add(svcObj("later", "51"))
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("events so far: %q", got)
		}
	}
	want := []string{"MODIFIED kept@13", "MODIFIED kept@40", "MODIFIED new@45", "DELETED gone@11", "DELETED old@9", "BOOKMARK @50", "ADDED later@51"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %q, want %q", got, want)
		}
	}
	if len(watchRVs) != 2 || watchRVs[1] != "50" {
		t.Errorf("watched from %q, want the second watch from the list's 50", watchRVs)
	}
}

// TestGuardRelistWithTransform: an informer whose transform keeps a type of
// its own learns, after an expired watch, of a deletion it missed: the
// reflector takes the deleted event only with the API type.
func TestGuardRelistWithTransform(t *testing.T) {
	lists := 0
	expiring, next := watch.NewFake(), watch.NewFake()
	watches := []*watch.FakeWatcher{expiring, next}
	g := &Guard{
		kind: "Service", timing: testTiming, state: newState(nil),
		newObject: func() runtime.Object { return &corev1.Service{} },
		list: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			lists++
			list := &corev1.ServiceList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}, Items: []corev1.Service{*svcObj("kept", "5")}}
			if lists == 1 {
				list.Items = append(list.Items, *svcObj("gone", "6"))
			} else {
				list.ResourceVersion = "20"
			}
			return list, nil
		},
		watch: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			if len(watches) == 0 {
				return watch.NewFake(), nil
			}
			w := watches[0]
			watches = watches[1:]
			return w, nil
		},
	}
	lw := &cache.ListWatch{ListWithContextFunc: g.List, WatchFuncWithContext: g.Watch}
	inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, noWatchList{}), &corev1.Service{}, 0, cache.Indexers{})
	_ = inf.SetTransform(asInformedAny)
	g.known = inf.GetStore().List
	deleted := make(chan any, 1)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) { deleted <- obj }}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go inf.Run(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		t.Fatal("not synced")
	}
	expiring.Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
	select {
	case obj := <-deleted:
		if svc, ok := obj.(*source.Service); !ok || svc.GetNamespace()+"/"+svc.GetName() != "ns/gone" {
			t.Errorf("deleted %#v, want the service ns/gone", obj)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the deletion never reached the informer")
	}
	if keys := inf.GetStore().ListKeys(); len(keys) != 1 || keys[0] != "ns/kept" {
		t.Errorf("store holds %q, want ns/kept", keys)
	}
}

// TestGuardWatchRetries: a watch that cannot be opened is retried inside the
// call; one that is refused turns the kind off until it opens.
func TestGuardWatchRetries(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "", errors.New("no"))
	errs := []error{syscall.ECONNREFUSED, forbidden, apierrors.NewServiceUnavailable("starting")}
	states := []bool{}
	g := &Guard{
		kind: "Service", timing: testTiming,
		state: newState(func(allowed bool, _ error) { states = append(states, allowed) }),
		watch: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			if len(errs) > 0 {
				err := errs[0]
				errs = errs[1:]
				return nil, err
			}
			return watch.NewFake(), nil
		},
	}
	w, err := g.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "5"})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	if len(errs) != 0 || len(states) != 2 || states[0] || !states[1] {
		t.Errorf("errors left %v, states reported %v; want none left, [false true]", errs, states)
	}
}

// asInformed converts a Service as its informer decodes it.
func asInformed(svc *corev1.Service) any {
	out, _ := testutil.ViaProtobuf[source.Service](svc)
	return out
}

// asInformedAny is asInformed as a transform: other objects pass unchanged.
func asInformedAny(obj any) (any, error) {
	if svc, ok := obj.(*corev1.Service); ok {
		return testutil.ViaProtobuf[source.Service](svc)
	}
	return obj, nil
}

// TestStateContact: the contact age is 0 while a watch is open, then grows.
func TestStateContact(t *testing.T) {
	open, closed := newState(nil), newState(nil)
	open.success(true)
	closed.success(true)
	closed.watchEnded()
	closed.mu.Lock()
	closed.lastContact = closed.lastContact.Add(-90 * time.Second)
	closed.mu.Unlock()
	if d := open.SinceContact(); d != 0 {
		t.Errorf("open watch: contact age %s, want 0", d)
	}
	if d := closed.SinceContact(); d < 90*time.Second || d > 100*time.Second {
		t.Errorf("ended watch: contact age %s, want about 90s", d)
	}
	if c := closed.ContactTime(); time.Since(c) < 90*time.Second {
		t.Errorf("ended watch: contact time %s, want about 90s ago", c)
	}
}

// noWatchList tells the reflector that the fake calls do not support WatchList.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }
