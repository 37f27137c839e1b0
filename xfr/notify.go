package xfr

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coredns/coredns/plugin/transfer"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/plog"
)

// Notifier sends NOTIFY (RFC 1996) for the block's zones to the secondaries
// that the server block's transfer plugin names (its `to` addresses). It
// sends to every secondary at once, each with its own tries, so that a
// secondary that does not answer delays no other: the transfer plugin's own
// Notify tries them one after another, each up to 3 times with a 2 s
// timeout. When the transfer plugin's addresses cannot be read (targets.go),
// NOTIFY goes through the transfer plugin. The zero value sends none until
// Use.
type Notifier struct {
	plugin  atomic.Pointer[transfer.Transfer]
	targets atomic.Pointer[[]targetSet] // nil: through the transfer plugin

	mu      sync.Mutex
	sending map[notifyKey]*notifyState // a NOTIFY under way, per zone and secondary
	failing map[string]time.Time       // secondaries whose last NOTIFY failed: when it was logged
}

type notifyKey struct{ zone, to string }

// notifyState is a NOTIFY under way; again: another was asked meanwhile.
type notifyState struct{ again bool }

// NOTIFY's tries and their timeout, per secondary (the transfer plugin's).
var (
	notifyTries   = 3
	notifyTimeout = 2 * time.Second
	// failureLogEvery is how often a secondary that keeps failing is logged.
	failureLogEvery = time.Minute
)

// Use sends the NOTIFY to the addresses of t from now on.
func (n *Notifier) Use(t *transfer.Transfer) {
	n.plugin.Store(t)
	if sets, ok := readTargets(t); ok {
		n.targets.Store(&sets)
		return
	}
	n.targets.Store(nil)
	plog.Log.Warning("notify: the transfer plugin's addresses cannot be read; NOTIFY goes through it, to one secondary after another")
}

// Configured reports whether a transfer plugin is in use.
func (n *Notifier) Configured() bool { return n.plugin.Load() != nil }

// Notify sends NOTIFY for zone, in the background, to every secondary at
// once; a failure is logged.
func (n *Notifier) Notify(zone string) {
	x := n.plugin.Load()
	if x == nil {
		return
	}
	sets := n.targets.Load()
	if sets == nil {
		go func() {
			if err := x.Notify(zone); err != nil {
				plog.Log.Warningf("notify for %s: %v", zone, err)
			}
		}()
		return
	}
	set := longestMatch(*sets, zone)
	if set == nil {
		return
	}
	for _, to := range set.to {
		if to != "*" {
			n.send(zone, to, set.source)
		}
	}
}

// send sends NOTIFY for zone to one secondary in a goroutine of its own. One
// NOTIFY per zone and secondary is under way at a time: one asked
// meanwhile is sent once that one ends, so the secondary hears of the last
// serial, and a secondary that does not answer holds one goroutine per zone.
func (n *Notifier) send(zone, to string, source net.IP) {
	key := notifyKey{zone, to}
	n.mu.Lock()
	if s := n.sending[key]; s != nil {
		s.again = true
		n.mu.Unlock()
		return
	}
	if n.sending == nil {
		n.sending = map[notifyKey]*notifyState{}
	}
	s := &notifyState{}
	n.sending[key] = s
	n.mu.Unlock()
	go func() {
		for {
			n.report(zone, to, notifyOne(zone, to, source))
			n.mu.Lock()
			if !s.again {
				delete(n.sending, key)
				n.mu.Unlock()
				return
			}
			s.again = false
			n.mu.Unlock()
		}
	}()
}

// report logs a secondary that did not accept a NOTIFY, at most once per
// failureLogEvery while it keeps failing, and when it accepts one again.
func (n *Notifier) report(zone, to string, err error) {
	n.mu.Lock()
	logged, failed := n.failing[to]
	switch {
	case err == nil && failed:
		delete(n.failing, to)
	case err != nil && (!failed || time.Since(logged) >= failureLogEvery):
		if n.failing == nil {
			n.failing = map[string]time.Time{}
		}
		n.failing[to] = time.Now()
	default:
		n.mu.Unlock()
		return
	}
	n.mu.Unlock()
	if err == nil {
		plog.Log.Infof("notify for %s: %s accepts NOTIFY again", zone, to)
		return
	}
	plog.Log.Warningf("notify for %s: %v (logged once a minute while it fails; the others are notified meanwhile)", zone, err)
}

// notifyOne sends NOTIFY for zone to one secondary, up to notifyTries
// times, and returns an error unless it answered NOERROR.
func notifyOne(zone, to string, source net.IP) error {
	m := new(dns.Msg)
	m.SetNotify(zone)
	c := &dns.Client{Timeout: notifyTimeout}
	if source != nil {
		c.Dialer = &net.Dialer{Timeout: notifyTimeout, LocalAddr: &net.UDPAddr{IP: source}}
	}
	var err error
	for range notifyTries {
		var r *dns.Msg
		if r, _, err = c.Exchange(m, to); err != nil {
			continue
		}
		if r.Rcode == dns.RcodeSuccess {
			return nil
		}
		err = &rcodeError{r.Rcode}
	}
	return &notifyError{to: to, err: err}
}

type rcodeError struct{ rcode int }

func (e *rcodeError) Error() string { return "rcode " + dns.RcodeToString[e.rcode] }

type notifyError struct {
	to  string
	err error
}

func (e *notifyError) Error() string { return "not accepted by " + e.to + ": " + e.err.Error() }

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
