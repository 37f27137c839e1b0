package index

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func TestIndexSerial(t *testing.T) {
	ix, clk := newTestIndex(t, "example.com.", "example.org.")
	w := &serialWatch{}
	ix.setListener(testListener{serial: w.on})
	s0 := ix.Snapshot().zones[0].serial
	if ix.Snapshot().zones[1].serial != s0 {
		t.Fatal("zones start with different serials")
	}
	soaSerial := func(zi int) uint32 { return ix.Snapshot().zones[zi].soa[0].(*dns.SOA).Serial }
	serial := func(zi int) uint32 {
		t.Helper()
		s := ix.Snapshot().zones[zi].serial
		if soaSerial(zi) != s {
			t.Fatalf("SOA serial %d, zone serial %d", soaSerial(zi), s)
		}
		return s
	}

	// Changes before the first Flush are published with the Flush, and the
	// serial is the clock. Every zone gets it, with or without data, so that
	// secondaries learn of a restart.
	ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.1"))
	if serial(0) != s0 || len(w.take()) != 0 {
		t.Fatal("serial changed before Flush")
	}
	ix.Flush()
	if serial(0) != s0+10 || serial(1) != s0+10 {
		t.Fatalf("serials after Flush %d %d, want %d %d", serial(0), serial(1), s0+10, s0+10)
	}
	if got := w.take(); !slices.Equal(got, []string{fmt.Sprintf("example.com. %d", s0+10), fmt.Sprintf("example.org. %d", s0+10)}) {
		t.Fatalf("announced %q", got)
	}

	// A change in a later second: the serial is that second.
	clk.add(3 * time.Second)
	ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.2"))
	if serial(0) != s0+13 {
		t.Fatalf("serial %d, want %d", serial(0), s0+13)
	}
	w.take()

	// Identical records, or a second object adding nothing new: no new
	// serial, and for the identical update not even a new snapshot.
	clk.add(time.Second)
	snap := ix.Snapshot()
	ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.2"))
	if ix.Snapshot() != snap {
		t.Error("an identical update published a new snapshot")
	}
	ix.Update("k2", qtRRs("www.example.com. 60 IN A 192.0.2.2"))
	ix.Update("k3", qtRRs("www.example.net. 60 IN A 192.0.2.2"))
	if serial(0) != s0+13 || serial(1) != s0+10 {
		t.Fatalf("serial changed without a data change: %d", serial(0))
	}
	if got := w.take(); len(got) != 0 {
		t.Fatalf("announced %q without a change", got)
	}
	// A TTL change is a change.
	ix.Update("k2", nil)
	ix.Update("k", qtRRs("www.example.com. 30 IN A 192.0.2.2"))
	if serial(0) != s0+14 {
		t.Fatalf("TTL change: serial %d, want %d", serial(0), s0+14)
	}
	w.take()

	// A second change within the same second: the data is published at once,
	// the new serial follows on the next second by the timer. With the clock
	// just before the next second, the timer fires after a millisecond; the
	// clock has not moved by then, so the serial is serial+1.
	clk.set(time.Unix(int64(s0+20), 0))
	ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.3"))
	if serial(0) != s0+20 {
		t.Fatalf("serial %d, want %d", serial(0), s0+20)
	}
	w.take()
	clk.set(time.Unix(int64(s0+20), 999_000_000))
	ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.4"))
	if n := ix.Snapshot().get("www.example.com."); dumpNode(n) != "www.example.com. [A 60:192.0.2.4]" {
		t.Errorf("second change in a second not published at once: %s", dumpNode(n))
	}
	if serial(0) != s0+20 {
		t.Fatalf("serial changed at once within the same second: %d", serial(0))
	}
	// More changes within the same second share that timer.
	ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.5"))
	fireSerial(t, clk, ix, 0, s0+21)
	if serial(1) != s0+10 {
		t.Errorf("the other zone's serial moved: %d", serial(1))
	}
	if got := w.take(); !slices.Equal(got, []string{fmt.Sprintf("example.com. %d", s0+21)}) {
		t.Errorf("announced %q", got)
	}
	// The timer is done: no other is armed.
	if n := clk.armed(); n != 0 {
		t.Errorf("%d timers armed after the serial was published", n)
	}

	// The clock stepping back never makes the serial go back: a change gets
	// serial+1 by the timer.
	clk.set(time.Unix(int64(s0+5), 999_000_000))
	ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.6"))
	if serial(0) != s0+21 {
		t.Fatalf("serial %d right after a change with the clock behind", serial(0))
	}
	fireSerial(t, clk, ix, 0, s0+22)

	// Both zones changed by one object in a later second.
	clk.set(time.Unix(int64(s0+30), 0))
	ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.6", "www.example.org. 60 IN A 192.0.2.6"))
	if serial(0) != s0+22 || serial(1) != s0+30 {
		t.Fatalf("serials %d %d, want %d %d", serial(0), serial(1), s0+22, s0+30)
	}
}

// TestIndexSerialWrap: serials compare in RFC 1982 arithmetic, so the clock
// passing 2^32 still makes the serial "increase".
func TestIndexSerialWrap(t *testing.T) {
	ix, clk := newTestIndex(t, "example.com.")
	ix.mu.Lock()
	ix.serials.current[0] = 0xFFFFFFF0
	ix.mu.Unlock()
	clk.set(time.Unix(0xFFFFFFFF, 0))
	ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.1"))
	ix.Flush()
	if s := ix.Snapshot().zones[0].serial; s != 0xFFFFFFFF {
		t.Fatalf("serial %d, want %d", s, uint32(0xFFFFFFFF))
	}
	clk.set(time.Unix(1<<32, 0))
	ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.2"))
	if s := ix.Snapshot().zones[0].serial; s != 0 {
		t.Fatalf("serial %d after the wrap, want 0", s)
	}
	clk.set(time.Unix(1<<32, 999_000_000))
	ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.3"))
	fireSerial(t, clk, ix, 0, 1)
}

func TestSerialLess(t *testing.T) {
	for _, c := range []struct {
		a, b uint32
		want bool
	}{
		{1, 2, true},
		{2, 1, false},
		{5, 5, false},
		{0xFFFFFFFF, 0, true},
		{0, 0xFFFFFFFF, false},
		{0xFFFFFFF0, 5, true},
		{1, 1 + 0x7FFFFFFF, true},
		{1 + 0x7FFFFFFF, 1, false},
		{0, 0x80000000, false}, // undefined in RFC 1982; neither is less
		{0x80000000, 0, false},
	} {
		if got := SerialLess(c.a, c.b); got != c.want {
			t.Errorf("SerialLess(%d, %d) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestIndexConcurrentAnnounce: every update changes a serial and announces
// it, from several writers at once; run it with -race. The last serial
// announced for a zone must be its current one.
func TestIndexConcurrentAnnounce(t *testing.T) {
	ix, clk := newTestIndex(t, "example.com.", "example.org.")
	var mu sync.Mutex
	last := map[string]uint32{}
	ix.setListener(testListener{serial: func(zone string, serial uint32) {
		mu.Lock()
		defer mu.Unlock()
		if old, ok := last[zone]; ok && SerialLess(serial, old) {
			t.Errorf("%s: announced %d after %d", zone, serial, old)
		}
		last[zone] = serial
	}})
	ix.Flush()
	var wg sync.WaitGroup
	for wi := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			zone := []string{"example.com.", "example.org."}[wi%2]
			for i := range 300 {
				clk.add(time.Second)
				ix.Update(fmt.Sprintf("w%d", wi), qtRRs(fmt.Sprintf("w%d.%s 60 IN A 192.0.2.%d", wi, zone, i%200)))
			}
		}()
	}
	wg.Wait()
	s := ix.Snapshot()
	for zi, z := range ix.zones {
		if last[z] != s.zones[zi].serial {
			t.Errorf("%s: last announced serial %d, current %d", z, last[z], s.zones[zi].serial)
		}
	}
}
