package index

import (
	"bytes"
	"hash/maphash"
	"sync"
)

// Shared is what the indexes of the views of one cluster share: a dense
// number for every object key and every owner name, which each index's own
// tables are indexed by (slices of a few bytes an entry instead of maps
// keyed by strings, once per view), an object's key and the namespace and
// creation time of its claim, its records in wire form in up to two
// variants that views agree on (those of an include and an exclude
// filter), and the table of names that the views' snapshots read, each
// name's node once for the views that agree on it (tables.go). Answers,
// transfers and serials stay each view's alone.
//
// A Shared may be given to any number of indexes (Config.Shared), which
// may hold different objects and zones; it is safe for concurrent use. An
// index without one has one of its own.
type Shared struct {
	mu sync.RWMutex

	ids         map[string]objectID // object key → its number
	objects     pages[sharedObject] // by number
	second      pages[sharedWire]   // by number: the second variant of the records, where there is one
	freeObjects []objectID

	names     map[nameHash]nameID // owner name → its number
	nameRefs  pages[int32]        // by number: the holds on the name (see holdName)
	freeNames []nameID
	seeds     [2]maphash.Seed // of the names' hashes

	tablesMu sync.Mutex
	tables   []*tables // each for up to maxViews indexes
}

// sharedObject is what the views of an object share.
type sharedObject struct {
	key       string
	namespace string // of the claim that first held the object
	created   int64  // of that claim
	first     sharedWire
	refs      int32 // indexes holding the object
}

// sharedWire is records that views holding an object keep (see keepWire),
// and how many do.
type sharedWire struct {
	wire    []byte
	aliases int32
}

// Variants of an object's records in an index (see keepWire).
const (
	ownWire    = 0
	firstWire  = 1
	secondWire = 2
)

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
	id, made := hold(s.ids, key, &s.freeObjects)
	if made {
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
	s.unalias(id, wire)
	o := s.objects.at(uint32(id))
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
// holds, when they change from old to wire, and which variant they are:
// one of the two the Shared keeps when they equal it, or become it when no
// view keeps it, so that views that agree keep the records once; else
// ownWire. A variant does not change while a view keeps it, and slices
// are never changed once stored.
func (s *Shared) keepWire(id objectID, old, wire []byte) ([]byte, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unalias(id, old)
	if len(wire) == 0 {
		return wire, ownWire
	}
	first := &s.objects.at(uint32(id)).first
	second := s.second.get(uint32(id))
	switch {
	case bytes.Equal(first.wire, wire):
		first.aliases++
		return first.wire, firstWire
	case bytes.Equal(second.wire, wire):
		s.second.at(uint32(id)).aliases++
		return second.wire, secondWire
	case first.aliases == 0:
		*first = sharedWire{wire, 1}
		return wire, firstWire
	case second.aliases == 0:
		*s.second.ensure(uint32(id)) = sharedWire{wire, 1}
		return wire, secondWire
	}
	return wire, ownWire
}

// wire returns variant n of the records of object id.
func (s *Shared) wire(id objectID, n int) []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if n == secondWire {
		return s.second.at(uint32(id)).wire
	}
	return s.objects.at(uint32(id)).first.wire
}

// unalias notes that an index no longer keeps wire for object id; the
// caller holds s.mu.
func (s *Shared) unalias(id objectID, wire []byte) {
	if len(wire) == 0 {
		return
	}
	for _, w := range [...]*sharedWire{&s.objects.at(uint32(id)).first, s.second.find(uint32(id))} {
		if w != nil && len(w.wire) > 0 && &wire[0] == &w.wire[0] {
			if w.aliases--; w.aliases == 0 {
				*w = sharedWire{}
			}
			return
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

// holdName notes one more hold on the name of hash h (an index's table
// that has an entry at its number) and returns its number.
func (s *Shared) holdName(h nameHash) nameID {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, _ := hold(s.names, h, &s.freeNames)
	*s.nameRefs.ensure(uint32(id))++
	return id
}

// dropName drops a hold on the name of hash h and number id.
func (s *Shared) dropName(h nameHash, id nameID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.nameRefs.at(uint32(id))
	if *r--; *r == 0 {
		delete(s.names, h)
		s.freeNames = append(s.freeNames, id)
	}
}

// hold returns the number of k in ids, giving it the last number freed, or
// the next one, when it has none (made): numbers stay dense, so that the
// views' slices indexed by them stay short.
func hold[K comparable, ID ~uint32](ids map[K]ID, k K, free *[]ID) (id ID, made bool) {
	if id, ok := ids[k]; ok {
		return id, false
	}
	if n := len(*free); n > 0 {
		id = (*free)[n-1]
		*free = (*free)[:n-1]
	} else {
		id = ID(len(ids))
	}
	ids[k] = id
	return id, true
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

// find returns the element i, or nil when its page was never made.
func (p pages[T]) find(i uint32) *T {
	if int(i>>pageBits) >= len(p) || p[i>>pageBits] == nil {
		return nil
	}
	return p.at(i)
}

// get returns the element i, or the zero T when its page was never made.
func (p pages[T]) get(i uint32) T {
	if e := p.find(i); e != nil {
		return *e
	}
	var zero T
	return zero
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

// slots is a value per name, by the name's number in a Shared, for the
// names where it is not the zero value: the table holds the name's number
// while it is not.
type slots[T comparable] struct {
	sh *Shared
	p  pages[T]
}

// get returns the value of name.
func (s *slots[T]) get(name string) T {
	id, ok := s.sh.name(s.sh.hashName(name))
	if !ok {
		var zero T
		return zero
	}
	return s.p.get(uint32(id))
}

// update sets the value of name to what f returns for it.
func (s *slots[T]) update(name string, f func(T) T) {
	var zero T
	h := s.sh.hashName(name)
	if id, ok := s.sh.name(h); ok {
		if v := s.p.find(uint32(id)); v != nil && *v != zero {
			if *v = f(*v); *v == zero {
				s.sh.dropName(h, id)
			}
			return
		}
	}
	if v := f(zero); v != zero {
		*s.p.ensure(uint32(s.sh.holdName(h))) = v
	}
}

// release sets the values of names to zero and forgets them.
func (s *slots[T]) release(names []string) {
	var zero T
	for _, name := range names {
		h := s.sh.hashName(name)
		if id, ok := s.sh.name(h); ok {
			if v := s.p.find(uint32(id)); v != nil && *v != zero {
				*v = zero
				s.sh.dropName(h, id)
			}
		}
	}
	s.p = nil
}
