package gateway

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// ixGateway returns a ready Gateway of example.com. on a clock the test
// moves, and a function that sets the clock to the index's first serial + sec.
func ixGateway(t *testing.T) (*Gateway, func(sec int64)) {
	t.Helper()
	clk := &xtClock{}
	clk.set(time.Now().Truncate(time.Second))
	g := newGateway()
	g.Zones = []string{"example.com."}
	g.index = index.New(index.Config{Zones: g.Zones, SOA: g.newSOA, NS: g.nsRecords, Now: clk.now})
	t.Cleanup(g.index.Close)
	s0 := int64(g.index.Snapshot().Serial(0))
	at := func(sec int64) { clk.set(time.Unix(s0+sec, 0)) }
	at(10)
	for i := range 20 {
		g.index.Update(fmt.Sprintf("Service/ns/s%d", i), xtRRs(fmt.Sprintf("s%d.example.com. 60 IN A 192.0.2.%d", i, i+1)))
	}
	g.index.Flush()
	g.ready.Store(true)
	return g, at
}

// ixAXFR returns the full transfer of example.com. in the form xtApplyIXFR
// returns: the SOA, the records ordered by presentation form, the SOA.
func ixAXFR(t *testing.T, g *Gateway) []dns.RR {
	t.Helper()
	rrs := xtTransfer(t, g, "example.com.", 0)
	body := rrs[1 : len(rrs)-1]
	slices.SortFunc(body, func(a, b dns.RR) int { return strings.Compare(a.String(), b.String()) })
	return rrs
}

// TestTransferIXFRIncremental: IXFR from a serial a transfer served is the
// condensed difference to the current zone (RFC 1995 §4, §6), which applied
// to what that transfer served gives the current zone; from any serial the
// history cannot vouch for, the whole zone.
func TestTransferIXFRIncremental(t *testing.T) {
	g, at := ixGateway(t)
	axfr := map[uint32][]dns.RR{}
	serial := func() uint32 { return g.index.Snapshot().Serial(0) }
	served := func() {
		axfr[serial()] = ixAXFR(t, g)
	}
	served()
	first := serial()
	// Three changes, a second apart, each served by a transfer: a changed
	// address, a deleted name, a name added and a TTL changed.
	at(11)
	g.index.Update("Service/ns/s1", xtRRs("s1.example.com. 60 IN A 198.51.100.1"))
	served()
	at(12)
	g.index.Update("Service/ns/s2", nil)
	served()
	at(13)
	g.index.Update("Service/ns/new", xtRRs("new.example.com. 60 IN AAAA 2001:db8::1"))
	g.index.Update("Service/ns/s3", xtRRs("s3.example.com. 30 IN A 192.0.2.4"))
	// Not served: no secondary can hold this serial's content.
	unserved := serial()
	at(14)
	g.index.Update("Service/ns/s1", xtRRs("s1.example.com. 60 IN A 192.0.2.2")) // back as at first
	current := ixAXFR(t, g)

	for from, base := range axfr {
		ixfr := xtTransfer(t, g, "example.com.", from)
		got, err := xtApplyIXFR(base, ixfr)
		if err != nil {
			t.Errorf("IXFR from %d: %v", from, err)
			continue
		}
		if !slices.Equal(xtStrings(got), xtStrings(current)) {
			t.Errorf("IXFR from %d applied:\n%s\nthe zone:\n%s", from, strings.Join(xtStrings(got), "\n"), strings.Join(xtStrings(current), "\n"))
		}
	}
	// Condensed: s1 went back to its first address, so from the first
	// serial only s2, s3 and new differ (s2 deleted, s3's TTL, new added).
	ixfr := xtTransfer(t, g, "example.com.", first)
	if n := len(ixfr); n != 4+4 {
		t.Errorf("IXFR from %d: %d records, want 8:\n%s", first, n, strings.Join(xtStrings(ixfr), "\n"))
	}
	for _, tc := range []struct {
		name   string
		serial uint32
	}{{"never served", unserved}, {"unknown", first - 5}} {
		if got := xtTransfer(t, g, "example.com.", tc.serial); xtIncremental(got) || !slices.Equal(xtStrings(got), xtStrings(xtTransfer(t, g, "example.com.", 0))) {
			t.Errorf("IXFR from %s serial %d: not the whole zone:\n%s", tc.name, tc.serial, strings.Join(xtStrings(got), "\n"))
		}
	}
}

// TestTransferIXFRPinned: a change within the second of the last serial is
// answered at once but transferred only under its own serial: a transfer
// under a serial serves the content first served under it, and the IXFR from
// that serial is incremental.
func TestTransferIXFRPinned(t *testing.T) {
	g, at := ixGateway(t)
	at(11)
	g.index.Update("Service/ns/s1", xtRRs("s1.example.com. 60 IN A 198.51.100.1"))
	serial := g.index.Snapshot().Serial(0)
	first := ixAXFR(t, g)
	g.index.Update("Service/ns/s2", xtRRs("s2.example.com. 60 IN A 198.51.100.2"))
	if s := g.index.Snapshot().Serial(0); s != serial {
		t.Fatalf("the serial moved within a second: %d → %d", serial, s)
	}
	if again := ixAXFR(t, g); !slices.Equal(xtStrings(again), xtStrings(first)) {
		t.Errorf("a second transfer under serial %d serves other content:\n%s\nfirst:\n%s", serial, strings.Join(xtStrings(again), "\n"), strings.Join(xtStrings(first), "\n"))
	}
	at(12)
	g.index.Update("Service/ns/s3", xtRRs("s3.example.com. 60 IN A 198.51.100.3"))
	current := ixAXFR(t, g)
	if !slices.ContainsFunc(current, func(rr dns.RR) bool { return strings.Contains(rr.String(), "198.51.100.2") }) {
		t.Errorf("the change within the second is not in the next serial's transfer:\n%s", strings.Join(xtStrings(current), "\n"))
	}
	got, err := xtApplyIXFR(first, xtTransfer(t, g, "example.com.", serial))
	if err != nil {
		t.Fatalf("IXFR from %d: %v", serial, err)
	}
	if !slices.Equal(xtStrings(got), xtStrings(current)) {
		t.Errorf("IXFR from %d applied:\n%s\nthe zone:\n%s", serial, strings.Join(xtStrings(got), "\n"), strings.Join(xtStrings(current), "\n"))
	}
}

// TestTransferIXFRBounded: the history keeps at most ixfrMaxVersions
// versions, and no more differences than the zone has records (or
// ixfrMinKept); an IXFR larger than the zone is the zone.
func TestTransferIXFRBounded(t *testing.T) {
	g, at := ixGateway(t)
	first := g.index.Snapshot().Serial(0)
	xtTransfer(t, g, "example.com.", 0)
	for i := range ixfrMaxVersions + 5 {
		at(int64(11 + i))
		g.index.Update("Service/ns/s1", xtRRs(fmt.Sprintf("s1.example.com. 60 IN A 198.51.%d.%d", i/256, i%256)))
		xtTransfer(t, g, "example.com.", 0)
	}
	h := g.ixfr.zone("example.com.")
	h.mu.Lock()
	versions, kept := len(h.versions), h.kept
	h.mu.Unlock()
	if versions > ixfrMaxVersions || kept > ixfrMinKept {
		t.Errorf("history of %d versions, %d records kept", versions, kept)
	}
	if got := xtTransfer(t, g, "example.com.", first); xtIncremental(got) {
		t.Errorf("IXFR from the purged serial %d is incremental", first)
	}
	// A change of most of the zone: the IXFR would be larger than the zone.
	before := g.index.Snapshot().Serial(0)
	at(1000)
	for i := range 20 {
		g.index.Update(fmt.Sprintf("Service/ns/s%d", i), xtRRs(fmt.Sprintf("s%d.example.com. 60 IN A 203.0.113.%d", i, i+1)))
	}
	if got := xtTransfer(t, g, "example.com.", before); xtIncremental(got) {
		t.Errorf("IXFR larger than the zone sent incrementally (%d records)", len(got))
	}
}

// TestTransferIXFRSerialBack: when the serial goes back (a copy from disk,
// then the informers' index), no IXFR starts at a serial served before: the
// same serial may come again with other content.
func TestTransferIXFRSerialBack(t *testing.T) {
	g := newGateway()
	g.Zones = []string{"example.com."}
	base := time.Now().Truncate(time.Second)
	snap := func(sec int, addr string) *index.Snapshot {
		clk := &xtClock{}
		clk.set(base)
		ix := index.New(index.Config{Zones: g.Zones, SOA: g.newSOA, NS: g.nsRecords, Now: clk.now})
		t.Cleanup(ix.Close)
		clk.set(base.Add(time.Duration(sec) * time.Second))
		ix.Update("Service/ns/a", xtRRs("a.example.com. 60 IN A "+addr))
		ix.Flush()
		return ix.Snapshot()
	}
	later, earlier, again := snap(20, "192.0.2.1"), snap(10, "192.0.2.2"), snap(20, "192.0.2.3")
	if later.Serial(0) != again.Serial(0) || !index.SerialLess(earlier.Serial(0), later.Serial(0)) {
		t.Fatalf("serials %d, %d, %d", later.Serial(0), earlier.Serial(0), again.Serial(0))
	}
	h := g.ixfr.zone("example.com.")
	for _, s := range []*index.Snapshot{later, earlier, again} {
		h.record(s, 0)
	}
	if _, del, add, ok := h.since(later.Serial(0)); ok {
		t.Errorf("IXFR from %d vouched for after the serial went back: -%v +%v", later.Serial(0), del, add)
	}
	if _, _, _, ok := h.since(earlier.Serial(0)); ok {
		t.Errorf("IXFR from %d vouched for after the serial went back", earlier.Serial(0))
	}
}
