package gateway

import (
	"time"
)

// watchHealth follows a named cluster until it stops: its synced and
// connected metrics, the time of its last contact with its API server, and a
// log line when the API server goes away or comes back. A cluster that cannot
// be reached keeps its records in the index: they are the last known.
func (cl *cluster) watchHealth(h healthTiming) {
	defer close(cl.done)
	defer clusterSynced.DeleteLabelValues(cl.name)
	defer clusterConnected.DeleteLabelValues(cl.name)
	defer clusterLastContact.DeleteLabelValues(cl.name)
	clusterSynced.WithLabelValues(cl.name).Set(0)
	clusterConnected.WithLabelValues(cl.name).Set(0)
	started := time.Now()
	synced := cl.ctrl.Synced()
	reachable, reported := true, false
	tick := time.NewTicker(h.every)
	defer tick.Stop()
	for {
		select {
		case <-cl.stopCh:
			return
		case <-synced:
			synced = nil
			clusterSynced.WithLabelValues(cl.name).Set(1)
			log.Infof("cluster %s: synced %d kinds in %s", cl.name, cl.ctrl.SyncedKinds(), time.Since(started).Round(time.Millisecond))
		case <-tick.C:
		}
		since, ok := cl.ctrl.SinceContact()
		if !ok {
			since = time.Since(started) // no informer yet: the first probe has not worked
		}
		now := reachable
		switch {
		case since == 0:
			now = true
		case since >= h.unreachableAfter:
			now = false
		}
		if ok {
			clusterLastContact.WithLabelValues(cl.name).Set(float64(time.Now().Add(-since).UnixNano()) / 1e9)
		}
		clusterConnected.WithLabelValues(cl.name).Set(map[bool]float64{true: 1, false: 0}[now && ok])
		switch {
		case !now && (reachable || !reported):
			log.Warningf("cluster %s: its API server has not answered for %s; serving its last known records", cl.name, since.Round(time.Second))
			reported = true
		case now && !reachable:
			log.Infof("cluster %s: its API server answers again", cl.name)
		}
		reachable = now
	}
}
