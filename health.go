package gateway

import (
	"sync"
	"time"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
)

// The metrics of the health option and of cluster priorities (see
// index/health.go for the decisions they count).
var (
	unhealthyTargets = metrics.GaugeVec("health_unhealthy_targets",
		"Unhealthy targets per zone: an object's records at one name, marked unhealthy (withdrawn, or answered fail-open).",
		"zone")
	failOpenNames = metrics.GaugeVec("health_failopen_names",
		"Names per zone whose every target is unhealthy, answered with all of them (fail open).",
		"zone")
	failOpenTotal = metrics.CounterVec("health_failopen_total",
		"Counter of names per zone that started to be answered fail-open.",
		"zone")
	standbyNames = metrics.GaugeVec("standby_names",
		"Names per zone answered by a standby cluster: those of a better priority have no healthy target there.",
		"zone")
)

// HealthChanged implements index.HealthListener.
func (l indexListener) HealthChanged(zone string, h index.ZoneHealth) {
	unhealthyTargets.WithLabelValues(zone).Set(float64(h.Unhealthy))
	failOpenNames.WithLabelValues(zone).Set(float64(h.FailOpen))
	standbyNames.WithLabelValues(zone).Set(float64(h.Standby))
}

// FailOpen implements index.HealthListener. A cluster set down may send
// every one of its names at once: the log says only the first few per second.
func (l indexListener) FailOpen(zone, name string, open bool) {
	if open {
		failOpenTotal.WithLabelValues(zone).Inc()
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

// failOpenLog limits the fail-open log lines to logBurst a second.
var failOpenLog logLimiter

const logBurst = 10

// logLimiter lets logBurst lines through per second and counts the others.
type logLimiter struct {
	mu         sync.Mutex
	second     int64
	n          int
	suppressed int
}

func (l *logLimiter) allow(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := now.Unix(); s != l.second {
		l.second, l.n = s, 0
	}
	l.n++
	if l.n > logBurst {
		l.suppressed++
		return false
	}
	return true
}

func (l *logLimiter) takeSuppressed() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.suppressed
	l.suppressed = 0
	return n
}
