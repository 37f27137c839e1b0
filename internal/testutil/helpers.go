package testutil

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// RR parses one record in presentation format; it panics on a typo.
func RR(s string) dns.RR {
	rr, err := dns.NewRR(s)
	if err != nil || rr == nil {
		panic(fmt.Sprintf("bad test record %q: %v", s, err))
	}
	return rr
}

// RRs parses records.
func RRs(ss ...string) []dns.RR {
	out := make([]dns.RR, len(ss))
	for i, s := range ss {
		out[i] = RR(s)
	}
	return out
}

// Clock is a settable clock.
type Clock struct{ ns atomic.Int64 }

func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

func (c *Clock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }

func (c *Clock) Add(d time.Duration) { c.ns.Add(int64(d)) }

// Eventually polls f until it returns "" or the deadline passes, then fails
// with f's last message.
func Eventually(t testing.TB, what string, f func() string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		msg := f()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still wrong after 5s: %s", what, msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
