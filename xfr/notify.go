package xfr

import (
	"sync/atomic"
	"time"

	"github.com/coredns/coredns/plugin/transfer"

	"github.com/seed-e581d630/k8s_gateway/internal/plog"
)

// Notifier sends NOTIFY for the block's zones to the secondaries that the
// server block's transfer plugin names. The zero value sends none until
// Use.
type Notifier struct {
	plugin atomic.Pointer[transfer.Transfer]
}

// Use sends the NOTIFY through t from now on.
func (n *Notifier) Use(t *transfer.Transfer) { n.plugin.Store(t) }

// Configured reports whether a transfer plugin is in use.
func (n *Notifier) Configured() bool { return n.plugin.Load() != nil }

// Notify sends NOTIFY for zone, in the background; a failure is logged.
func (n *Notifier) Notify(zone string) {
	x := n.plugin.Load()
	if x == nil {
		return
	}
	go func() {
		if err := x.Notify(zone); err != nil {
			plog.Log.Warningf("notify for %s: %v", zone, err)
		}
	}()
}

// startNotifyAfter are the delays after the start at which NOTIFY goes out
// again for every zone (AfterStart). OnStartup runs before the new instance
// listens, so a secondary that asks for the SOA on the first NOTIFY of a
// reload still gets the old instance's serial (or no answer) and keeps its
// copy: zones and catalog members may have changed with the reload. The
// second NOTIFY covers a slow start.
var startNotifyAfter = []time.Duration{time.Second, 5 * time.Second}

// AfterStart returns the runner that sends NOTIFY for zones a second and
// five seconds after it starts, until stop.
func (n *Notifier) AfterStart(zones []string) func(stop <-chan struct{}) {
	return func(stop <-chan struct{}) {
		start := time.Now()
		for _, d := range startNotifyAfter {
			select {
			case <-stop:
				return
			case <-time.After(time.Until(start.Add(d))):
				for _, z := range zones {
					n.Notify(z)
				}
			}
		}
	}
}
