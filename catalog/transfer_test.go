package catalog

import (
	"fmt"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestTransfer: the catalog's AXFR is its SOA, its records in transfer
// order and its SOA; an IXFR from its serial (or a newer one) is its SOA
// alone, from an older one the whole zone.
func TestTransfer(t *testing.T) {
	z := testZone()
	whole := append(append([]dns.RR{z.SOA()}, z.Records()...), z.SOA())
	for _, tc := range []struct {
		serial uint32
		want   []dns.RR
	}{{0, whole}, {6, whole}, {7, []dns.RR{z.SOA()}}, {8, []dns.RR{z.SOA()}}} {
		var got []dns.RR
		ch := z.Transfer(tc.serial)
		timeout := time.After(10 * time.Second)
	read:
		for {
			select {
			case rrs, ok := <-ch:
				if !ok {
					break read
				}
				got = append(got, rrs...)
			case <-timeout:
				t.Fatalf("from serial %d: channel not closed after 10s", tc.serial)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("from serial %d: %v, want %v", tc.serial, got, tc.want)
		}
	}
}

// TestNextSerial: a catalog's serial moves forward with each start in the
// process, even within one second or when the clock goes back.
func TestNextSerial(t *testing.T) {
	// A name of this run's own: the last serials are kept per process.
	name := fmt.Sprintf("serial-test-%d.invalid.", time.Now().UnixNano())
	if got := NextSerial(name, 100); got != 100 {
		t.Errorf("first serial %d, want 100", got)
	}
	if got := NextSerial(name, 100); got != 101 {
		t.Errorf("a reload in the same second: serial %d, want 101", got)
	}
	if got := NextSerial(name, 500); got != 500 {
		t.Errorf("a later reload: serial %d, want 500", got)
	}
	if got := NextSerial(name, 200); got != 501 {
		t.Errorf("a clock that went back: serial %d, want 501", got)
	}
}
