//go:build e2e

package e2e

import (
	"encoding/binary"
	"slices"

	"github.com/miekg/dns"
)

// The EDNS Client Subnet option (RFC 7871) as the allowances of
// differential_request_rules_test.go see it.

// firstECS returns the data of the query's first ECS option.
func firstECS(q diffQuery) ([]byte, bool) {
	for _, o := range q.flags.opts {
		if o.Option() == dns.EDNS0SUBNET {
			return o.(*dns.EDNS0_LOCAL).Data, true
		}
	}
	return nil, false
}

// dropEcho removes the ECS option of a reply when it echoes the query's
// (data; nil: its FAMILY and SOURCE PREFIX-LENGTH only) with SCOPE 0, and
// reports whether it did.
func dropEcho(m *dns.Msg, data []byte) bool {
	o := m.IsEdns0()
	if o == nil {
		return false
	}
	for i, e := range o.Option {
		s, ok := e.(*dns.EDNS0_SUBNET)
		if !ok {
			continue
		}
		b := ecsData(s)
		if b[3] != 0 {
			return false
		}
		if data != nil && (len(b) != len(data) || !slices.Equal(b[:3], data[:3]) || !slices.Equal(b[4:], data[4:])) {
			return false
		}
		o.Option = slices.Delete(o.Option, i, i+1)
		return true
	}
	return false
}

// ecsData is the option data of a decoded ECS option, as it came on the
// wire: the address in as many octets as the prefix needs.
func ecsData(s *dns.EDNS0_SUBNET) []byte {
	b := binary.BigEndian.AppendUint16(nil, s.Family)
	b = append(b, s.SourceNetmask, s.SourceScope)
	addr := s.Address.To16()
	if s.Family == 1 {
		addr = s.Address.To4()
	}
	return append(b, addr[:min(len(addr), (int(s.SourceNetmask)+7)/8)]...)
}

// The shapes of an ECS option in a query (RFC 7871 §6).
const (
	ecsGood        = iota
	ecsBad         // a SCOPE, or ADDRESS bits beyond the prefix: FORMERR
	ecsUndecodable // miekg/dns cannot decode it: FORMERR from CoreDNS
	ecsOctets      // only the count of ADDRESS octets is wrong
)

// ecsOf classifies the data of an ECS option as miekg/dns decodes it and
// the plugin checks it.
func ecsOf(b []byte) int {
	if len(b) < 4 {
		return ecsUndecodable
	}
	family, source, scope, addr := binary.BigEndian.Uint16(b), int(b[2]), int(b[3]), b[4:]
	bits := map[uint16]int{1: 32, 2: 128}[family]
	switch {
	case family == 0 && source != 0, family > 2, family != 0 && (source > bits || scope > bits):
		return ecsUndecodable
	case scope != 0:
		return ecsBad
	}
	// miekg/dns keeps the first octets of the family's length.
	kept := addr[:min(len(addr), bits/8)]
	for i, octet := range kept {
		if keep := source - 8*i; keep < 8 && octet&byte(0xff>>max(keep, 0)) != 0 {
			return ecsBad
		}
	}
	if len(addr) != (source+7)/8 {
		return ecsOctets
	}
	return ecsGood
}
