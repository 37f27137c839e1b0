package index

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"

	"github.com/miekg/dns"
)

// The writer keeps what each object publishes packed too: its records in
// wire form, owner names included, in one byte slice per object, and the
// objects in pages by their number in the Shared. A million records were a
// million pointer-holding objects for the collector to mark on every cycle;
// they are now a slice of bytes per object, which views that agree share.

// object is what one object publishes and who claims it, kept at the
// object's number in Index.objs; its key and usual claim are in the
// Shared.
type object struct {
	// wire holds the records, ordered by owner name, type and data (see
	// sortRRs), each in wire form with its owner name (uncompressed). It is
	// never changed once stored, and is nil where the index holds no object.
	wire []byte
	// claim is the object's claim when it is more than the namespace and
	// creation time shared by the views (Shared.packClaim), else nil.
	claim *Claim
}

// objectID is the number of an object in a Shared, and its position in the
// Index.objs of the indexes that hold it.
type objectID uint32

// object returns the object of key, if the index holds it.
func (ix *Index) object(key string) (objectID, *object, bool) {
	id, ok := ix.sh.object(key)
	if !ok {
		return 0, nil, false
	}
	if o := ix.objs.get(uint32(id)); o.wire == nil {
		return 0, nil, false
	}
	return id, ix.objs.at(uint32(id)), true
}

// storeObject stores the records wire, claimed by claim, for the object
// key, which the index holds at id when had, and returns its number.
func (ix *Index) storeObject(key string, id objectID, had bool, claim Claim, wire []byte) objectID {
	var old []byte
	if had {
		old = ix.objs.at(uint32(id)).wire
	} else {
		id = ix.sh.holdObject(key, claim)
		ix.held++
	}
	*ix.objs.ensure(uint32(id)) = object{wire: ix.sh.keepWire(id, old, wire), claim: ix.sh.packClaim(id, claim)}
	return id
}

// deleteObject forgets the object at id.
func (ix *Index) deleteObject(id objectID) {
	o := ix.objs.at(uint32(id))
	ix.sh.dropObject(id, o.wire)
	*o = object{}
	ix.held--
}

// claimOf returns the claim of the object at id.
func (ix *Index) claimOf(id objectID) Claim { return ix.sh.claim(id, ix.objs.at(uint32(id)).claim) }

// eachObject calls f for every object the index holds, with its number.
func (ix *Index) eachObject(f func(id objectID, o *object)) {
	ix.objs.each(func(i uint32, o *object) {
		if o.wire != nil {
			f(objectID(i), o)
		}
	})
}

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
