package gateway

import (
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/seed-e581d630/k8s_gateway/fleet"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch"
)

// The plugin owns its index and readiness: it starts the controllers of its
// clusters, which put records into the index, and publishes once they have
// synced.
//
// Ready means: every cluster has synced (listed every kind it serves and
// allows), or one has and the others have had clusterWait to do so since.
// With one cluster, ready means it has synced. A cluster that syncs later
// publishes its names as they come.

// controllerConfig returns the configuration of the controller of a block
// without cluster blocks.
func (g *Gateway) controllerConfig() watch.Config {
	return g.controllerConfigOf(&g.clusterOptions, g.Zones, true)
}

// controllerConfigOf returns the configuration of a controller that reads a
// cluster with the options o and publishes in zones; nameservers: it reads the
// nameservers' own Services too.
func (g *Gateway) controllerConfigOf(o *clusterOptions, zones []string, nameservers bool) watch.Config {
	// Checked by the setup; an invalid selector here selects nothing.
	gwSel, err := labels.Parse(o.labelSelector)
	if err != nil {
		gwSel = labels.Nothing()
	}
	cfg := watch.Config{
		Sources: source.Config{
			Zones:           zones,
			TTL:             g.ttl,
			IngressClasses:  o.ingressClasses,
			GatewayClasses:  o.gatewayClasses,
			GatewaySelector: gwSel,
			Addresses:       &g.addresses,
		},
		Resources:      o.resources,
		LabelSelector:  o.labelSelector,
		LabelSelectors: o.labelSelectors,
		Namespaces:     o.namespaces,
		Reverse:        len(source.ForwardZones(g.Zones)) < len(g.Zones),
		Ownership:      g.ownership,
		Delegations:    o.delegations,
		Health:         o.health,
		Priority:       o.priority,
		Weight:         o.weight,
		Location:       o.location,
		Failover:       o.failover,
		ZonesLabel:     strings.Join(zones, " "),
		Timing:         watch.Timing{StartupWait: g.timing.startupWait, Reprobe: g.timing.reprobe, RefusalGrace: g.timing.refusalGrace, Guard: g.timing.guard},
		// Refused before the index: told and counted as the index's rejections.
		Refused: indexListener{g}.Rejected,
	}
	if nameservers {
		cfg.Nameservers = g.nameserverServices()
		cfg.NameserverZones = g.Zones
	}
	return cfg
}

// runState is what start and stop share.
type runState struct {
	stopCh chan struct{} // closed by stop
	// noStartupWait: start returns at once instead of waiting for the sync.
	noStartupWait bool
	wg            sync.WaitGroup
	ready         atomic.Bool
	// unregisterSizes takes the plugin off the zone size metrics.
	unregisterSizes func()
}

// runner is a goroutine of the plugin, a feature's or its own: it runs
// until stop is closed.
type runner func(stop <-chan struct{})

// start starts the clusters' controllers and the runners, and waits up to
// startupWait for the clusters to sync, so that a reload does not answer
// SERVFAIL while the informers list; unless noStartupWait (the first start
// of the process, see setup).
func (g *Gateway) start() error {
	g.stopCh = make(chan struct{})
	if err := g.readers.start(g.healthTiming()); err != nil {
		return err
	}
	g.persist.register(g)
	g.unregisterSizes = registerSizes(g)
	published, stop := make(chan struct{}), g.stopCh
	for _, run := range g.runners(published) {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			run(stop)
		}()
	}
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

// runners returns what start runs: the publication once the sources have
// synced (closing published), and each feature's runner.
func (g *Gateway) runners(published chan struct{}) []runner {
	waits := g.readers.waits()
	runners := []runner{func(stop <-chan struct{}) { g.publishWhenSynced(waits, published) }}
	if run := g.xfer.afterStart(g.Zones, g.catalog.zone); run != nil {
		runners = append(runners, run)
	}
	if g.parent.syncer != nil {
		runners = append(runners, g.parent.syncer.Run)
	}
	if run := g.persist.writer(g, published); run != nil {
		runners = append(runners, run)
	}
	return runners
}

// syncWait is a source of records the plugin waits for: a cluster, or the
// Cluster API watch.
type syncWait struct {
	name   string
	synced <-chan struct{}
	kinds  func() int // the informers it runs, once synced
}

// waits returns the sources of records the plugin waits for before it is
// ready: each cluster, and the Cluster API watch.
func (r *readers) waits() []syncWait {
	clusters := r.fleet.List()
	waits := make([]syncWait, 0, len(clusters)+1)
	for _, cl := range clusters {
		waits = append(waits, syncWait{cl.Name, cl.Controller.Synced(), cl.Controller.SyncedKinds})
	}
	if r.discovery != nil {
		waits = append(waits, syncWait{"(Cluster API)", r.discovery.Synced(), func() int { return 2 }})
	}
	return waits
}

// publishWhenSynced publishes the index and makes the plugin ready once the
// sources have synced (see Ready), and closes published.
func (g *Gateway) publishWhenSynced(waits []syncWait, published chan<- struct{}) {
	started := time.Now()
	synced := make(chan syncWait, len(waits))
	for _, w := range waits {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			select {
			case <-w.synced:
				synced <- w
			case <-g.stopCh:
			}
		}()
	}
	var waiting []string
	for _, w := range waits {
		waiting = append(waiting, w.name)
	}
	var deadline <-chan time.Time
	kinds := 0
	for len(waiting) > 0 {
		select {
		case w := <-synced:
			waiting = slices.DeleteFunc(waiting, func(n string) bool { return n == w.name })
			kinds += w.kinds()
			if deadline == nil && len(waiting) > 0 {
				t := time.NewTimer(g.timing.clusterWait)
				defer t.Stop()
				deadline = t.C
			}
		case <-deadline:
			log.Warningf("clusters %s have not synced %s after the first: ready without them; their names are published once they sync",
				strings.Join(waiting, " "), g.timing.clusterWait)
			waiting = nil
		case <-g.stopCh:
			return
		}
	}
	g.index.Flush()
	g.ready.Store(true)
	g.serve() // a reload's next instance takes over from this one (reload.go)
	close(published)
	log.Infof("synced %d kinds for zones %s: published %d names %s after the informers started",
		kinds, strings.Join(g.Zones, " "), g.index.Snapshot().Len(), time.Since(started).Round(time.Millisecond))
	if g.persist.copies != nil {
		g.persist.copies.Live()
	}
	// Decoding the initial lists is the process's biggest burst of garbage,
	// several times the size of what it keeps; give it back to the OS now
	// instead of over the next minutes.
	debug.FreeOSMemory()
}

// stop stops the controllers and the runners, and with them readiness and
// the index's timer.
func (g *Gateway) stop() {
	if g.stopCh == nil {
		return
	}
	close(g.stopCh)
	g.unserve()
	g.readers.stop()
	g.wg.Wait()
	g.stopCh = nil
	g.persist.unregister()
	if g.unregisterSizes != nil {
		g.unregisterSizes()
		g.unregisterSizes = nil
	}
	g.ready.Store(false)
	g.index.Close()
}

// healthTiming is how the health of named clusters is watched.
func (g *Gateway) healthTiming() fleet.HealthTiming {
	return fleet.HealthTiming{Every: g.timing.health, UnreachableAfter: g.timing.unreachableAfter}
}
