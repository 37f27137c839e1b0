package gateway

import (
	"slices"
	"strings"
	"time"

	"github.com/seed-e581d630/k8s_gateway/fleet"
	"github.com/seed-e581d630/k8s_gateway/index"
)

// indexListener logs and counts what the index reports, and sends NOTIFY.
type indexListener struct{ g *Gateway }

func (l indexListener) SerialChanged(zone string, serial uint32) {
	// Transfers under the serial serve the content it was assigned to.
	if zi := slices.Index(l.g.Zones, zone); zi >= 0 {
		if s := l.g.snapshot(zi); s != nil && s.Serial(zi) == serial {
			l.g.xfer.ixfr.Assigned(zone, zi, s)
		}
	}
	l.g.xfer.notifier.Notify(zone)
	l.g.parent.kick()
}

func (l indexListener) Conflict(name, msg string) {
	log.Infof("%s: %s", name, msg)
	if zi := index.ZoneOf(l.g.Zones, name); zi >= 0 {
		conflictsTotal.WithLabelValues(l.g.Zones[zi]).Inc()
	}
}

// Rejected implements index.RejectionListener.
func (l indexListener) Rejected(r index.Rejection) {
	log.Warning(r.String())
	rejectedTotal.WithLabelValues(r.Zone, r.Reason).Inc()
	cl, key := l.g.fleet.Of(r.Key)
	if cl == nil {
		return
	}
	if owner, _, _ := strings.Cut(r.Owner, "/"); cl.Name != "" && r.Reason == index.ReasonOwned && owner != cl.Name {
		clusterConflicts.WithLabelValues(r.Zone).Inc()
	}
	if e := cl.Events.Load(); e != nil {
		r.Key = key // the object in its own cluster
		e.Rejected(r)
	}
}

// Conflicted implements index.ConflictListener. Each cluster hears of its
// own objects.
func (l indexListener) Conflicted(c index.Conflict) {
	byCluster := map[*fleet.Cluster][]string{}
	for _, k := range c.Keys {
		if cl, key := l.g.fleet.Of(k); cl != nil {
			byCluster[cl] = append(byCluster[cl], key)
		}
	}
	if len(byCluster) > 1 {
		if zi := index.ZoneOf(l.g.Zones, c.Name); zi >= 0 {
			clusterConflicts.WithLabelValues(l.g.Zones[zi]).Inc()
		}
	}
	for cl, keys := range byCluster {
		if e := cl.Events.Load(); e != nil {
			own := c
			own.Keys = keys
			e.Conflicted(own)
		}
	}
}

// HealthChanged implements index.HealthListener.
func (l indexListener) HealthChanged(zone string, h index.ZoneHealth) {
	unhealthyTargets.WithLabelValues(zone, l.g.view).Set(float64(h.Unhealthy))
	failOpenNames.WithLabelValues(zone, l.g.view).Set(float64(h.FailOpen))
	standbyNames.WithLabelValues(zone, l.g.view).Set(float64(h.Standby))
}

// FailOpen implements index.HealthListener. A cluster set down may send
// every one of its names at once: the log says only the first few per second.
func (l indexListener) FailOpen(zone, name string, open bool) {
	if open {
		failOpenTotal.WithLabelValues(zone, l.g.view).Inc()
	}
	if !failOpenLog.allow(time.Now()) {
		return
	}
	if n := failOpenLog.takeSuppressed(); n > 0 {
		log.Infof("(%d more names started or stopped being answered fail-open; see health_failopen_names)", n)
	}
	if open {
		log.Warningf("%s: every target is unhealthy; answering with all of them (fail open)", name)
		return
	}
	log.Infof("%s: a healthy target again; no longer answered fail-open", name)
}
