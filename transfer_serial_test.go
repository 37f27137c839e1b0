package gateway

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// xtListener passes what the index reports to an index listener, and tells
// serial of the new serials too.
type xtListener struct {
	index.Listener
	serial func(zone string, serial uint32)
}

func (l xtListener) SerialChanged(zone string, serial uint32) {
	l.serial(zone, serial)
	l.Listener.SerialChanged(zone, serial)
}

// xtClock is a settable clock for the index.
type xtClock struct{ ns atomic.Int64 }

func (c *xtClock) now() time.Time  { return time.Unix(0, c.ns.Load()) }
func (c *xtClock) set(t time.Time) { c.ns.Store(t.UnixNano()) }

// TestTransferSerial: the serial moves forward with every change of the
// zone's data, and only then; the SOA of transfers and queries follows it.
func TestTransferSerial(t *testing.T) {
	clk := &xtClock{}
	clk.set(time.Now().Truncate(time.Second))
	g := newGateway()
	g.Zones = []string{"example.com.", "example.org."}
	var mu sync.Mutex
	var announced []string
	g.index = index.New(index.Config{
		Zones: g.Zones, SOA: g.newSOA, NS: g.nsRecords, Now: clk.now,
		Listener: xtListener{indexListener{g}, func(zone string, serial uint32) {
			mu.Lock()
			announced = append(announced, fmt.Sprintf("%s %d", zone, serial))
			mu.Unlock()
		}},
	})
	t.Cleanup(g.index.Close)
	s0 := g.index.Snapshot().Serial(0)
	clk.set(time.Unix(int64(s0)+10, 0))
	takeAnnounced := func() []string {
		mu.Lock()
		defer mu.Unlock()
		a := announced
		announced = nil
		return a
	}
	serial := func() uint32 {
		t.Helper()
		s := g.index.Snapshot()
		rrs := xtTransfer(t, g, "example.com.", 0)
		if got := rrs[0].(*dns.SOA).Serial; got != s.Serial(0) {
			t.Fatalf("transfer SOA serial %d, zone serial %d", got, s.Serial(0))
		}
		answer, _, _, _ := s.Lookup(0, "example.com.", dns.TypeSOA)
		if got := answer[0].(*dns.SOA).Serial; got != s.Serial(0) {
			t.Fatalf("SOA query serial %d, zone serial %d", got, s.Serial(0))
		}
		return s.Serial(0)
	}
	expect := func(step string, want uint32, wantAnnounced ...string) {
		t.Helper()
		if got := serial(); got != want {
			t.Errorf("%s: serial %d, want %d", step, got, want)
		}
		if got := takeAnnounced(); !slices.Equal(got, wantAnnounced) {
			t.Errorf("%s: announced %q, want %q", step, got, wantAnnounced)
		}
	}

	g.index.Update("Ingress/a/www", xtRRs("www.example.com. 60 IN A 192.0.2.1"))
	g.index.Flush()
	g.ready.Store(true)
	expect("initial sync", s0+10, fmt.Sprintf("example.com. %d", s0+10), fmt.Sprintf("example.org. %d", s0+10))

	clk.set(time.Unix(int64(s0)+20, 0))
	g.index.Update("Ingress/a/www", xtRRs("www.example.com. 60 IN A 192.0.2.1"))
	expect("identical update", s0+10)
	g.index.Update("Ingress/b/www", xtRRs("www.example.com. 60 IN A 192.0.2.1"))
	expect("the same record from a second object", s0+10)
	g.index.Update("Ingress/c/out", xtRRs("www.example.net. 60 IN A 192.0.2.9"))
	expect("a record outside the zones", s0+10)
	g.index.Update("Ingress/a/www", xtRRs("www.example.com. 60 IN A 192.0.2.2", "www.example.com. 60 IN A 192.0.2.1"))
	expect("a record added", s0+20, fmt.Sprintf("example.com. %d", s0+20))
	g.index.Update("Ingress/a/www", xtRRs("www.example.com. 60 IN A 192.0.2.1", "www.example.com. 60 IN A 192.0.2.2"))
	expect("the same records in another order", s0+20)

	// A change in the same second is served at once; its serial follows on
	// the next second (the index's timer), with one announcement.
	old := serial()
	g.index.Update("Ingress/d/new", xtRRs("new.example.com. 60 IN A 192.0.2.3"))
	if _, _, _, res := g.index.Snapshot().Lookup(0, "new.example.com.", dns.TypeA); res != index.Success {
		t.Errorf("change in the same second not served at once: %v", res)
	}
	deadline := time.Now().Add(3 * time.Second)
	for g.index.Snapshot().Serial(0) == old && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	expect("a change in the same second", s0+21, fmt.Sprintf("example.com. %d", s0+21))
	// The old serial gets the whole zone, the new one only the SOA.
	if rrs := xtTransfer(t, g, "example.com.", old); len(rrs) < 3 || !slices.ContainsFunc(rrs, func(rr dns.RR) bool { return rr.Header().Name == "new.example.com." }) {
		t.Errorf("IXFR from %d: %q", old, xtStrings(rrs))
	}
	if rrs := xtTransfer(t, g, "example.com.", s0+21); len(rrs) != 1 {
		t.Errorf("IXFR from %d: %q", s0+21, xtStrings(rrs))
	}

	// Another zone's change leaves example.com's serial alone.
	clk.set(time.Unix(int64(s0)+30, 0))
	g.index.Update("Ingress/e/org", xtRRs("www.example.org. 60 IN A 192.0.2.4"))
	expect("a change in another zone", s0+21, fmt.Sprintf("example.org. %d", s0+30))
	g.index.Update("Ingress/d/new", nil)
	expect("a deletion", s0+30, fmt.Sprintf("example.com. %d", s0+30))
	g.index.Update("Ingress/d/new", nil)
	expect("deleting what is gone", s0+30)
}
