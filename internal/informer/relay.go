package informer

import (
	"context"
	"errors"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// relay is the watch the reflector reads: the API server's watch, and after
// an expiry the difference a new list makes, then the next watch.
type relay struct {
	g      *Guard
	opts   metav1.ListOptions
	ctx    context.Context
	cancel context.CancelFunc
	out    chan watch.Event
	done   chan struct{}
	once   sync.Once
}

func (r *relay) Stop() {
	r.once.Do(func() {
		r.cancel()
		close(r.done)
	})
}

func (r *relay) ResultChan() <-chan watch.Event { return r.out }

// send hands one event to the reflector; false when it stopped the watch.
func (r *relay) send(e watch.Event) bool {
	select {
	case r.out <- e:
		return true
	case <-r.done:
		return false
	}
}

func (r *relay) run(w watch.Interface) {
	defer close(r.out)
	defer r.g.state.watchEnded()
	for {
		if w == nil {
			var err error
			if w, err = r.relist(); err != nil {
				return
			}
		}
		expired := r.forward(w)
		w.Stop()
		w = nil
		if !expired {
			return // ended or stopped: the reflector watches again
		}
	}
}

// forward relays the events of w until it ends; true when it ended because
// the resource version expired.
func (r *relay) forward(w watch.Interface) (expired bool) {
	for {
		select {
		case <-r.done:
			return false
		case e, ok := <-w.ResultChan():
			if !ok {
				return false
			}
			r.g.state.touch()
			if e.Type == watch.Error && r.opts.SendInitialEvents == nil {
				if err := apierrors.FromObject(e.Object); apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					return true
				}
			}
			if !r.send(e) {
				return false
			}
		}
	}
}

// relist lists the kind, sends the reflector every listed object as
// modified, every object it holds that is gone as deleted, and a bookmark
// with the list's resource version; then it opens the next watch from there.
func (r *relay) relist() (watch.Interface, error) {
	lo := metav1.ListOptions{LabelSelector: r.opts.LabelSelector, FieldSelector: r.opts.FieldSelector}
	list, err := r.g.List(r.ctx, lo)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	rv := lm.GetResourceVersion()
	listed := make(map[string]bool, len(items))
	for _, obj := range items {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			listed[key] = true
		}
		if !r.send(watch.Event{Type: watch.Modified, Object: obj}) {
			return nil, errStopped
		}
	}
	if r.g.known != nil {
		for _, obj := range r.g.known() {
			key, err := cache.MetaNamespaceKeyFunc(obj)
			if err != nil || listed[key] {
				continue
			}
			if o := r.g.tombstone(obj); o != nil && !r.send(watch.Event{Type: watch.Deleted, Object: o}) {
				return nil, errStopped
			}
		}
	}
	mark := r.g.newObject()
	if m, err := meta.Accessor(mark); err == nil {
		m.SetResourceVersion(rv)
		if !r.send(watch.Event{Type: watch.Bookmark, Object: mark}) {
			return nil, errStopped
		}
	}
	wo := r.opts
	wo.ResourceVersion = rv
	w, err := r.g.open(r.ctx, wo)
	if err != nil {
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			return nil, errors.New("watch expired right after a list")
		}
		return nil, err
	}
	return w, nil
}

// errStopped: the reflector stopped the watch while the relay was sending.
var errStopped = errors.New("stopped")
