package index

import (
	"net/netip"

	"github.com/miekg/dns"
)

// Address records are allocated with their address inside them: one object
// instead of two, in the size class of the record alone (64 bytes for A, 80
// for AAAA), so a reply reads one piece of memory fewer.

type aRecord struct {
	dns.A
	ip [4]byte
}

type aaaaRecord struct {
	dns.AAAA
	ip [16]byte
}

// AddressRecord returns the A or AAAA record of ip with header h, whose
// Rrtype it sets. ip must not have a zone.
func AddressRecord(h dns.RR_Header, ip netip.Addr) dns.RR {
	if ip.Is4() {
		h.Rrtype = dns.TypeA
		return newA(h, ip.As4())
	}
	h.Rrtype = dns.TypeAAAA
	return newAAAA(h, ip.As16())
}

func newA(h dns.RR_Header, ip [4]byte) *dns.A { return new(aRecord).init(h, ip) }

func newAAAA(h dns.RR_Header, ip [16]byte) *dns.AAAA { return new(aaaaRecord).init(h, ip) }

// init makes r the record of ip with header h, its address inside it.
func (r *aRecord) init(h dns.RR_Header, ip [4]byte) *dns.A {
	r.ip = ip
	r.Hdr, r.A.A = h, r.ip[:]
	return &r.A
}

func (r *aaaaRecord) init(h dns.RR_Header, ip [16]byte) *dns.AAAA {
	r.ip = ip
	r.Hdr, r.AAAA.AAAA = h, r.ip[:]
	return &r.AAAA
}
