package fleet

import (
	"context"
	"sync/atomic"
	"time"
)

// watchHealth follows a named cluster until it stops: its synced and
// connected metrics, the time of its last contact with its API server, and a
// log line when the API server goes away or comes back. A cluster that cannot
// be reached keeps its records in the index: they are the last known.
func (cl *Cluster) watchHealth(h HealthTiming) {
	defer close(cl.done)
	defer clusterSynced.DeleteLabelValues(cl.Name)
	defer clusterConnected.DeleteLabelValues(cl.Name)
	defer clusterLastContact.DeleteLabelValues(cl.Name)
	defer clusterFailedOver.DeleteLabelValues(cl.Name)
	clusterSynced.WithLabelValues(cl.Name).Set(0)
	clusterConnected.WithLabelValues(cl.Name).Set(0)
	started := time.Now()
	synced := cl.Controller.Synced()
	reachable, reported := true, false
	failover := cl.Controller.Config().Failover
	down := false
	defer func() {
		if down { // the cluster goes: no prefix left behind in the index
			cl.setDown(false, 0)
		}
	}()
	tick := time.NewTicker(h.Every)
	defer tick.Stop()
	// A quiet API server sends nothing for minutes (a bookmark a minute);
	// after pingAfter without contact the cluster is asked, so that only
	// an API server that does not answer counts as silent.
	pingAfter := h.UnreachableAfter / 2
	if failover > 0 {
		pingAfter = min(pingAfter, failover/3)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pinging atomic.Bool
	for {
		select {
		case <-cl.stopCh:
			return
		case <-synced:
			synced = nil
			clusterSynced.WithLabelValues(cl.Name).Set(1)
			log.Infof("cluster %s: synced %d kinds in %s", cl.Name, cl.Controller.SyncedKinds(), time.Since(started).Round(time.Millisecond))
		case <-tick.C:
		}
		since, ok := cl.Controller.SinceContact()
		if !ok {
			since = time.Since(started) // no informer yet: the first probe has not worked
		}
		if ok && since >= pingAfter && pinging.CompareAndSwap(false, true) {
			go func() {
				defer pinging.Store(false)
				pctx, pcancel := context.WithTimeout(ctx, pingAfter)
				defer pcancel()
				_ = cl.Controller.Ping(pctx)
			}()
		}
		now := since < h.UnreachableAfter
		if ok {
			clusterLastContact.WithLabelValues(cl.Name).Set(float64(time.Now().Add(-since).UnixNano()) / 1e9)
		}
		clusterConnected.WithLabelValues(cl.Name).Set(map[bool]float64{true: 1, false: 0}[now && ok])
		switch {
		case !now && (reachable || !reported):
			log.Warningf("cluster %s: its API server has not answered for %s; serving its last known records", cl.Name, since.Round(time.Second))
			reported = true
		case now && !reachable:
			log.Infof("cluster %s: its API server answers again", cl.Name)
		}
		reachable = now
		if failover > 0 && (since >= failover) != down {
			down = since >= failover
			cl.setDown(down, since)
		}
	}
}

// downSetter is a sink (the index) that can count every object of a
// cluster as unhealthy.
type downSetter interface {
	SetDown(prefix string, down bool)
}

// setDown tells the index that the cluster counts as unhealthy (its API
// server silent for longer than failover), or no longer.
func (cl *Cluster) setDown(down bool, since time.Duration) {
	ds, ok := cl.out.(downSetter)
	if !ok {
		return
	}
	if down {
		log.Warningf("cluster %s: its API server has not answered for %s (failover %s): its targets count as unhealthy, other clusters answer where they have healthy ones",
			cl.Name, since.Round(time.Second), cl.Controller.Config().Failover)
	} else {
		log.Infof("cluster %s: its API server answers again: its targets count as healthy", cl.Name)
	}
	ds.SetDown(cl.Controller.Config().Prefix, down)
	clusterFailedOver.WithLabelValues(cl.Name).Set(map[bool]float64{true: 1, false: 0}[down])
}
