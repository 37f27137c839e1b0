package watch

import (
	"slices"
	"time"

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

// startInformer starts the informer of w, or joins the one another
// controller runs for the same key (shared.go), and returns its synced
// function. With register, lookups of the kind (Gateways, ListenerSets,
// Namespaces) read its store from now on.
func (c *Controller) startInformer(w *watched, register bool) cache.InformerSynced {
	key, s := c.share.acquire(w)
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
