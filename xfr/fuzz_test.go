package xfr

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// FuzzIXFR drives a zone through changes, transfers and serial assignments
// (ops, a byte each: what, and which object), then asks IXFR from hostile
// serials (requests, four bytes each, or an index of a serial served).
// Whatever the serial, the answer is the SOA alone when it is current, the
// whole zone, or an incremental IXFR from a serial a transfer served whose
// differences, applied to what that transfer served, give the zone; it
// never holds more records than the whole zone and four SOAs. One serial is
// always served with one content.
func FuzzIXFR(f *testing.F) {
	f.Add([]byte{0x10, 0x22, 0x03, 0x13, 0x02, 0x31, 0x03, 0x04}, []byte{0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1})
	f.Add([]byte{0x03, 0x02, 0x10, 0x03, 0x11, 0x03, 0x02, 0x21, 0x03}, []byte{1, 2, 3})
	f.Add([]byte{0x04, 0x10, 0x04, 0x03, 0x02, 0x12, 0x03}, []byte{0x80, 0, 0, 0})
	f.Fuzz(func(t *testing.T, ops, requests []byte) {
		if len(ops) > 256 || len(requests) > 256 {
			return
		}
		clk := &testutil.Clock{}
		clk.Set(time.Unix(1_700_000_000, 0))
		ix := index.New(index.Config{Zones: []string{"example.com."}, SOA: testSOA, NS: testNS, Now: clk.Now})
		defer ix.Close()
		ix.Flush()
		h := &Histories{}
		served := map[uint32][]dns.RR{} // serial → what the first transfer under it served, sorted
		var order []uint32
		whole := func() []dns.RR {
			rrs := collect(t, mustTransfer(t, h, ix, 0))
			body := rrs[1 : len(rrs)-1]
			slices.SortFunc(body, func(a, b dns.RR) int { return strings.Compare(a.String(), b.String()) })
			return rrs
		}
		for _, op := range ops {
			k := int(op>>4) % 8
			switch op & 0x0f % 5 {
			case 0: // an object publishes an address
				ix.Update(fmt.Sprintf("Service/ns/s%d", k), testutil.RRs(fmt.Sprintf("s%d.example.com. 60 IN A 192.0.2.%d", k, op)))
			case 1: // an object goes
				ix.Update(fmt.Sprintf("Service/ns/s%d", k), nil)
			case 2: // time passes
				clk.Add(time.Duration(k%3) * time.Second)
			case 3: // a secondary transfers the zone
				got := whole()
				serial := got[0].(*dns.SOA).Serial
				if before, ok := served[serial]; ok && !slices.Equal(inOrder(before), inOrder(got)) {
					t.Fatalf("serial %d served as\n%s\nthen as\n%s", serial, strings.Join(inOrder(before), "\n"), strings.Join(inOrder(got), "\n"))
				} else if !ok {
					served[serial], order = got, append(order, serial)
				}
			case 4: // the index tells the zone's serial
				h.Assigned("example.com.", 0, ix.Snapshot())
			}
		}
		current := whole()
		zoneLen := len(current) - 2
		for i := 0; i < len(requests); {
			var serial uint32
			if len(requests)-i >= 4 && requests[i]&1 == 0 {
				serial = binary.BigEndian.Uint32(requests[i:])
				i += 4
			} else if len(order) > 0 {
				serial = order[int(requests[i])%len(order)]
				i++
			} else {
				i++
				continue
			}
			got := collect(t, mustTransfer(t, h, ix, serial))
			if len(got) > zoneLen+4 {
				t.Fatalf("IXFR from %d: %d records, the zone has %d", serial, len(got), zoneLen)
			}
			cur := current[0].(*dns.SOA).Serial
			switch {
			case serial != 0 && !index.SerialLess(serial, cur):
				if len(got) != 1 {
					t.Fatalf("IXFR from %d, at or past the zone's %d: %d records, want its SOA", serial, cur, len(got))
				}
			case testutil.IncrementalIXFR(got):
				base, ok := served[serial]
				if !ok {
					t.Fatalf("IXFR from %d, a serial no transfer served, is incremental", serial)
				}
				applied, err := testutil.ApplyIXFR(base, got)
				if err != nil {
					t.Fatalf("IXFR from %d: %v", serial, err)
				}
				if !slices.Equal(inOrder(applied), inOrder(current)) {
					t.Fatalf("IXFR from %d applied:\n%s\nthe zone:\n%s", serial, strings.Join(inOrder(applied), "\n"), strings.Join(inOrder(current), "\n"))
				}
			default:
				slices.SortFunc(got[1:len(got)-1], func(a, b dns.RR) int { return strings.Compare(a.String(), b.String()) })
				if !slices.Equal(inOrder(got), inOrder(current)) {
					t.Fatalf("IXFR from %d is neither incremental nor the zone:\n%s", serial, strings.Join(inOrder(got), "\n"))
				}
			}
		}
	})
}

// mustTransfer is h.Transfer of zone 0 of ix from serial.
func mustTransfer(t *testing.T, h *Histories, ix *index.Index, serial uint32) <-chan []dns.RR {
	t.Helper()
	ch, err := h.Transfer("example.com.", 0, serial, ix.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}
