//go:build e2e

package e2e

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/miekg/dns"
)

// The types, classes, header bits and EDNS of the randomized campaign
// (differential_random_test.go).

// diffCommonTypes are the types of everyday questions; diffOddTypes meta,
// obsolete, DNSSEC and unassigned ones.
var (
	diffCommonTypes = []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeCNAME, dns.TypeMX, dns.TypeTXT, dns.TypeSRV,
		dns.TypeNS, dns.TypeSOA, dns.TypePTR, dns.TypeCAA, dns.TypeHTTPS, dns.TypeSVCB, dns.TypeANY}
	diffOddTypes = []uint16{0, dns.TypeRRSIG, dns.TypeNSEC, dns.TypeNSEC3, dns.TypeNSEC3PARAM, dns.TypeDS,
		dns.TypeDNSKEY, dns.TypeCDS, dns.TypeCDNSKEY, dns.TypeOPT, dns.TypeAXFR, dns.TypeIXFR, dns.TypeMAILA,
		dns.TypeMAILB, dns.TypeMD, dns.TypeMF, dns.TypeNULL, 11, dns.TypeHINFO, 38,
		dns.TypeTKEY, dns.TypeTSIG, dns.TypeNAPTR, dns.TypeTLSA, dns.TypeSSHFP, dns.TypeZONEMD, 65280, 65534, 65535}
)

func (g *diffGen) qtype() uint16 {
	switch k := g.r.IntN(100); {
	case k < 65:
		return diffCommonTypes[g.r.IntN(len(diffCommonTypes))]
	case k < 95:
		return diffOddTypes[g.r.IntN(len(diffOddTypes))]
	default:
		return uint16(g.r.IntN(65536))
	}
}

func (g *diffGen) qclass() uint16 {
	switch k := g.r.IntN(100); {
	case k < 88:
		return dns.ClassINET
	case k < 91:
		return dns.ClassCHAOS
	case k < 94:
		return dns.ClassANY
	case k < 97:
		return dns.ClassNONE
	case k < 99:
		return dns.ClassHESIOD
	default:
		return uint16(g.r.IntN(65536))
	}
}

// flags draws the transport, header bits and EDNS of a query, and names them.
func (g *diffGen) flags() diffFlags {
	f := diffFlags{tcp: g.chance(0.2), rd: g.chance(0.3), cd: g.chance(0.15), ad: g.chance(0.15), z: g.chance(0.05)}
	label := []string{"udp"}
	if f.tcp {
		label[0] = "tcp"
	}
	if f.edns = g.chance(0.7); f.edns {
		sizes := []uint16{0, 1, 511, 512, 513, 1220, 1232, 1400, 4096, 65535}
		f.size = uint16(g.r.IntN(65536))
		if g.chance(0.6) {
			f.size = sizes[g.r.IntN(len(sizes))]
		}
		f.do = g.chance(0.3)
		if g.chance(0.07) {
			f.version = uint8(1 + g.r.IntN(2))
		}
		label = append(label, fmt.Sprintf("edns%d size=%d", f.version, f.size))
		if f.do {
			label = append(label, "do")
		}
		for g.chance(0.15) {
			o := g.option()
			f.opts = append(f.opts, o)
			label = append(label, fmt.Sprintf("opt%d=%x", o.Option(), o.(*dns.EDNS0_LOCAL).Data))
		}
	} else {
		label = append(label, "noedns")
	}
	for _, b := range []struct {
		on   bool
		name string
	}{{f.rd, "rd"}, {f.cd, "cd"}, {f.ad, "ad"}, {f.z, "z"}} {
		if b.on {
			label = append(label, b.name)
		}
	}
	f.label = strings.Join(label, " ")
	return f
}

// option draws an EDNS option: an unassigned one, a Client Subnet (well
// formed or not), a cookie, a keepalive, padding or NSID.
func (g *diffGen) option() dns.EDNS0 {
	o := &dns.EDNS0_LOCAL{}
	switch g.r.IntN(7) {
	case 0:
		o.Code = uint16(65001 + g.r.IntN(534))
		o.Data = g.bytes(g.r.IntN(8))
	case 1, 2:
		o.Code, o.Data = dns.EDNS0SUBNET, g.subnet()
	case 3:
		o.Code, o.Data = dns.EDNS0COOKIE, g.bytes(8)
	case 4:
		o.Code = dns.EDNS0TCPKEEPALIVE
	case 5:
		o.Code, o.Data = dns.EDNS0PADDING, make([]byte, g.r.IntN(16))
	default:
		o.Code = dns.EDNS0NSID
	}
	return o
}

func (g *diffGen) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	return b
}

// subnet is the data of an ECS option: mostly well formed (RFC 7871 §6),
// at times with a scope, a prefix too long, extra address bits, octets
// too many or too few, or an unknown family.
func (g *diffGen) subnet() []byte {
	family := uint16(1 + g.r.IntN(2))
	bits := 32
	if family == 2 {
		bits = 128
	}
	source := g.r.IntN(bits + 1)
	scope := 0
	switch g.r.IntN(12) {
	case 0:
		scope = 1 + g.r.IntN(bits)
	case 1:
		source = bits + 1 + g.r.IntN(8)
	case 2:
		family = uint16(3 + g.r.IntN(10))
	}
	addr := g.bytes((source + 7) / 8)
	if r := source % 8; r != 0 && !g.chance(0.1) {
		addr[len(addr)-1] &= byte(0xff << (8 - r)) // no bits beyond the prefix
	}
	switch g.r.IntN(15) {
	case 0:
		addr = append(addr, 0)
	case 1:
		if len(addr) > 0 {
			addr = addr[:len(addr)-1]
		}
	}
	b := binary.BigEndian.AppendUint16(nil, family)
	b = append(b, byte(source), byte(scope))
	return append(b, addr...)
}
