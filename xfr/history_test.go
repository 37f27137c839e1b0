package xfr

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestIXFRIncremental: IXFR from a serial a transfer served is the
// condensed difference to the current zone (RFC 1995 §4, §6), which applied
// to what that transfer served gives the current zone; from any serial the
// history cannot vouch for, the whole zone.
func TestIXFRIncremental(t *testing.T) {
	h := &Histories{}
	ix, at := testZone(t)
	axfr := map[uint32][]dns.RR{}
	serial := func() uint32 { return ix.Snapshot().Serial(0) }
	served := func() {
		axfr[serial()] = wholeSorted(t, h, ix)
	}
	served()
	first := serial()
	// Three changes, a second apart, each served by a transfer: a changed
	// address, a deleted name, a name added and a TTL changed.
	at(11)
	ix.Update("Service/ns/s1", testutil.RRs("s1.example.com. 60 IN A 198.51.100.1"))
	served()
	at(12)
	ix.Update("Service/ns/s2", nil)
	served()
	at(13)
	ix.Update("Service/ns/new", testutil.RRs("new.example.com. 60 IN AAAA 2001:db8::1"))
	ix.Update("Service/ns/s3", testutil.RRs("s3.example.com. 30 IN A 192.0.2.4"))
	// Not served: no secondary can hold this serial's content.
	unserved := serial()
	at(14)
	ix.Update("Service/ns/s1", testutil.RRs("s1.example.com. 60 IN A 192.0.2.2")) // back as at first
	current := wholeSorted(t, h, ix)

	for from, base := range axfr {
		ixfr := transferred(t, h, ix, from)
		got, err := testutil.ApplyIXFR(base, ixfr)
		if err != nil {
			t.Errorf("IXFR from %d: %v", from, err)
			continue
		}
		if !slices.Equal(inOrder(got), inOrder(current)) {
			t.Errorf("IXFR from %d applied:\n%s\nthe zone:\n%s", from, strings.Join(inOrder(got), "\n"), strings.Join(inOrder(current), "\n"))
		}
	}
	// Condensed: s1 went back to its first address, so from the first
	// serial only s2, s3 and new differ (s2 deleted, s3's TTL, new added).
	ixfr := transferred(t, h, ix, first)
	if n := len(ixfr); n != 4+4 {
		t.Errorf("IXFR from %d: %d records, want 8:\n%s", first, n, strings.Join(inOrder(ixfr), "\n"))
	}
	for _, tc := range []struct {
		name   string
		serial uint32
	}{{"never served", unserved}, {"unknown", first - 5}} {
		if got := transferred(t, h, ix, tc.serial); testutil.IncrementalIXFR(got) || !slices.Equal(inOrder(got), inOrder(transferred(t, h, ix, 0))) {
			t.Errorf("IXFR from %s serial %d: not the whole zone:\n%s", tc.name, tc.serial, strings.Join(inOrder(got), "\n"))
		}
	}
}

// TestIXFRPinned: a change within the second of the last serial is
// answered at once but transferred only under its own serial: a transfer
// under a serial serves the content first served under it, and the IXFR from
// that serial is incremental.
func TestIXFRPinned(t *testing.T) {
	h := &Histories{}
	ix, at := testZone(t)
	at(11)
	ix.Update("Service/ns/s1", testutil.RRs("s1.example.com. 60 IN A 198.51.100.1"))
	serial := ix.Snapshot().Serial(0)
	first := wholeSorted(t, h, ix)
	ix.Update("Service/ns/s2", testutil.RRs("s2.example.com. 60 IN A 198.51.100.2"))
	if s := ix.Snapshot().Serial(0); s != serial {
		t.Fatalf("the serial moved within a second: %d → %d", serial, s)
	}
	if again := wholeSorted(t, h, ix); !slices.Equal(inOrder(again), inOrder(first)) {
		t.Errorf("a second transfer under serial %d serves other content:\n%s\nfirst:\n%s", serial, strings.Join(inOrder(again), "\n"), strings.Join(inOrder(first), "\n"))
	}
	at(12)
	ix.Update("Service/ns/s3", testutil.RRs("s3.example.com. 60 IN A 198.51.100.3"))
	current := wholeSorted(t, h, ix)
	if !slices.ContainsFunc(current, func(rr dns.RR) bool { return strings.Contains(rr.String(), "198.51.100.2") }) {
		t.Errorf("the change within the second is not in the next serial's transfer:\n%s", strings.Join(inOrder(current), "\n"))
	}
	got, err := testutil.ApplyIXFR(first, transferred(t, h, ix, serial))
	if err != nil {
		t.Fatalf("IXFR from %d: %v", serial, err)
	}
	if !slices.Equal(inOrder(got), inOrder(current)) {
		t.Errorf("IXFR from %d applied:\n%s\nthe zone:\n%s", serial, strings.Join(inOrder(got), "\n"), strings.Join(inOrder(current), "\n"))
	}
}

// TestIXFRBounded: the history keeps at most maxVersions
// versions, and no more differences than the zone has records (or
// minKept); an IXFR larger than the zone is the zone.
func TestIXFRBounded(t *testing.T) {
	h := &Histories{}
	ix, at := testZone(t)
	first := ix.Snapshot().Serial(0)
	transferred(t, h, ix, 0)
	for i := range maxVersions + 5 {
		at(int64(11 + i))
		ix.Update("Service/ns/s1", testutil.RRs(fmt.Sprintf("s1.example.com. 60 IN A 198.51.%d.%d", i/256, i%256)))
		transferred(t, h, ix, 0)
	}
	z := h.zone("example.com.")
	z.mu.Lock()
	versions, kept := len(z.versions), z.kept
	z.mu.Unlock()
	if versions > maxVersions || kept > minKept {
		t.Errorf("history of %d versions, %d records kept", versions, kept)
	}
	if got := transferred(t, h, ix, first); testutil.IncrementalIXFR(got) {
		t.Errorf("IXFR from the purged serial %d is incremental", first)
	}
	// A change of most of the zone: the IXFR would be larger than the zone.
	before := ix.Snapshot().Serial(0)
	at(1000)
	for i := range 20 {
		ix.Update(fmt.Sprintf("Service/ns/s%d", i), testutil.RRs(fmt.Sprintf("s%d.example.com. 60 IN A 203.0.113.%d", i, i+1)))
	}
	if got := transferred(t, h, ix, before); testutil.IncrementalIXFR(got) {
		t.Errorf("IXFR larger than the zone sent incrementally (%d records)", len(got))
	}
}

// TestIXFRSerialBack: when the serial goes back (a copy from disk,
// then the informers' index), no IXFR starts at a serial served before: the
// same serial may come again with other content.
func TestIXFRSerialBack(t *testing.T) {
	zones := []string{"example.com."}
	base := time.Now().Truncate(time.Second)
	snap := func(sec int, addr string) *index.Snapshot {
		clk := &testutil.Clock{}
		clk.Set(base)
		ix := index.New(index.Config{Zones: zones, SOA: testSOA, NS: testNS, Now: clk.Now})
		t.Cleanup(ix.Close)
		clk.Set(base.Add(time.Duration(sec) * time.Second))
		ix.Update("Service/ns/a", testutil.RRs("a.example.com. 60 IN A "+addr))
		ix.Flush()
		return ix.Snapshot()
	}
	later, earlier, again := snap(20, "192.0.2.1"), snap(10, "192.0.2.2"), snap(20, "192.0.2.3")
	if later.Serial(0) != again.Serial(0) || !index.SerialLess(earlier.Serial(0), later.Serial(0)) {
		t.Fatalf("serials %d, %d, %d", later.Serial(0), earlier.Serial(0), again.Serial(0))
	}
	h := (&Histories{}).zone("example.com.")
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
