// Package informer is the plugin's one recipe for an informer: client-go's
// shared informer whose lists and watches go through a Guard, so that it
// recovers within about a second of the API server answering again (retries
// with a short jittered backoff, a relist of its own after an expired watch,
// RBAC refusals reported instead of handed to the reflector's backoff).
// watch reads every kind through it, fleet its Clusters and kubeconfig
// Secrets, acmeupdate its TSIG Secrets.
//
// It imports no package of the plugin but the internal ones.
package informer

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
	"github.com/seed-e581d630/k8s_gateway/internal/plog"
)

var log = plog.Log

type (
	ListFunc  func(context.Context, metav1.ListOptions) (runtime.Object, error)
	WatchFunc func(context.Context, metav1.ListOptions) (watch.Interface, error)
)

// The metrics of the guards, by kind.
var (
	apiRequests = metrics.CounterVec("api_requests_total",
		"Counter of list and watch requests sent to the API server, by kind and verb.",
		"kind", "verb")
	relistsTotal = metrics.CounterVec("relists_total",
		"Counter of lists after an informer's first, by kind: after an expired watch or an outage.",
		"kind")
)

// Config describes one informer.
type Config struct {
	Kind string // for metrics
	What string // for log lines: the kind, and the namespace if one
	// List and Watch are the API calls; Options, when set, adjusts their
	// options (a label or field selector).
	List    ListFunc
	Watch   WatchFunc
	Options func(*metav1.ListOptions)
	// Object is an empty object of the kind's API type.
	Object runtime.Object
	// Client is what tells the reflector whether WatchList is supported
	// (see cache.ToListWatcherWithWatchListSemantics): the API client.
	Client    any
	Timing    Timing
	Indexers  cache.Indexers
	Transform cache.TransformFunc
	Resync    time.Duration
	// State, when set, is the guard's state (shared with whoever watches
	// it); else a new one.
	State *State
}

// New returns an informer as c describes, and its guard.
func New(c Config) (cache.SharedIndexInformer, *Guard) {
	state := c.State
	if state == nil {
		state = newState(nil)
	}
	empty := c.Object
	g := &Guard{
		kind: c.Kind, what: c.What, list: c.List, watch: c.Watch, timing: c.Timing, state: state,
		newObject: func() runtime.Object { return empty.DeepCopyObject() },
	}
	options := c.Options
	if options == nil {
		options = func(*metav1.ListOptions) {}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			options(&o)
			return g.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			options(&o)
			return g.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, c.Client),
		c.Object, cache.SharedIndexInformerOptions{Indexers: c.Indexers, ResyncPeriod: c.Resync, ObjectDescription: c.What})
	if c.Transform != nil {
		_ = inf.SetTransform(c.Transform)
	}
	g.known = inf.GetStore().List
	return inf, g
}

// State returns the guard's state.
func (g *Guard) State() *State { return g.state }
