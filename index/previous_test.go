package index

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestSerialPrevious: at its first Flush, an index that replaces another (a
// Corefile reload) keeps the serial of each zone whose content is the same,
// announcing nothing for it, and gives every other zone a serial past the
// one it had; later changes move the kept serial as usual.
func TestSerialPrevious(t *testing.T) {
	zones := []string{"example.com.", "example.org.", "example.net."}
	old, clk := newTestIndex(t, zones...)
	old.Update("a", qtRRs("www.example.com. 60 IN A 192.0.2.1"))
	old.Update("b", qtRRs("www.example.org. 60 IN A 192.0.2.2"))
	old.Flush()
	before := old.Snapshot()

	// Ten seconds later, a new index of the same objects but one.
	clk.add(10 * time.Second)
	w := &serialWatch{}
	ix := New(Config{Zones: zones, SOA: indexSOA, NS: indexNS, Now: clk.now, afterFunc: clk.afterFunc, Listener: testListener{serial: w.on},
		Previous: func(zi int, s *Snapshot) (uint32, bool) {
			if zi == 2 {
				return 0, false // a zone the old index did not have
			}
			return before.Serial(zi), slices.Equal(recordStrings(before.Records(zi)), recordStrings(s.Records(zi)))
		}})
	t.Cleanup(ix.Close)
	ix.Update("a", qtRRs("www.example.com. 60 IN A 192.0.2.1"))
	ix.Update("b", qtRRs("www.example.org. 60 IN A 192.0.2.3"))
	clk.add(time.Second) // the sync takes a while
	ix.Flush()
	s := ix.Snapshot()
	now := uint32(clk.now().Unix())
	if got := s.Serial(0); got != before.Serial(0) {
		t.Errorf("the unchanged zone: serial %d, want the old %d", got, before.Serial(0))
	}
	if got := s.Serial(1); got != now {
		t.Errorf("the changed zone: serial %d, want %d", got, now)
	}
	if got := s.Serial(2); got != now {
		t.Errorf("the new zone: serial %d, want %d", got, now)
	}
	if got, want := w.take(), []string{fmt.Sprintf("example.org. %d", now), fmt.Sprintf("example.net. %d", now)}; !slices.Equal(got, want) {
		t.Errorf("announced %q, want %q", got, want)
	}
	if got := s.zones[0].soa[0].String(); got != indexSOA(zones[0], before.Serial(0)).String() {
		t.Errorf("the unchanged zone's SOA %s", got)
	}

	// A later change of the kept zone: a new serial, announced.
	clk.add(2 * time.Second)
	ix.Update("a", qtRRs("www.example.com. 60 IN A 192.0.2.9"))
	if got := ix.Snapshot().Serial(0); got != now+2 {
		t.Errorf("a change after the reload: serial %d, want %d", got, now+2)
	}
	if got := w.take(); !slices.Equal(got, []string{fmt.Sprintf("example.com. %d", now+2)}) {
		t.Errorf("announced %q", got)
	}
}

// TestSerialPreviousAhead: a zone whose old serial is ahead of the clock (a
// burst of changes) and whose content differs gets one past it.
func TestSerialPreviousAhead(t *testing.T) {
	_, clk := newTestIndex(t, "example.com.")
	ahead := uint32(clk.now().Unix()) + 5
	ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, NS: indexNS, Now: clk.now, afterFunc: clk.afterFunc,
		Previous: func(int, *Snapshot) (uint32, bool) { return ahead, false }})
	t.Cleanup(ix.Close)
	ix.Update("a", qtRRs("www.example.com. 60 IN A 192.0.2.1"))
	ix.Flush()
	if got := ix.Snapshot().Serial(0); got != ahead+1 {
		t.Errorf("serial %d, want %d", got, ahead+1)
	}
}

// recordStrings returns the presentation form of rrs, in their order.
func recordStrings(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = rr.String()
	}
	return out
}
