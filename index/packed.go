package index

import (
	"encoding/binary"
	"slices"

	"github.com/miekg/dns"
)

// A snapshot keeps its names packed: each name's node is a run of bytes in
// an arena of chunks that hold no pointers, and the table maps names to
// positions in it. The collector never scans those bytes, whatever the
// number of names; a node of pointers (its name, its RRsets, its records)
// cost it about as much as the rest of the index together. The query path
// reads a node where it lies and makes dns.RR values only for the records it
// answers with.
//
// A node is laid out as follows (integers of the layout little-endian, the
// records as in a message):
//
//	size     uint32  bytes of the whole node
//	nameLen  uint16
//	name     [nameLen]byte  lower case, presentation format
//	flags    uint8   flagWildcard, flagSteered
//	steering, with flagSteered only: length uint32, then the table of
//	         targets (see appendSteer in steer.go)
//	sets     uint16  number of RRsets, ordered by type
//	then per RRset:
//	  qtype  uint16
//	  count  uint32  records
//	  length uint32  bytes of the records
//	  records: type, class, TTL, RDLENGTH and RDATA of each, as in a
//	  message (RFC 1035 §4.1.3) without the owner name; names in RDATA are
//	  never compressed.

const (
	flagWildcard = 1 << iota // "*.<name>" exists
	flagSteered              // the node has a table of targets (steer.go)
)

const (
	nodeHeader = 4 + 2         // size, nameLen
	setHeader  = 2 + 4 + 4     // qtype, count, length
	rrHeader   = 2 + 2 + 4 + 2 // type, class, TTL, RDLENGTH
	chunkSize  = 256 << 10     // bytes of an arena chunk
	minCompact = 4 * chunkSize // garbage below which an arena is never compacted
)

// appendNode appends the encoding of n to b. Records that cannot be packed
// (no valid wire form) are left out; the sources never make them.
func appendNode(b []byte, n *node) []byte {
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, 0) // size, set below
	b = binary.LittleEndian.AppendUint16(b, uint16(len(n.name)))
	b = append(b, n.name...)
	var flags byte
	if n.wildcard {
		flags |= flagWildcard
	}
	if len(n.steer) > 0 {
		flags |= flagSteered
	}
	b = append(b, flags)
	if len(n.steer) > 0 {
		at := len(b)
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = appendSteer(b, n.steer)
		binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(n.sets)))
	for _, set := range n.sets {
		b = binary.LittleEndian.AppendUint16(b, set.qtype)
		head := len(b)
		b = binary.LittleEndian.AppendUint32(b, 0) // count
		b = binary.LittleEndian.AppendUint32(b, 0) // length
		count := 0
		for _, rr := range set.rrs {
			var ok bool
			if b, ok = appendRR(b, rr); ok {
				count++
			}
		}
		binary.LittleEndian.PutUint32(b[head:], uint32(count))
		binary.LittleEndian.PutUint32(b[head+4:], uint32(len(b)-head-8))
	}
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start))
	return b
}

// appendRR appends rr in wire format without its owner name.
func appendRR(b []byte, rr dns.RR) ([]byte, bool) {
	h := rr.Header()
	switch x := rr.(type) {
	case *dns.A:
		if ip := x.A.To4(); ip != nil {
			return append(appendRRHeader(b, h, 4), ip...), true
		}
	case *dns.AAAA:
		if len(x.AAAA) == 16 {
			return append(appendRRHeader(b, h, 16), x.AAAA...), true
		}
	}
	// Packed in place after b, then moved over its owner name: no buffer
	// of its own per record (the initial sync packs every record).
	start := len(b)
	buf := slices.Grow(b, dns.Len(rr)+256)
	buf = buf[:cap(buf)]
	end, err := dns.PackRR(rr, buf, start, nil, false)
	if err != nil {
		return b, false
	}
	i := start
	for i < end && buf[i] != 0 { // the owner name, never compressed here
		i += int(buf[i]) + 1
	}
	n := copy(buf[start:end], buf[i+1:end])
	return buf[:start+n], true
}

func appendRRHeader(b []byte, h *dns.RR_Header, rdlength uint16) []byte {
	b = binary.BigEndian.AppendUint16(b, h.Rrtype)
	b = binary.BigEndian.AppendUint16(b, h.Class)
	b = binary.BigEndian.AppendUint32(b, h.Ttl)
	return binary.BigEndian.AppendUint16(b, rdlength)
}

// view is a node as it lies in an arena.
type view []byte

func (v view) size() int { return int(binary.LittleEndian.Uint32(v)) }

func (v view) nameLen() int { return int(binary.LittleEndian.Uint16(v[4:])) }

// name returns the node's name; the bytes are the arena's.
func (v view) name() []byte { return v[nodeHeader : nodeHeader+v.nameLen()] }

// wildcard reports whether "*.<name>" exists.
func (v view) wildcard() bool { return v[nodeHeader+v.nameLen()]&flagWildcard != 0 }

// setWildcard sets or clears the node's flagWildcard.
func (v view) setWildcard(wildcard bool) {
	at := nodeHeader + v.nameLen()
	v[at] &^= flagWildcard
	if wildcard {
		v[at] |= flagWildcard
	}
}

// sets returns the number of RRsets and the bytes where they start.
func (v view) sets() (int, []byte) {
	at := nodeHeader + v.nameLen() + 1
	if v[at-1]&flagSteered != 0 {
		at += 4 + int(binary.LittleEndian.Uint32(v[at:]))
	}
	return int(binary.LittleEndian.Uint16(v[at:])), v[at+2 : v.size()]
}

// steerTable returns the node's packed table of targets, if it has one.
func (v view) steerTable() ([]byte, bool) {
	at := nodeHeader + v.nameLen() + 1
	if v[at-1]&flagSteered == 0 {
		return nil, false
	}
	return v[at+4 : at+4+int(binary.LittleEndian.Uint32(v[at:]))], true
}

// empty reports whether the node is an empty non-terminal.
func (v view) empty() bool {
	n, _ := v.sets()
	return n == 0
}

// rrset is one packed RRset of a view.
type packedSet struct {
	qtype uint16
	count int
	rrs   []byte
}

// set returns the RRset of type qtype; count is 0 when there is none. With
// qtype ANY it returns the first RRset.
func (v view) set(qtype uint16) packedSet {
	n, b := v.sets()
	for range n {
		var s packedSet
		s, b = nextSet(b)
		if s.qtype == qtype || qtype == dns.TypeANY {
			return s
		}
	}
	return packedSet{}
}

// nextSet returns the packed RRset at the start of b and the bytes after it.
func nextSet(b []byte) (packedSet, []byte) {
	length := int(binary.LittleEndian.Uint32(b[6:]))
	return packedSet{
		qtype: binary.LittleEndian.Uint16(b),
		count: int(binary.LittleEndian.Uint32(b[2:])),
		rrs:   b[setHeader : setHeader+length],
	}, b[setHeader+length:]
}

// has reports whether the node has records of type qtype.
func (v view) has(qtype uint16) bool { return v.set(qtype).count > 0 }

// rrs returns the records of type qtype owned by owner, or nil. The slice
// and the records are new: callers may change them.
func (v view) rrs(qtype uint16, owner string) []dns.RR { return v.set(qtype).records(owner) }

// records unpacks the RRset with owner as the records' name. The returned
// slice has len == cap.
func (s packedSet) records(owner string) []dns.RR {
	if s.count == 0 {
		return nil
	}
	if s.count == 1 {
		if rr := oneAddress(owner, s.rrs); rr != nil {
			return rr
		}
	}
	out := make([]dns.RR, 0, s.count)
	for b := s.rrs; len(b) >= rrHeader; {
		rr, n := unpackRR(owner, b)
		if rr != nil {
			out = append(out, rr)
		}
		b = b[n:]
	}
	return out[:len(out):len(out)]
}

// first unpacks the first record of the RRset with owner as its name, or
// returns nil.
func (s packedSet) first(owner string) dns.RR {
	if s.count == 0 {
		return nil
	}
	rr, _ := unpackRR(owner, s.rrs)
	return rr
}

// oneRecord is an RRset of one address record in one allocation: the
// slice, the record and its address.
type oneRecord[R aRecord | aaaaRecord] struct {
	set [1]dns.RR
	rr  R
}

// oneAddress returns the RRset of the single A or AAAA record b, or nil.
func oneAddress(owner string, b []byte) []dns.RR {
	h, rdata := rrHeaderOf(owner, b)
	switch {
	case h.Rrtype == dns.TypeA && len(rdata) == 4:
		o := &oneRecord[aRecord]{}
		o.set[0] = o.rr.init(h, [4]byte(rdata))
		return o.set[:]
	case h.Rrtype == dns.TypeAAAA && len(rdata) == 16:
		o := &oneRecord[aaaaRecord]{}
		o.set[0] = o.rr.init(h, [16]byte(rdata))
		return o.set[:]
	}
	return nil
}

// rrHeaderOf returns the header of the packed record b and its RDATA.
func rrHeaderOf(owner string, b []byte) (dns.RR_Header, []byte) {
	h := dns.RR_Header{
		Name:     owner,
		Rrtype:   binary.BigEndian.Uint16(b),
		Class:    binary.BigEndian.Uint16(b[2:]),
		Ttl:      binary.BigEndian.Uint32(b[4:]),
		Rdlength: binary.BigEndian.Uint16(b[8:]),
	}
	return h, b[rrHeader : rrHeader+int(h.Rdlength)]
}

// unpackRR returns the packed record at the start of b, and its length. The
// record is nil if it does not unpack, which a record packed by appendRR
// always does.
func unpackRR(owner string, b []byte) (dns.RR, int) {
	h, rdata := rrHeaderOf(owner, b)
	n := rrHeader + len(rdata)
	switch {
	case h.Rrtype == dns.TypeA && len(rdata) == 4:
		return newA(h, [4]byte(rdata)), n
	case h.Rrtype == dns.TypeAAAA && len(rdata) == 16:
		return newAAAA(h, [16]byte(rdata)), n
	case h.Rrtype == dns.TypeCNAME:
		if target, ok := plainName(rdata); ok {
			return &dns.CNAME{Hdr: h, Target: target}, n
		}
	}
	rr, _, err := dns.UnpackRRWithHeader(h, b[:n], rrHeader)
	if err != nil {
		return nil, n
	}
	return rr, n
}

// node returns the node of v with its records unpacked, for the writer.
func (v view) node() *node {
	n := &node{name: string(v.name()), wildcard: v.wildcard()}
	if table, ok := v.steerTable(); ok {
		n.steer = unpackSteer(table)
	}
	count, b := v.sets()
	if count > 0 {
		n.sets = make([]rrset, 0, count)
	}
	for range count {
		var s packedSet
		s, b = nextSet(b)
		n.sets = append(n.sets, rrset{qtype: s.qtype, rrs: s.records(n.name)})
	}
	return n
}

// plainName returns the presentation form of the uncompressed wire name b,
// which must be all of b, when its labels need no escaping (letters,
// digits, '-', '_' and '*'), as nearly all names do; miekg/dns's unpacking
// handles the rest, at several times the cost.
func plainName(b []byte) (string, bool) {
	if len(b) == 1 && b[0] == 0 {
		return ".", true
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		l := int(b[i])
		if l == 0 {
			return string(out), i == len(b)-1
		}
		if l > 63 || i+1+l > len(b) {
			return "", false
		}
		for _, c := range b[i+1 : i+1+l] {
			switch {
			case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '*':
			default:
				return "", false
			}
		}
		out = append(append(out, b[i+1:i+1+l]...), '.')
		i += 1 + l
	}
	return "", false
}
