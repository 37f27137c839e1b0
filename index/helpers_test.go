package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
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
type qtClock struct {
	ns atomic.Int64

	mu     sync.Mutex
	timers []*qtTimer // armed and not stopped, in the order armed
}

func (c *qtClock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *qtClock) set(t time.Time)     { c.ns.Store(t.UnixNano()) }
func (c *qtClock) add(d time.Duration) { c.ns.Add(int64(d)) }

// qtTimer is a timer of a qtClock: it fires only when the test says so.
type qtTimer struct {
	c  *qtClock
	at time.Time
	f  func()
}

// afterFunc implements Config.afterFunc.
func (c *qtClock) afterFunc(d time.Duration, f func()) timer {
	t := &qtTimer{c: c, at: c.now().Add(d), f: f}
	c.mu.Lock()
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	return t
}

func (t *qtTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	n := len(t.c.timers)
	t.c.timers = slices.DeleteFunc(t.c.timers, func(o *qtTimer) bool { return o == t })
	return len(t.c.timers) < n
}

// armed is the number of timers armed and neither fired nor stopped.
func (c *qtClock) armed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// fire sets the clock to the time of the first armed timer and runs it; it
// reports whether there was one.
func (c *qtClock) fire() bool {
	c.mu.Lock()
	if len(c.timers) == 0 {
		c.mu.Unlock()
		return false
	}
	t := c.timers[0]
	c.timers = c.timers[1:]
	c.mu.Unlock()
	if c.now().Before(t.at) {
		c.set(t.at)
	}
	t.f()
	return true
}

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

// randomName returns a maker of names of up to three labels drawn from
// labels, below one of suffixes, chosen by r.
func randomName(r *rand.Rand, labels, suffixes []string) func() string {
	return func() string {
		var parts []string
		for range r.IntN(4) {
			parts = append(parts, labels[r.IntN(len(labels))])
		}
		return strings.Join(append(parts, suffixes[r.IntN(len(suffixes))]), ".")
	}
}

// heldObjects returns the records and claims of the objects ix holds, by
// key; the caller holds ix.mu.
func (ix *Index) heldObjects() (map[string][]dns.RR, map[string]Claim) {
	records, claims := map[string][]dns.RR{}, map[string]Claim{}
	ix.objects.each(func(id objectID, wire []byte) {
		key := ix.objects.key(id)
		records[key], claims[key] = unpackRecords(wire), ix.objects.claim(id)
	})
	return records, claims
}

// namesUsed returns the numbers of the names whose slots ix uses, with
// their owner and children; the caller holds ix.mu.
func (ix *Index) namesUsed() map[uint32][2]int64 {
	used := map[uint32][2]int64{}
	for i, v := range ix.owners.one.used() {
		used[i] = [2]int64{int64(v), used[i][1]}
	}
	for i, v := range ix.nodes.children.used() {
		used[i] = [2]int64{used[i][0], int64(v)}
	}
	return used
}

// used returns the values that are not zero, by number.
func (s *slots[T]) used() map[uint32]T {
	var zero T
	out := map[uint32]T{}
	s.p.each(func(i uint32, v *T) {
		if *v != zero {
			out[i] = *v
		}
	})
	return out
}

// rejectionsNow returns the claims the policy currently rejects.
func (ix *Index) rejectionsNow() []Rejection {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.rules.rejectionsNow()
}

// serialPending reports whether a serial waits for the next second.
func (ix *Index) serialPending() bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.serials.tick != nil
}

// setListener makes l the listener of ix.
func (ix *Index) setListener(l Listener) { ix.listener, ix.rules.listener = l, l }
