package fleet

import (
	"time"

	"github.com/coredns/coredns/plugin/pkg/log"
)

// watchHealth follows a named cluster until it stops: its synced and
// connected metrics, the time of its last contact with its API server, and a
// log line when the API server goes away or comes back. A cluster that cannot
// be reached keeps its records in the index: they are the last known.
func (cl *Cluster) watchHealth(h HealthTiming) {
	defer close(cl.done)
	defer ClusterSynced.DeleteLabelValues(cl.Name)
	defer ClusterConnected.DeleteLabelValues(cl.Name)
	defer clusterLastContact.DeleteLabelValues(cl.Name)
	ClusterSynced.WithLabelValues(cl.Name).Set(0)
	ClusterConnected.WithLabelValues(cl.Name).Set(0)
	started := time.Now()
	synced := cl.Controller.Synced()
	reachable, reported := true, false
	tick := time.NewTicker(h.Every)
	defer tick.Stop()
	for {
		select {
		case <-cl.stopCh:
			return
		case <-synced:
			synced = nil
			ClusterSynced.WithLabelValues(cl.Name).Set(1)
			log.Infof("cluster %s: synced %d kinds in %s", cl.Name, cl.Controller.SyncedKinds(), time.Since(started).Round(time.Millisecond))
		case <-tick.C:
		}
		since, ok := cl.Controller.SinceContact()
		if !ok {
			since = time.Since(started) // no informer yet: the first probe has not worked
		}
		now := reachable
		switch {
		case since == 0:
			now = true
		case since >= h.UnreachableAfter:
			now = false
		}
		if ok {
			clusterLastContact.WithLabelValues(cl.Name).Set(float64(time.Now().Add(-since).UnixNano()) / 1e9)
		}
		ClusterConnected.WithLabelValues(cl.Name).Set(map[bool]float64{true: 1, false: 0}[now && ok])
		switch {
		case !now && (reachable || !reported):
			log.Warningf("cluster %s: its API server has not answered for %s; serving its last known records", cl.Name, since.Round(time.Second))
			reported = true
		case now && !reachable:
			log.Infof("cluster %s: its API server answers again", cl.Name)
		}
		reachable = now
	}
}
