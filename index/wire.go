package index

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"

	"github.com/miekg/dns"
)

// Records in wire form: what the objects of an index publish, packed, owner
// names included (see objects.go).

// packRecords returns rrs, ordered by owner name (see sortRRs), in wire
// form with their owner names. A record without a wire form is left out,
// as a node leaves it out (see appendNode). Owner names are made the
// presentation form their wire form gives back (see wireName), which is the
// name itself for every name a source makes.
func packRecords(rrs []dns.RR) []byte {
	if len(rrs) == 0 {
		return nil
	}
	bp := packBuffers.Get().(*[]byte)
	defer packBuffers.Put(bp)
	b := (*bp)[:0]
	defer func() { *bp = b[:0] }()
	for _, rr := range rrs {
		h := rr.Header()
		start := len(b)
		var ok bool
		if b, ok = appendName(b, h.Name); !ok {
			continue
		}
		if !plainString(h.Name) {
			if name, ok := wireName(b[start:]); ok {
				h.Name = name
			}
		}
		if b, ok = appendRR(b, rr); !ok {
			b = b[:start]
		}
	}
	return bytes.Clone(b) // of its exact size
}

// packBuffers hold the bytes packRecords packs into before it copies them.
var packBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// appendName appends name in uncompressed wire form.
func appendName(b []byte, name string) ([]byte, bool) {
	// The wire form is at most one byte longer than the presentation form.
	b = slices.Grow(b, len(name)+2)
	n, err := dns.PackDomainName(name, b[:cap(b)], len(b), nil, false)
	if err != nil {
		return b, false
	}
	return b[:n], true
}

// plainString reports whether name needs no escaping in presentation form.
func plainString(name string) bool {
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '*', c == '.':
		default:
			return false
		}
	}
	return true
}

// wireNameLen returns the length of the uncompressed wire name at the start
// of b.
func wireNameLen(b []byte) int {
	i := 0
	for i < len(b) && b[i] != 0 {
		i += int(b[i]) + 1
	}
	return i + 1
}

// wireName returns the presentation form of the wire name at the start of b.
func wireName(b []byte) (string, bool) {
	n := wireNameLen(b)
	if n > len(b) {
		return "", false
	}
	if name, ok := plainName(b[:n]); ok {
		return name, true
	}
	name, _, err := dns.UnpackDomainName(b[:n], 0)
	return name, err == nil
}

// packedRecordLen returns the length of the packed record (owner name
// included) at the start of b, and the length of its owner name.
func packedRecordLen(b []byte) (rec, name int) {
	name = wireNameLen(b)
	return name + rrHeader + int(binary.BigEndian.Uint16(b[name+8:])), name
}

// forWireNames calls f once for every owner name of wire, in order.
func forWireNames(wire []byte, f func(name string)) {
	var last []byte
	for b := wire; len(b) > 0; {
		rec, n := packedRecordLen(b)
		if !bytes.Equal(b[:n], last) {
			last = b[:n]
			if name, ok := wireName(b); ok {
				f(name)
			}
		}
		b = b[rec:]
	}
}

// recordsAt returns the records of wire owned by name, unpacked.
func recordsAt(wire []byte, name string) []dns.RR {
	var buf [256]byte
	want, ok := appendName(buf[:0], name)
	if !ok {
		return nil
	}
	var out []dns.RR
	for b := wire; len(b) > 0; {
		rec, n := packedRecordLen(b)
		if bytes.Equal(b[:n], want) {
			if rr, _ := unpackRR(name, b[n:rec]); rr != nil {
				out = append(out, rr)
			}
		}
		b = b[rec:]
	}
	return slices.Clip(out)
}

// unpackRecords returns every record of wire, unpacked.
func unpackRecords(wire []byte) []dns.RR {
	var out []dns.RR
	forWireNames(wire, func(name string) { out = append(out, recordsAt(wire, name)...) })
	return out
}
