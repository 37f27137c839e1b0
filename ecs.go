package gateway

import (
	"net/netip"

	"github.com/coredns/coredns/plugin/pkg/edns"
	"github.com/miekg/dns"
)

// The ECS option (RFC 7871) of a query: refused when malformed
// (checkRequest), echoed in the reply (answer).

// echoSubnet gives the reply m to r the ECS option of r, if it has one
// (RFC 7871 §7.2.1): FAMILY, SOURCE PREFIX-LENGTH and ADDRESS copied, and
// SCOPE PREFIX-LENGTH the source's when the answer depended on the client's
// location (resolvers then cache it for that subnet only), else 0 (the
// answer is good for every client). The OPT record carries the request's
// other options that CoreDNS echoes, as CoreDNS's own would.
func echoSubnet(r, m *dns.Msg, located bool) {
	o := r.IsEdns0()
	if o == nil || m.IsEdns0() != nil {
		return
	}
	var ecs *dns.EDNS0_SUBNET
	for _, opt := range o.Option {
		if e, ok := opt.(*dns.EDNS0_SUBNET); ok {
			ecs = e
			break
		}
	}
	if ecs == nil {
		return
	}
	reply := *ecs
	reply.SourceScope = 0
	if located {
		reply.SourceScope = ecs.SourceNetmask
	}
	out := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
	out.SetUDPSize(o.UDPSize())
	if o.Do() {
		out.SetDo()
	}
	for _, opt := range o.Option {
		if opt.Option() != dns.EDNS0SUBNET && edns.SupportedOption(opt.Option()) {
			out.Option = append(out.Option, opt)
		}
	}
	out.Option = append(out.Option, &reply)
	m.Extra = append(m.Extra, out)
}

// badSubnet reports whether the ECS option of a query is malformed in a way
// its parsed form shows (RFC 7871 §6): a SCOPE PREFIX-LENGTH other than 0, or
// ADDRESS bits set beyond SOURCE PREFIX-LENGTH. The plugin echoes the option,
// so it refuses these with FORMERR, as BIND does. miekg/dns already answers
// FORMERR for an unknown FAMILY and for a SOURCE PREFIX-LENGTH longer than the
// family's addresses; how many ADDRESS octets came is lost in parsing.
func badSubnet(r *dns.Msg) bool {
	o := r.IsEdns0()
	if o == nil {
		return false
	}
	for _, opt := range o.Option {
		e, ok := opt.(*dns.EDNS0_SUBNET)
		if !ok {
			continue
		}
		if e.SourceScope != 0 {
			return true
		}
		ip := e.Address
		switch e.Family {
		case 1:
			ip = ip.To4()
		case 2:
			ip = ip.To16()
		default:
			return false // FAMILY 0 with a prefix of 0, as dig sends
		}
		a, ok := netip.AddrFromSlice(ip)
		if !ok {
			return true
		}
		p, err := a.Prefix(int(e.SourceNetmask))
		return err != nil || p.Addr() != a
	}
	return false
}
