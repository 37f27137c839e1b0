package index

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestIndexRestoredSerials: zones start at the serials of Config.Serials, and
// the first Flush moves each past it, at once, whatever the clock says.
func TestIndexRestoredSerials(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name     string
		restored uint32 // 0: none
		want     uint32 // serial after the first Flush
	}{
		// Without a restored serial the Flush in the serial's second
		// leaves the new serial to the next second (TestIndexSerial).
		{"none", 0, 1_800_000_000},
		{"older than the clock", 1_799_000_000, 1_800_000_000},
		{"the clock's second", 1_800_000_000, 1_800_000_001},
		{"ahead of the clock", 1_800_000_100, 1_800_000_101},
		{"wrapped ahead of the clock", 1_800_000_000 + 1<<31 - 1, 1_800_000_000 + 1<<31},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := &qtClock{}
			clk.set(now)
			ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, NS: indexNS, Now: clk.now, Serials: []uint32{tc.restored}})
			t.Cleanup(ix.Close)
			start := tc.restored
			if start == 0 {
				start = uint32(now.Unix())
			}
			if got := ix.Snapshot().Serial(0); got != start {
				t.Fatalf("serial before Flush %d, want %d", got, start)
			}
			if got := ix.Snapshot().SOA(0)[0].(*dns.SOA).Serial; got != start {
				t.Fatalf("SOA serial before Flush %d, want %d", got, start)
			}
			ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.1"))
			ix.Flush()
			if got := ix.Snapshot().Serial(0); got != tc.want {
				t.Fatalf("serial after Flush %d, want %d", got, tc.want)
			}
			if tc.restored != 0 && !SerialLess(tc.restored, ix.Snapshot().Serial(0)) {
				t.Fatalf("serial %d not past the restored %d", ix.Snapshot().Serial(0), tc.restored)
			}
			if ix.serialPending() != (tc.restored == 0) {
				t.Fatalf("serialPending() = %v", ix.serialPending())
			}
			// Later changes in the same second follow the usual rule.
			ix.Update("k", qtRRs("www.example.com. 60 IN A 192.0.2.2"))
			if got := ix.Snapshot().Serial(0); got != tc.want && tc.restored != 0 {
				t.Fatalf("second change moved the serial to %d at once", got)
			}
		})
	}
}

// TestIndexSeal: Seal publishes the records with the restored serials and
// publishes nothing later.
func TestIndexSeal(t *testing.T) {
	clk := &qtClock{}
	clk.set(time.Unix(1_800_000_000, 0))
	ix := New(Config{Zones: []string{"example.com.", "example.org."}, SOA: indexSOA, NS: indexNS, Now: clk.now, Serials: []uint32{1_700_000_000, 0}})
	t.Cleanup(ix.Close)
	ix.Update("copy", qtRRs("www.example.com. 60 IN A 192.0.2.1", "a.b.example.org. 60 IN TXT x"))
	ix.Seal()
	s := ix.Snapshot()
	if s.Serial(0) != 1_700_000_000 || s.Serial(1) != 1_800_000_000 {
		t.Fatalf("serials %d %d, want 1700000000 1800000000", s.Serial(0), s.Serial(1))
	}
	want := []string{"a.b.example.org. [TXT 60:\"x\"]", "b.example.org.", "example.com.", "example.org.", "www.example.com. [A 60:192.0.2.1]"}
	if got := dumpSnapshot(s); !slices.Equal(got, want) {
		t.Fatalf("sealed snapshot:\n%q\nwant\n%q", got, want)
	}
	checkIndexInvariants(t, ix)
	ix.Update("copy", nil)
	if ix.Snapshot() != s {
		t.Fatal("an update after Seal was published")
	}
}

// TestCanonicalKey: the keys sort names as RFC 4034 §6.1 does (its example,
// lower-cased, without the escaped labels).
func TestCanonicalKey(t *testing.T) {
	want := []string{"example.", "a.example.", "yljkjljk.a.example.", "z.a.example.", "zabc.a.example.", "z.example.", "*.z.example."}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, func(a, b string) int { return strings.Compare(canonicalKey(a), canonicalKey(b)) })
	if !slices.Equal(got, want) {
		t.Errorf("sorted %q, want %q", got, want)
	}
}
