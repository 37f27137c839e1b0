package index

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"

	"github.com/miekg/dns"
)

// The writer keeps what each object publishes packed too: its records in
// wire form, owner names included, in one byte slice per object, which
// views that agree share (Shared.keepWire). A million records were a
// million pointer-holding objects for the collector to mark on every cycle;
// they are now a slice of bytes per object.
//
// An index keeps, at each object's number, 4 bytes: whether it holds the
// object, and whether its records and claim are the ones in the Shared
// (heldShared), as for nearly every object of a view that agrees with
// the first, or where its own are (own).

// object is what one object publishes and who claims it in an index whose
// records or claim are not the Shared's.
type object struct {
	// wire holds the records, ordered by owner name, type and data (see
	// sortRRs), each in wire form with its owner name (uncompressed); nil
	// when they are the Shared's. It is never changed once stored.
	wire []byte
	// claim is the object's claim when it is more than the namespace and
	// creation time shared by the views (Shared.packClaim), else nil.
	claim *Claim
}

// objectID is the number of an object in a Shared, and its position in the
// Index.objs of the indexes that hold it.
type objectID uint32

// What Index.objs holds at an object's number: notHeld, heldShared, or
// ownBase plus the object's position in Index.own.
const (
	notHeld    = 0
	heldShared = 1
	ownBase    = 2
)

// object returns the number and records of the object key, if the index
// holds it.
func (ix *Index) object(key string) (objectID, []byte, bool) {
	id, ok := ix.sh.object(key)
	if !ok || ix.objs.get(uint32(id)) == notHeld {
		return 0, nil, false
	}
	return id, ix.recordsOf(id), true
}

// recordsOf returns the records of the object at id, which the index holds.
func (ix *Index) recordsOf(id objectID) []byte {
	if n := ix.objs.get(uint32(id)); n >= ownBase {
		if w := ix.own.at(n - ownBase).wire; w != nil {
			return w
		}
	}
	return ix.sh.wire(id)
}

// claimOf returns the claim of the object at id, which the index holds.
func (ix *Index) claimOf(id objectID) Claim {
	var own *Claim
	if n := ix.objs.get(uint32(id)); n >= ownBase {
		own = ix.own.at(n - ownBase).claim
	}
	return ix.sh.claim(id, own)
}

// storeObject stores the records wire, claimed by claim, for the object
// key, which the index holds at id when had, and returns its number.
func (ix *Index) storeObject(key string, id objectID, had bool, claim Claim, wire []byte) objectID {
	var old []byte
	if had {
		old = ix.recordsOf(id)
	} else {
		id = ix.sh.holdObject(key, claim)
		ix.held++
	}
	kept, shared := ix.sh.keepWire(id, old, wire)
	c := ix.sh.packClaim(id, claim)
	n := ix.objs.get(uint32(id))
	if shared && c == nil {
		if n >= ownBase {
			ix.freeOwn(n)
		}
		*ix.objs.ensure(uint32(id)) = heldShared
		return id
	}
	if n < ownBase {
		n = ix.newOwn()
	}
	o := object{claim: c}
	if !shared {
		o.wire = kept
	}
	*ix.own.at(n - ownBase) = o
	*ix.objs.ensure(uint32(id)) = n
	return id
}

// deleteObject forgets the object at id.
func (ix *Index) deleteObject(id objectID) {
	ix.sh.dropObject(id, ix.recordsOf(id))
	if n := ix.objs.get(uint32(id)); n >= ownBase {
		ix.freeOwn(n)
	}
	*ix.objs.at(uint32(id)) = notHeld
	ix.held--
}

// newOwn returns the Index.objs value of a new place in Index.own.
func (ix *Index) newOwn() uint32 {
	if n := len(ix.ownFree); n > 0 {
		i := ix.ownFree[n-1]
		ix.ownFree = ix.ownFree[:n-1]
		return i
	}
	ix.ensureOwn()
	return ownBase + ix.ownLen - 1
}

// ensureOwn makes one more place in Index.own.
func (ix *Index) ensureOwn() {
	ix.own.ensure(ix.ownLen)
	ix.ownLen++
}

// freeOwn gives back the place in Index.own of the Index.objs value n.
func (ix *Index) freeOwn(n uint32) {
	*ix.own.at(n - ownBase) = object{}
	ix.ownFree = append(ix.ownFree, n)
}

// eachObject calls f for every object the index holds, with its number and
// records.
func (ix *Index) eachObject(f func(id objectID, wire []byte)) {
	ix.objs.each(func(i uint32, n *uint32) {
		if *n != notHeld {
			f(objectID(i), ix.recordsOf(objectID(i)))
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
