package gateway

import (
	"sync"
	"time"

	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
)

// The metrics of the health option and of cluster priorities (see
// index/health.go for the decisions they count), per zone and view (the
// view plugin's name in the server block, "" without): two views of one
// zone decide apart.
var (
	unhealthyTargets = metrics.GaugeVec("health_unhealthy_targets",
		"Unhealthy targets per zone: an object's records at one name, marked unhealthy (withdrawn, or answered fail-open).",
		"zone", "view")
	failOpenNames = metrics.GaugeVec("health_failopen_names",
		"Names per zone whose every target is unhealthy, answered with all of them (fail open).",
		"zone", "view")
	failOpenTotal = metrics.CounterVec("health_failopen_total",
		"Counter of names per zone that started to be answered fail-open.",
		"zone", "view")
	standbyNames = metrics.GaugeVec("standby_names",
		"Names per zone answered by a standby cluster: those of a better priority have no healthy target there.",
		"zone", "view")
)

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
