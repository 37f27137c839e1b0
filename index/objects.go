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
// objects in one slice. A million records were a million pointer-holding
// objects for the collector to mark on every cycle; they are now a few
// slices of bytes per object.

// object is what one object publishes and who claims it.
type object struct {
	key   string
	claim packedClaim
	// wire holds the records, ordered by owner name, type and data (see
	// sortRRs), each in wire form with its owner name (uncompressed). It is
	// never changed once stored.
	wire []byte
}

// packedClaim is a Claim as an object keeps it: the namespace and the
// creation time that every claim has, and the rest only when some of it
// is set (health, priority, steering), which few objects have. It halves
// what the index keeps per object, once per view.
type packedClaim struct {
	namespace string
	created   int64
	full      *Claim // the whole claim, when it has more than the two
}

func packClaim(c Claim) packedClaim {
	p := packedClaim{namespace: c.Namespace, created: c.Created}
	if c != (Claim{Namespace: c.Namespace, Created: c.Created}) {
		p.full = &c
	}
	return p
}

// claim returns the Claim p was made from.
func (p packedClaim) claim() Claim {
	if p.full != nil {
		return *p.full
	}
	return Claim{Namespace: p.namespace, Created: p.created}
}

// objectID is the position of an object in Index.objs.
type objectID uint32

// objectPages hold the objects in pages of a fixed size: appending one
// never copies the others, so the initial sync leaves no garbage of grown
// arrays (a slice grown one object at a time allocates about five times
// its final size) and no spare quarter at its end.
type objectPages [][]object

// pageBits is the log2 of the objects of a page (1,024 objects, 72 KiB).
const pageBits = 10

// at returns the object at id.
func (p objectPages) at(id objectID) *object { return &p[id>>pageBits][id&(1<<pageBits-1)] }

// len returns the number of positions.
func (p objectPages) len() int {
	if len(p) == 0 {
		return 0
	}
	return (len(p)-1)<<pageBits + len(p[len(p)-1])
}

// add appends o and returns its position.
func (p *objectPages) add(o object) objectID {
	id := objectID(p.len())
	if len(*p) == 0 || len((*p)[len(*p)-1]) == 1<<pageBits {
		*p = append(*p, make([]object, 0, 1<<pageBits))
	}
	last := &(*p)[len(*p)-1]
	*last = append(*last, o)
	return id
}

// each calls f for every position's object, held or free.
func (p objectPages) each(f func(o *object)) {
	for _, page := range p {
		for i := range page {
			f(&page[i])
		}
	}
}

// object returns the object of key, if the index holds it.
func (ix *Index) object(key string) (objectID, *object, bool) {
	id, ok := ix.objects[key]
	if !ok {
		return 0, nil, false
	}
	return id, ix.objs.at(id), true
}

// storeObject stores o under its key and returns its position.
func (ix *Index) storeObject(o object) objectID {
	if id, ok := ix.objects[o.key]; ok {
		*ix.objs.at(id) = o
		return id
	}
	var id objectID
	if n := len(ix.free); n > 0 {
		id, ix.free = ix.free[n-1], ix.free[:n-1]
		*ix.objs.at(id) = o
	} else {
		id = ix.objs.add(o)
	}
	ix.objects[o.key] = id
	return id
}

// deleteObject forgets the object of key.
func (ix *Index) deleteObject(key string) {
	if id, ok := ix.objects[key]; ok {
		delete(ix.objects, key)
		*ix.objs.at(id) = object{}
		ix.free = append(ix.free, id)
	}
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
