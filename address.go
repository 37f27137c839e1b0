package gateway

import (
	"net/netip"

	"github.com/miekg/dns"
)

// The address records of the index are allocated with their address inside
// them: one object instead of two, in the same size class as the record
// alone (64 bytes for A, 80 for AAAA), so a query reads one piece of memory
// fewer and the collector has one object fewer per record to mark.

type aRecord struct {
	dns.A
	ip [4]byte
}

type aaaaRecord struct {
	dns.AAAA
	ip [16]byte
}

// addressRecord returns the A or AAAA record of ip with header h, whose
// Rrtype it sets. ip must not have a zone.
func addressRecord(h dns.RR_Header, ip netip.Addr) dns.RR {
	if ip.Is4() {
		r := &aRecord{ip: ip.As4()}
		h.Rrtype = dns.TypeA
		r.Hdr, r.A.A = h, r.ip[:]
		return &r.A
	}
	r := &aaaaRecord{ip: ip.As16()}
	h.Rrtype = dns.TypeAAAA
	r.Hdr, r.AAAA.AAAA = h, r.ip[:]
	return &r.AAAA
}
