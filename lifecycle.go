package gateway

import (
	"runtime/debug"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
)

// The plugin owns its index and readiness: it starts the controller, which
// puts records into the index, and publishes once the controller has synced.

// controllerConfig returns the configuration of the plugin's controller.
func (g *Gateway) controllerConfig() controllerConfig {
	// Checked by the setup; an invalid selector here selects nothing.
	gwSel, err := labels.Parse(g.labelSelector)
	if err != nil {
		gwSel = labels.Nothing()
	}
	return controllerConfig{
		sources: sourceConfig{
			zones:           g.Zones,
			ttl:             g.ttl,
			ingressClasses:  g.ingressClasses,
			gatewayClasses:  g.gatewayClasses,
			gatewaySelector: gwSel,
		},
		resources:      g.resources,
		labelSelector:  g.labelSelector,
		labelSelectors: g.labelSelectors,
		namespaces:     g.namespaces,
		nameservers:    g.nameserverServices(),
		reverse:        len(forwardZones(g.Zones)) < len(g.Zones),
		ownership:      g.ownership,
		delegations:    g.delegations,
		zonesLabel:     strings.Join(g.Zones, " "),
		timing:         g.timing,
	}
}

// start starts the controller and waits up to startupWait for it to sync, so
// that a reload does not answer SERVFAIL while the informers list; unless
// noStartupWait (the first start of the process, see setup).
func (g *Gateway) start() error {
	if g.emitEvents {
		if es, ok := g.ctrl.api.(eventSinker); ok {
			sink, err := es.eventSink()
			if err != nil {
				return err
			}
			g.events.Store(newEvents(sink))
		}
	}
	g.stopCh = make(chan struct{})
	if g.persistDir != "" {
		g.unregisterCopies = registerCopies(g)
	}
	published := make(chan struct{})
	g.ctrl.start()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		g.publishWhenSynced(published)
	}()
	if g.noStartupWait {
		return nil
	}
	select {
	case <-published:
	case <-time.After(g.timing.startupWait):
		log.Warningf("starting with unsynced Kubernetes API; answering SERVFAIL until the informers have synced")
	}
	return nil
}

// publishWhenSynced publishes the index and makes the plugin ready once the
// controller has synced, and closes published.
func (g *Gateway) publishWhenSynced(published chan<- struct{}) {
	started := time.Now()
	select {
	case <-g.ctrl.synced():
	case <-g.stopCh:
		return
	}
	g.index.Flush()
	g.ready.Store(true)
	close(published)
	log.Infof("synced %d kinds for zones %s: published %d names %s after the informers started",
		g.ctrl.kinds, strings.Join(g.Zones, " "), g.index.Snapshot().Len(), time.Since(started).Round(time.Millisecond))
	if zc := g.copies.Swap(nil); zc != nil {
		zc.index.Close()
		log.Infof("persist: switched from the copies on disk to live data")
	}
	if g.persistDir != "" {
		p, stop := newPersister(g.persistDir, g.Zones, g.timing.persist, g.clock, g.index.Snapshot), g.stopCh
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			p.run(stop)
		}()
	}
	// Decoding the initial lists is the process's biggest burst of garbage,
	// several times the size of what it keeps; give it back to the OS now
	// instead of over the next minutes.
	debug.FreeOSMemory()
}

// stop stops the controller, and with it readiness and the index's timer.
func (g *Gateway) stop() {
	if g.stopCh == nil {
		return
	}
	close(g.stopCh)
	g.ctrl.stop()
	g.wg.Wait()
	g.stopCh = nil
	if g.unregisterCopies != nil {
		g.unregisterCopies()
		g.unregisterCopies = nil
	}
	g.ready.Store(false)
	g.index.Close()
	if e := g.events.Swap(nil); e != nil {
		e.stop()
	}
}
