package acmeupdate

import (
	"encoding/binary"
	"errors"
)

// A TSIG MAC covers the bytes of the message as they came (RFC 8945 §4.3),
// so the Updater reads the raw message (see Listen) and finds its parts in
// those bytes: one pass, no compression pointer followed, no allocation.

// headerLen is the length of a DNS header.
const headerLen = 12

// header is the part of a DNS header the Updater reads before anything else.
type header struct {
	id             uint16
	response       bool
	opcode         int
	qd, an, ns, ar int
}

func readHeader(b []byte) (header, bool) {
	if len(b) < headerLen {
		return header{}, false
	}
	return header{
		id:       binary.BigEndian.Uint16(b),
		response: b[2]&0x80 != 0,
		opcode:   int(b[2]>>3) & 0xF,
		qd:       int(binary.BigEndian.Uint16(b[4:])),
		an:       int(binary.BigEndian.Uint16(b[6:])),
		ns:       int(binary.BigEndian.Uint16(b[8:])),
		ar:       int(binary.BigEndian.Uint16(b[10:])),
	}, true
}

// layout is where the TSIG RR of a message starts: the last record of the
// additional section when it is of type TSIG, else -1.
type layout struct {
	tsig int
	// misplaced: a TSIG RR that is not the last record (RFC 8945 §5.1: FORMERR).
	misplaced bool
}

var errMalformed = errors.New("malformed message")

// scan walks the sections of b, whose header is h, and checks that the
// records fill the message exactly.
func scan(b []byte, h header) (layout, error) {
	l := layout{tsig: -1}
	off := headerLen
	var err error
	for range h.qd {
		if off, err = skipName(b, off); err != nil || off+4 > len(b) {
			return l, errMalformed
		}
		off += 4
	}
	records := h.an + h.ns + h.ar
	for i := range records {
		start := off
		if off, err = skipName(b, off); err != nil || off+10 > len(b) {
			return l, errMalformed
		}
		typ := binary.BigEndian.Uint16(b[off:])
		rdlen := int(binary.BigEndian.Uint16(b[off+8:]))
		off += 10 + rdlen
		if off > len(b) {
			return l, errMalformed
		}
		if typ == typeTSIG {
			if i != records-1 || h.ar == 0 {
				l.misplaced = true
			} else {
				l.tsig = start
			}
		}
	}
	if off != len(b) {
		return l, errMalformed
	}
	return l, nil
}

const typeTSIG = 250

// skipName returns the offset after the name at off: its labels up to the
// root label or to a compression pointer, which ends a name.
func skipName(b []byte, off int) (int, error) {
	for n := 0; off < len(b); n++ {
		c := int(b[off])
		switch c & 0xC0 {
		case 0x00:
			if c == 0 {
				return off + 1, nil
			}
			off += 1 + c
			if n > 127 {
				return 0, errMalformed
			}
		case 0xC0:
			if off+2 > len(b) {
				return 0, errMalformed
			}
			return off + 2, nil
		default:
			return 0, errMalformed
		}
	}
	return 0, errMalformed
}

// plainReply is a reply of only a header (no section) with rcode, for a
// message refused before its TSIG is checked.
func plainReply(h header, rcode int) []byte {
	b := make([]byte, headerLen)
	binary.BigEndian.PutUint16(b, h.id)
	b[2] = 0x80 | byte(h.opcode<<3)
	b[3] = byte(rcode & 0xF)
	return b
}
