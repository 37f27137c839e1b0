package index

import (
	"net/netip"
	"testing"

	"github.com/miekg/dns"
)

func TestAddressRecord(t *testing.T) {
	h := dns.RR_Header{Name: "a.example.com.", Class: dns.ClassINET, Ttl: 60}
	for _, c := range []struct {
		ip   string
		want string
	}{
		{"192.0.2.1", "a.example.com.\t60\tIN\tA\t192.0.2.1"},
		{"2001:db8::1", "a.example.com.\t60\tIN\tAAAA\t2001:db8::1"},
		{"::ffff:192.0.2.1", "a.example.com.\t60\tIN\tAAAA\t::ffff:192.0.2.1"},
	} {
		rr := AddressRecord(h, netip.MustParseAddr(c.ip))
		if got := rr.String(); got != c.want {
			t.Errorf("AddressRecord(%s) = %q, want %q", c.ip, got, c.want)
		}
		// The record packs and unpacks to itself, and a copy is independent.
		buf := make([]byte, 64)
		off, err := dns.PackRR(rr, buf, 0, nil, false)
		if err != nil {
			t.Fatalf("pack %s: %v", c.ip, err)
		}
		back, _, err := dns.UnpackRR(buf[:off], 0)
		if err != nil || !dns.IsDuplicate(back, rr) {
			t.Errorf("%s: unpacked %v, %v", c.ip, back, err)
		}
		if cp := dns.Copy(rr); !dns.IsDuplicate(cp, rr) {
			t.Errorf("%s: copy %v", c.ip, cp)
		}
	}
}

func TestAddressRecordAllocatesOnce(t *testing.T) {
	h := dns.RR_Header{Name: "a.example.com.", Class: dns.ClassINET, Ttl: 60}
	for _, ip := range []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")} {
		if n := testing.AllocsPerRun(100, func() { _ = AddressRecord(h, ip) }); n != 1 {
			t.Errorf("AddressRecord(%s): %v allocations, want 1", ip, n)
		}
	}
}
