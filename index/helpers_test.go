package index

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// qtRR parses one record in presentation format; it panics on a typo.
func qtRR(s string) dns.RR {
	rr, err := dns.NewRR(s)
	if err != nil || rr == nil {
		panic(fmt.Sprintf("bad test record %q: %v", s, err))
	}
	return rr
}

// qtRRs parses records.
func qtRRs(ss ...string) []dns.RR {
	out := make([]dns.RR, len(ss))
	for i, s := range ss {
		out[i] = qtRR(s)
	}
	return out
}

// qtClock is a settable clock for Config.Now.
type qtClock struct{ ns atomic.Int64 }

func (c *qtClock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *qtClock) set(t time.Time)     { c.ns.Store(t.UnixNano()) }
func (c *qtClock) add(d time.Duration) { c.ns.Add(int64(d)) }

// testListener is a Listener made of functions; either may be nil.
type testListener struct {
	serial   func(zone string, serial uint32)
	conflict func(name, message string)
}

func (l testListener) SerialChanged(zone string, serial uint32) {
	if l.serial != nil {
		l.serial(zone, serial)
	}
}

func (l testListener) Conflict(name, message string) {
	if l.conflict != nil {
		l.conflict(name, message)
	}
}
