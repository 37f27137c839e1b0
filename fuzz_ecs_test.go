package gateway

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/miekg/dns"
)

// FuzzECSOption: the EDNS Client Subnet option of any query (RFC 7871) as
// the server parses it. badSubnet refuses exactly the options whose parsed
// form shows a SCOPE PREFIX-LENGTH or ADDRESS bits beyond the SOURCE
// PREFIX-LENGTH (checked against the option's own bytes); for the others
// echoSubnet gives the reply one OPT record with the query's subnet and a
// scope of 0, or of the source prefix when the answer depended on it. The
// work is bounded: the reply's OPT record is never larger than the query's.
func FuzzECSOption(f *testing.F) {
	for _, s := range [][]byte{
		{0, 1, 24, 0, 192, 0, 2},                 // 192.0.2.0/24
		{0, 1, 24, 0, 192, 0, 2, 1},              // a bit past the prefix
		{0, 1, 24, 24, 192, 0, 2},                // a scope in a query
		{0, 2, 56, 0, 0x20, 0x01, 0x0d, 0xb8, 0}, // 2001:db8::/56
		{0, 2, 0, 0},
		{0, 0, 0, 0},                          // dig's FAMILY 0
		{0, 1, 33, 0, 1, 2, 3, 4},             // a prefix too long
		{0, 3, 8, 0, 10},                      // an unknown family
		{0, 1, 32, 0, 1, 2, 3, 4, 5, 6, 7, 8}, // octets past the address
	} {
		f.Add(s, []byte{}, uint16(0), false)
		f.Add(s, []byte("cookie12"), uint16(dns.EDNS0COOKIE), true)
	}
	f.Fuzz(func(t *testing.T, ecs, other []byte, otherCode uint16, located bool) {
		q := new(dns.Msg).SetQuestion("www.example.com.", dns.TypeA)
		q.SetEdns0(1232, false)
		opt := q.IsEdns0()
		opt.Option = append(opt.Option, &dns.EDNS0_LOCAL{Code: dns.EDNS0SUBNET, Data: ecs})
		if otherCode != 0 {
			opt.Option = append(opt.Option, &dns.EDNS0_LOCAL{Code: otherCode, Data: other})
		}
		wire, err := q.Pack()
		if err != nil {
			return
		}
		r := new(dns.Msg)
		if r.Unpack(wire) != nil || r.IsEdns0() == nil {
			return // the server answers FORMERR before any plugin
		}
		var first *dns.EDNS0_SUBNET
		for _, o := range r.IsEdns0().Option {
			if e, ok := o.(*dns.EDNS0_SUBNET); ok {
				first = e
				break
			}
		}
		bad := badSubnet(r)
		if first == nil {
			if bad {
				t.Fatal("a query without ECS is malformed")
			}
			return
		}
		if want := malformedECS(ecs); bad != want {
			t.Fatalf("ECS %v: badSubnet %v, want %v", first, bad, want)
		}
		if bad {
			return // FORMERR, nothing echoed
		}
		m := new(dns.Msg).SetReply(r)
		echoSubnet(r, m, located)
		echo := m.IsEdns0()
		if echo == nil || len(m.Extra) != 1 {
			t.Fatalf("reply's additional section %v", m.Extra)
		}
		var got []*dns.EDNS0_SUBNET
		for _, o := range echo.Option {
			if e, ok := o.(*dns.EDNS0_SUBNET); ok {
				got = append(got, e)
			}
		}
		if len(got) != 1 {
			t.Fatalf("%d ECS options echoed", len(got))
		}
		e := got[0]
		scope := uint8(0)
		if located {
			scope = first.SourceNetmask
		}
		if e.Family != first.Family || e.SourceNetmask != first.SourceNetmask || e.SourceScope != scope || !e.Address.Equal(first.Address) {
			t.Fatalf("echo %v of %v (located %v)", e, first, located)
		}
		out, err := m.Pack()
		if err != nil {
			t.Fatalf("the reply does not pack: %v", err)
		}
		back := new(dns.Msg)
		if err := back.Unpack(out); err != nil || back.IsEdns0() == nil {
			t.Fatalf("the reply does not parse back: %v", err)
		}
		if optLen(t, echo) > optLen(t, r.IsEdns0()) {
			t.Fatalf("the reply's OPT (%d octets) is larger than the query's (%d)", optLen(t, echo), optLen(t, r.IsEdns0()))
		}
	})
}

// malformedECS is RFC 7871 §6 on the option's bytes (the first ECS option
// of the query, which parsed), apart from badSubnet: a SCOPE PREFIX-LENGTH
// in a query, or ADDRESS bits set past the SOURCE PREFIX-LENGTH, in the
// octets the parser keeps (4 for IPv4, 16 for IPv6; FAMILY 0, dig's,
// carries none).
func malformedECS(b []byte) bool {
	family, prefix, scope := binary.BigEndian.Uint16(b), int(b[2]), b[3]
	if scope != 0 {
		return true
	}
	size := map[uint16]int{1: net.IPv4len, 2: net.IPv6len}[family]
	addr := make([]byte, size)
	copy(addr, b[4:])
	for i, octet := range addr {
		if keep := min(max(prefix-8*i, 0), 8); octet&^byte(0xff<<(8-keep)) != 0 {
			return true
		}
	}
	return false
}

// optLen returns the size of opt packed.
func optLen(t *testing.T, opt *dns.OPT) int {
	t.Helper()
	buf := make([]byte, dns.MaxMsgSize)
	n, err := dns.PackRR(opt, buf, 0, nil, false)
	if err != nil {
		t.Fatalf("OPT does not pack: %v", err)
	}
	return n
}
