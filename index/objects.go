package index

// objects is the writer's table of the objects an index holds: what each
// publishes and who claims it, by the object's number in the Shared.
//
// An object's records are kept packed: in wire form, owner names included,
// in one byte slice (wire.go), which views that agree share
// (Shared.keepWire). A million records were a million pointer-holding
// objects for the collector to mark on every cycle; they are now a slice of
// bytes per object. At each number the index keeps 4 bytes: whether it
// holds the object, and whether its records and claim are the Shared's (one
// of its two variants), as for nearly every object, or where its own are
// (own).
type objects struct {
	sh      *Shared
	objs    pages[uint32] // by object number: notHeld, heldFirst, heldSecond, or ownBase plus a place in own
	own     pages[object] // the objects whose records or claim are not the Shared's
	ownLen  uint32        // places made in own
	ownFree []uint32      // places of own no object uses, as objs values
	held    int           // objects held
}

// object is what one object publishes and who claims it in an index whose
// records or claim are not the Shared's.
type object struct {
	// wire holds the records, ordered by owner name, type and data (see
	// sortRRs), each in wire form with its owner name (uncompressed); it may
	// be a variant of the Shared. It is never changed once stored.
	wire []byte
	// claim is the object's claim when it is more than the namespace and
	// creation time shared by the views (Shared.packClaim), else nil.
	claim *Claim
}

// objectID is the number of an object in a Shared, and its position in the
// objects.objs of the indexes that hold it.
type objectID uint32

// What objects.objs holds at an object's number: notHeld, a variant of the
// Shared's records with its claim (heldFirst, heldSecond), or ownBase plus
// the object's position in objects.own.
const (
	notHeld    = 0
	heldFirst  = firstWire
	heldSecond = secondWire
	ownBase    = 3
)

// find returns the number and records of the object key, if the index
// holds it.
func (o *objects) find(key string) (objectID, []byte, bool) {
	id, ok := o.sh.object(key)
	if !ok || o.objs.get(uint32(id)) == notHeld {
		return 0, nil, false
	}
	return id, o.records(id), true
}

// records returns the records of the object at id, which the index holds.
func (o *objects) records(id objectID) []byte {
	n := o.objs.get(uint32(id))
	if n >= ownBase {
		return o.own.at(n - ownBase).wire
	}
	return o.sh.wire(id, int(n))
}

// claim returns the claim of the object at id, which the index holds.
func (o *objects) claim(id objectID) Claim {
	var own *Claim
	if n := o.objs.get(uint32(id)); n >= ownBase {
		own = o.own.at(n - ownBase).claim
	}
	return o.sh.claim(id, own)
}

// key returns the key of the object at id, which the index holds.
func (o *objects) key(id objectID) string { return o.sh.key(id) }

// store stores the records wire, claimed by claim, for the object key,
// which the index holds at id when had, and returns its number.
func (o *objects) store(key string, id objectID, had bool, claim Claim, wire []byte) objectID {
	var old []byte
	if had {
		old = o.records(id)
	} else {
		id = o.sh.holdObject(key, claim)
		o.held++
	}
	kept, variant := o.sh.keepWire(id, old, wire)
	c := o.sh.packClaim(id, claim)
	n := o.objs.get(uint32(id))
	if variant != ownWire && c == nil {
		if n >= ownBase {
			o.freeOwn(n)
		}
		*o.objs.ensure(uint32(id)) = uint32(variant)
		return id
	}
	if n < ownBase {
		n = o.newOwn()
	}
	*o.own.at(n - ownBase) = object{wire: kept, claim: c}
	*o.objs.ensure(uint32(id)) = n
	return id
}

// remove forgets the object at id.
func (o *objects) remove(id objectID) {
	o.sh.dropObject(id, o.records(id))
	if n := o.objs.get(uint32(id)); n >= ownBase {
		o.freeOwn(n)
	}
	*o.objs.at(uint32(id)) = notHeld
	o.held--
}

// newOwn returns the objs value of a new place in own.
func (o *objects) newOwn() uint32 {
	if n := len(o.ownFree); n > 0 {
		i := o.ownFree[n-1]
		o.ownFree = o.ownFree[:n-1]
		return i
	}
	o.own.ensure(o.ownLen)
	o.ownLen++
	return ownBase + o.ownLen - 1
}

// freeOwn gives back the place in own of the objs value n.
func (o *objects) freeOwn(n uint32) {
	*o.own.at(n - ownBase) = object{}
	o.ownFree = append(o.ownFree, n)
}

// each calls f for every object the index holds, with its number and
// records.
func (o *objects) each(f func(id objectID, wire []byte)) {
	o.objs.each(func(i uint32, n *uint32) {
		if *n != notHeld {
			f(objectID(i), o.records(objectID(i)))
		}
	})
}

// release gives back every object to the Shared and forgets them.
func (o *objects) release() {
	o.each(o.sh.dropObject)
	*o = objects{sh: o.sh}
}
