package index

import (
	"bytes"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/miekg/dns"
)

// Shared is what the indexes of the views of one cluster share: a dense
// number for every object key and every owner name, which each index's own
// tables are indexed by (slices of a few bytes an entry instead of maps
// keyed by strings, once per view), an object's key and the namespace and
// creation time of its claim, and its records in wire form while views
// agree on them. The views' names, nodes and snapshots stay their own, so
// answers, transfers and serials are each view's alone; what is shared is
// only how the writers find their data.
//
// A Shared may be given to any number of indexes (Config.Shared), which
// may hold different objects and zones; it is safe for concurrent use. An
// index without one has one of its own.
type Shared struct {
	mu sync.RWMutex

	ids         map[string]objectID // object key → its number
	objects     pages[sharedObject] // by number
	freeObjects []objectID

	names     map[nameHash]nameID // owner name → its number
	nameRefs  pages[int32]        // by number: the indexes holding the name
	freeNames []nameID
	seeds     [2]maphash.Seed // of the names' hashes
}

// sharedObject is what the views of an object share.
type sharedObject struct {
	key       string
	namespace string // of the claim that first held the object
	created   int64  // of that claim
	// wire is records that views holding the object keep (see keepWire);
	// aliases says how many.
	wire    []byte
	aliases int32
	refs    int32 // indexes holding the object
}

// newShared returns an empty Shared.
func newShared() *Shared {
	return &Shared{
		ids:   map[string]objectID{},
		names: map[nameHash]nameID{},
		seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
	}
}

// object returns the number of key, if some index holds the object.
func (s *Shared) object(key string) (objectID, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	id, ok := s.ids[key]
	return id, ok
}

// holdObject notes that one more index holds the object key, claimed by c,
// and returns its number.
func (s *Shared) holdObject(key string, c Claim) objectID {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.ids[key]
	if !ok {
		id = reuse(&s.freeObjects, len(s.ids))
		s.ids[key] = id
		*s.objects.ensure(uint32(id)) = sharedObject{key: key, namespace: c.Namespace, created: c.Created}
	}
	s.objects.at(uint32(id)).refs++
	return id
}

// dropObject notes that an index no longer holds object id, whose records
// there were wire.
func (s *Shared) dropObject(id objectID, wire []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objects.at(uint32(id))
	s.unalias(o, wire)
	if o.refs--; o.refs > 0 {
		return
	}
	delete(s.ids, o.key)
	*o = sharedObject{}
	s.freeObjects = append(s.freeObjects, id)
}

// key returns the key of object id, which the caller holds.
func (s *Shared) key(id objectID) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.objects.at(uint32(id)).key
}

// claim returns the claim of object id, which the caller holds, as p
// keeps it.
func (s *Shared) claim(id objectID, p *Claim) Claim {
	if p != nil {
		return *p
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	o := s.objects.at(uint32(id))
	return Claim{Namespace: o.namespace, Created: o.created}
}

// packClaim returns c as an index keeps it for object id: nil when it is
// the namespace and creation time shared by the views, which nearly every
// claim is.
func (s *Shared) packClaim(id objectID, c Claim) *Claim {
	if s.claim(id, nil) == c {
		return nil
	}
	p := new(Claim) // here only: &c would put every claim on the heap
	*p = c
	return p
}

// keepWire returns the records an index keeps for object id, which it
// holds, when they change from old to wire, and whether they are the
// shared slice: they are when they equal it, or become it when no view
// keeps it, so that views that agree keep the records once. The shared
// slice does not change while a view keeps it, and slices are never
// changed once stored.
func (s *Shared) keepWire(id objectID, old, wire []byte) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objects.at(uint32(id))
	s.unalias(o, old)
	switch {
	case len(wire) == 0:
		return wire, false
	case bytes.Equal(o.wire, wire):
		o.aliases++
		return o.wire, true
	case o.aliases == 0:
		o.wire, o.aliases = wire, 1
		return wire, true
	}
	return wire, false
}

// wire returns the shared records of object id.
func (s *Shared) wire(id objectID) []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.objects.at(uint32(id)).wire
}

// unalias notes that an index no longer keeps wire for o.
func (s *Shared) unalias(o *sharedObject, wire []byte) {
	if len(wire) > 0 && len(o.wire) > 0 && &wire[0] == &o.wire[0] {
		if o.aliases--; o.aliases == 0 {
			o.wire = nil
		}
	}
}

// nameID is the number of an owner name in a Shared.
type nameID uint32

// nameHash is the key of a name in Shared.names.
//
// Two names with one 128-bit hash would share a number; with per-process
// random seeds that takes about 2^64 names, far beyond any index.
type nameHash [2]uint64

func (s *Shared) hashName(name string) nameHash {
	return nameHash{maphash.String(s.seeds[0], name), maphash.String(s.seeds[1], name)}
}

// name returns the number of the name of hash h, if some index holds it.
func (s *Shared) name(h nameHash) (nameID, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	id, ok := s.names[h]
	return id, ok
}

// holdName notes that one more index holds the name of hash h and returns
// its number.
func (s *Shared) holdName(h nameHash) nameID {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.names[h]
	if !ok {
		id = reuse(&s.freeNames, len(s.names))
		s.names[h] = id
	}
	*s.nameRefs.ensure(uint32(id))++
	return id
}

// dropName notes that an index no longer holds the name of hash h and
// number id.
func (s *Shared) dropName(h nameHash, id nameID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.nameRefs.at(uint32(id))
	if *r--; *r == 0 {
		delete(s.names, h)
		s.freeNames = append(s.freeNames, id)
	}
}

// release gives back every object and name the index holds in its Shared,
// and forgets them.
func (ix *Index) release() {
	var names []string
	ix.eachObject(func(id objectID, wire []byte) {
		forWireNames(wire, func(name string) {
			names = append(names, name)
			if zi := ix.zoneOf(name); zi >= 0 {
				ix.forAncestors(name, ix.zones[zi], func(a string) { names = append(names, a) })
			}
		})
		ix.sh.dropObject(id, wire)
	})
	ix.objs, ix.own, ix.ownLen, ix.ownFree = nil, nil, 0, nil
	for _, z := range ix.zones {
		names = append(names, z)
		for zi := range ix.zones {
			if z != ix.zones[zi] && dns.IsSubDomain(ix.zones[zi], z) {
				ix.forAncestors(z, ix.zones[zi], func(a string) { names = append(names, a) })
			}
		}
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		h := ix.sh.hashName(name)
		if id, ok := ix.sh.name(h); ok && ix.names.get(uint32(id)).used() {
			*ix.names.at(uint32(id)) = nameSlot{}
			ix.sh.dropName(h, id)
		}
	}
	ix.held, ix.shared = 0, map[string][]string{}
}

// pages is a slice of T by number in pages of a fixed size, allocated when
// first used: growing it never copies what it holds (no garbage of grown
// arrays in an initial sync), and an index that holds few of a Shared's
// numbers allocates only the pages they fall in.
type pages[T any] []*[pageSize]T

const (
	pageBits = 10
	pageSize = 1 << pageBits
)

// at returns the element i, which ensure made.
func (p pages[T]) at(i uint32) *T { return &p[i>>pageBits][i&(pageSize-1)] }

// get returns the element i, or the zero T when its page was never made.
func (p pages[T]) get(i uint32) T {
	if int(i>>pageBits) >= len(p) || p[i>>pageBits] == nil {
		var zero T
		return zero
	}
	return *p.at(i)
}

// ensure makes the page of element i and returns the element.
func (p *pages[T]) ensure(i uint32) *T {
	pi := int(i >> pageBits)
	for len(*p) <= pi {
		*p = append(*p, nil)
	}
	if (*p)[pi] == nil {
		(*p)[pi] = new([pageSize]T)
	}
	return p.at(i)
}

// each calls f for every element of the pages made, with its number.
func (p pages[T]) each(f func(i uint32, v *T)) {
	for pi, page := range p {
		if page == nil {
			continue
		}
		for j := range page {
			f(uint32(pi)<<pageBits|uint32(j), &page[j])
		}
	}
}

// reuse returns the last number freed, or next when none is: numbers stay
// dense, so that the views' slices indexed by them stay short.
func reuse[ID ~uint32](free *[]ID, next int) ID {
	if n := len(*free); n > 0 {
		id := (*free)[n-1]
		*free = (*free)[:n-1]
		return id
	}
	return ID(next)
}
