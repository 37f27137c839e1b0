package watch

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-e581d630/k8s_gateway/internal/informer"
	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
)

// The guard's types, named here for watch's users.
type (
	listFunc    = informer.ListFunc
	watchFunc   = informer.WatchFunc
	GuardTiming = informer.Timing
)

// DefaultGuardTiming are the guard's waits outside tests.
var DefaultGuardTiming = informer.DefaultTiming

// Guard states of every running informer, for the contact metric: one
// entry per controller using the informer, so that a shared informer counts
// under the zones of each block until that block leaves.
var guards metrics.LiveSet[*guardUse, [2]string] // use → zones, kind

// guardUse is one controller's use of an informer's guard state.
type guardUse struct{ state contactTimer }

// contactTimer tells when an informer last talked to the API server.
type contactTimer interface{ ContactTime() time.Time }

// registerGuard adds s to the contact metric until the returned function is called.
func registerGuard(s contactTimer, zones, kind string) func() {
	return guards.Add(&guardUse{s}, [2]string{zones, kind})
}

// contactCollector exports, per zone and kind, the time of each informer's
// last contact with the API server (timestamp), and the deprecated seconds
// since then by the block's zones (age).
type contactCollector struct{ timestamp, age *prometheus.Desc }

func (c contactCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.timestamp; ch <- c.age }

func (c contactCollector) Collect(ch chan<- prometheus.Metric) {
	// Several informers of one kind (namespaces) report the stalest.
	stalest := map[[2]string]time.Time{}
	guards.Each(func(u *guardUse, labels [2]string) {
		t := u.state.ContactTime()
		if old, ok := stalest[labels]; !ok || t.Before(old) {
			stalest[labels] = t
		}
	})
	now := time.Now()
	perZone := map[[2]string]time.Time{}
	for labels, t := range stalest {
		ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, max(now.Sub(t).Seconds(), 0), labels[0], labels[1])
		for _, zone := range strings.Fields(labels[0]) {
			key := [2]string{zone, labels[1]}
			if old, ok := perZone[key]; !ok || t.Before(old) {
				perZone[key] = t
			}
		}
	}
	for labels, t := range perZone {
		ch <- prometheus.MustNewConstMetric(c.timestamp, prometheus.GaugeValue, float64(t.UnixNano())/1e9, labels[0], labels[1])
	}
}
