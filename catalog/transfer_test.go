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
// process that changes it, even within one second or when the clock goes
// back, and stays when the catalog is the same (a reload that changes
// nothing).
func TestNextSerial(t *testing.T) {
	// A name of this run's own: the last serials are kept per process.
	name := fmt.Sprintf("serial-test-%d.invalid.", time.Now().UnixNano())
	cfg := func(serial uint32, zones ...string) Config {
		c := Config{Name: name, Serial: serial, TTL: 30, Refresh: 300, Retry: 60, Expire: 604800}
		for _, z := range zones {
			c.Members = append(c.Members, Member{Zone: z})
		}
		return c
	}
	for _, step := range []struct {
		what string
		cfg  Config
		want uint32
	}{
		{"the first start", cfg(100, "example.com."), 100},
		{"a reload in the same second that adds a member", cfg(100, "example.com.", "example.org."), 101},
		{"a reload that changes nothing", cfg(300, "example.org.", "example.com."), 101},
		{"a later reload that removes a member", cfg(500, "example.com."), 500},
		{"a clock that went back", cfg(200, "example.net."), 501},
		{"another TTL", func() Config { c := cfg(200, "example.net."); c.TTL = 60; return c }(), 502},
	} {
		if got := NextSerial(step.cfg); got != step.want {
			t.Errorf("%s: serial %d, want %d", step.what, got, step.want)
		}
	}
}
