package xfr

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestTransferSerials: the SOA alone for a serial that is current or newer
// (RFC 1982 arithmetic), the whole zone for an older one.
func TestTransferSerials(t *testing.T) {
	h := &Histories{}
	ix, _ := testZone(t)
	s := ix.Snapshot()
	serial := s.Serial(0)
	soa := s.SOA(0)[0]
	full := inOrder(transferred(t, h, ix, 0))
	for _, tc := range []struct {
		name   string
		serial uint32
		full   bool
	}{
		{"current", serial, false},
		{"newer", serial + 1, false},
		{"much newer", serial + 1<<31 - 1, false},
		{"older", serial - 1, true},
		{"much older", serial - 1<<31 + 1, true},
		// Serial arithmetic (RFC 1982): 2^31+1 ahead is behind.
		{"wrapped", serial + 1<<31 + 1, true},
	} {
		got := transferred(t, h, ix, tc.serial)
		if tc.full {
			if !slices.Equal(inOrder(got), full) {
				t.Errorf("%s (%d): not the full zone:\n%s", tc.name, tc.serial, strings.Join(inOrder(got), "\n"))
			}
			continue
		}
		if len(got) != 1 || got[0].String() != soa.String() {
			t.Errorf("%s (%d): got %q, want the single SOA %s", tc.name, tc.serial, inOrder(got), soa)
		}
	}
}

// TestTransferLargeZone: batches of the channel keep every record once, in
// the snapshot's order, the SOA first and last.
func TestTransferLargeZone(t *testing.T) {
	h := &Histories{}
	ix, _ := testZone(t)
	for i := range 2000 {
		ix.Update(fmt.Sprintf("Service/ns/l%d", i), testutil.RRs(fmt.Sprintf("l%d.example.com. 60 IN A 10.%d.%d.1", i, i/256, i%256)))
	}
	ix.Flush()
	s := ix.Snapshot()
	rrs := transferred(t, h, ix, 0)
	want := append(append(append(s.SOA(0)[:1:1], s.NS(0)...), s.Records(0)...), s.SOA(0)[0])
	if len(rrs) != 2000+20+3 || !slices.Equal(inOrder(rrs), inOrder(want)) {
		t.Errorf("got %d records, want the %d of the zone in its order", len(rrs), len(want))
	}
}

// TestTransferNotSynced: a zone not answered yet has no transfer.
func TestTransferNotSynced(t *testing.T) {
	if _, err := (&Histories{}).Transfer("example.com.", 0, 0, func() *index.Snapshot { return nil }); err != errNotSynced {
		t.Errorf("Transfer without a snapshot: %v, want errNotSynced", err)
	}
}

// TestWhole: a zone without history is sent whole, framed by its SOA, or
// its SOA alone for a serial that is current or newer.
func TestWhole(t *testing.T) {
	soa := testSOA("catalog.invalid.", 100)
	records := testutil.RRs("catalog.invalid. 60 IN NS invalid.", "version.catalog.invalid. 60 IN TXT \"2\"")
	for _, tc := range []struct {
		serial uint32
		want   []dns.RR
	}{
		{0, []dns.RR{soa, records[0], records[1], soa}},
		{99, []dns.RR{soa, records[0], records[1], soa}},
		{100, []dns.RR{soa}},
		{101, []dns.RR{soa}},
	} {
		if got := collect(t, Whole(soa, records, tc.serial)); !slices.Equal(inOrder(got), inOrder(tc.want)) {
			t.Errorf("from serial %d: %q, want %q", tc.serial, inOrder(got), inOrder(tc.want))
		}
	}
}
