package watch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/source"
)

// switchVersion replaces the informer of w by one that reads version v, and
// returns it once it has synced: the records stay published meanwhile.
func (c *Controller) switchVersion(w *watched, v *source.Kind) (*watched, bool) {
	nw := &watched{Kind: w.Kind, Version: v, Namespace: w.Namespace, Options: w.Options, key: w.key, records: w.records}
	if !c.waitForSync([]cache.InformerSynced{c.startInformer(nw, false)}) {
		return nil, false
	}
	c.stores.register(nw)
	w.retired.Store(true)
	close(w.stop)
	// Withdraw what only the old informer had (deleted meanwhile).
	for _, obj := range w.informer.GetStore().List() {
		if _, ok, _ := nw.informer.GetStore().Get(obj); !ok {
			c.pub.remove(nw, obj)
		}
	}
	if w.Kind == source.ListenerSetKind {
		// Another kind of object altogether (XListenerSet → ListenerSet):
		// every route through a ListenerSet may change.
		c.routes.refreshAll()
	}
	log.Infof("%s read at %s (was %s)", w.what(), v.GroupVersion, w.Version.GroupVersion)
	return nw, true
}

// syncPoll is how often waitForSync checks the informers; client-go's
// WaitForCacheSync checks every 100 ms, a tenth of a second lost at startup.
const syncPoll = 5 * time.Millisecond

// waitForSync waits until every informer has synced, or the controller stops.
func (c *Controller) waitForSync(syncs []cache.InformerSynced) bool {
	tick := time.NewTicker(syncPoll)
	defer tick.Stop()
	for {
		if !slices.ContainsFunc(syncs, func(s cache.InformerSynced) bool { return !s() }) {
			return true
		}
		select {
		case <-c.stopCh:
			return false
		case <-tick.C:
		}
	}
}

var errStopped = errors.New("stopped")

// probe lists one object of the kind, retrying transient errors until it
// works, the error is permanent (not served), or the controller stops.
// The waits are the guard's (see informer.Guard), so that a server started while
// the API server is down syncs within about a second of its return.
// A refusal (403, 401) is retried as well until it has lasted the refusal
// grace: a starting API server refuses every request until its authorizer
// has loaded the RBAC rules, and a kind disabled then would deny its names
// (NXDOMAIN) until the next probe. giveUp (another kind works, the startup
// wait is over) ends the retries of other errors, not of a refusal in its
// grace.
func (c *Controller) probe(w *watched, giveUp <-chan struct{}) error {
	var refusedSince time.Time
	for n := 0; ; n++ {
		err := c.probeOnce(w)
		if err == nil || apierrors.IsNotFound(err) || errors.Is(err, errNotServed) {
			return err
		}
		stop := giveUp
		if refused := apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err); refused {
			if refusedSince.IsZero() {
				refusedSince = time.Now()
			}
			if time.Since(refusedSince) >= c.cfg.Timing.RefusalGrace {
				return err
			}
			stop = nil
		}
		wait := c.cfg.Timing.Guard.Backoff(n, err)
		if n == 0 {
			log.Warningf("listing %s: %v; retrying until it works", w.what(), err)
		}
		select {
		case <-c.stopCh:
			return errStopped
		case <-stop:
			return fmt.Errorf("%w: %v", errSlow, err)
		case <-time.After(wait):
		}
	}
}

func (c *Controller) probeOnce(w *watched) error {
	if len(w.Kind.Older) > 0 {
		v, err := c.servedVersion(w.Kind)
		if err != nil {
			return err
		}
		if v == nil {
			return notServedError(w.Kind)
		}
		w.Version = v
	}
	if c.joinable(w) {
		return nil
	}
	return c.listOnce(w)
}

// listOnce lists one object of the version of w.
func (c *Controller) listOnce(w *watched) error {
	list, _ := c.api.ListWatch(w.Version, w.Namespace)
	opts := metav1.ListOptions{Limit: 1}
	w.Options(&opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := list(ctx, opts)
	if apierrors.IsNotFound(err) {
		return c.notServed(w.Version, err)
	}
	return err
}

// notServed explains a kind the API server does not serve: which versions of
// its group it does serve, if any (a CRD of another Gateway API release).
func (c *Controller) notServed(k *source.Kind, err error) error {
	group, version, found := strings.Cut(k.GroupVersion, "/")
	if !found {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	groups, derr := c.api.ServerGroups(ctx)
	if derr != nil {
		return err
	}
	for _, g := range groups.Groups {
		if g.Name != group {
			continue
		}
		var versions []string
		for _, v := range g.Versions {
			versions = append(versions, v.Version)
		}
		return fmt.Errorf("%w: %s is served only at versions %s, not %s (install CRDs that serve %s)", err, group, strings.Join(versions, ", "), version, k.GroupVersion)
	}
	return fmt.Errorf("%w: API group %s is not installed", err, group)
}

// startInformer starts the informer of w, or joins the one another
// controller runs for the same key (shared.go), and returns its synced
// function. With register, lookups of the kind (Gateways, ListenerSets,
// Namespaces) read its store from now on.
func (c *Controller) startInformer(w *watched, register bool) cache.InformerSynced {
	key, s := c.acquire(w)
	inf, state := s.informer, s.guard.State()
	w.api = state
	c.mu.Lock()
	c.states = append(c.states, state)
	c.mu.Unlock()
	w.informer = inf
	w.stop = make(chan struct{})
	if register && !w.Nameserver {
		c.stores.register(w)
	}
	if w.Version != w.Kind || len(w.Kind.Older) > 0 {
		log.Infof("%s read at %s", w.what(), w.Version.GroupVersion)
	}
	reg, _ := inf.AddEventHandler(c.pub.handler(w))
	c.stores.setSynced(w, reg.HasSynced)
	unsubscribe := state.Subscribe(c.guardChanged(w))
	unregister := func() {}
	if !w.Nameserver {
		unregister = registerGuard(state, c.cfg.ZonesLabel, w.Kind.Name)
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		select {
		case <-c.stopCh:
		case <-w.stop:
		}
		_ = inf.RemoveEventHandler(reg)
		unsubscribe()
		unregister()
		release(key, s)
	}()
	return reg.HasSynced
}

// indexers returns the indexes of w's informer, the same for every
// controller that shares it (sharedKey).
func (c *Controller) indexers(w *watched) cache.Indexers {
	// Only the Gateway API kinds are looked up by namespace (see
	// dependencies.go); for Ingresses and Services the index would be a
	// set of every key per namespace, 160 bytes an object, for nothing.
	indexers := cache.Indexers{}
	if parents := w.Version.Parents; parents != nil {
		indexers[cache.NamespaceIndex] = cache.MetaNamespaceIndexFunc
		indexers[gatewayIndex] = func(obj any) ([]string, error) { gws, _ := parents(obj); return gws, nil }
		indexers[listenerSetIndex] = func(obj any) ([]string, error) { _, lss := parents(obj); return lss, nil }
	}
	if backends := w.Version.Backends; backends != nil && c.cfg.Health {
		indexers[backendIndex] = func(obj any) ([]string, error) { return backends(obj), nil }
	}
	return indexers
}
