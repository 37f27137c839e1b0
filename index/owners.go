package index

import (
	"slices"
	"sort"
	"strings"

	"github.com/miekg/dns"
)

// The index keeps, per owner name, only the objects publishing there: the
// records themselves are in the objects (see objects.go). Most names have
// one object, kept in the name's slot, by the name's number in the Shared
// (8 bytes a name, with the count of names below it); the few names with
// several keep a sorted list of keys apart.

// nameSlot is what an index keeps of a name, at its number in the Shared.
// A slot in use holds a reference to the number (see useName).
type nameSlot struct {
	owner    uint32 // the one object publishing there, plus one; 0: none, or several (Index.shared)
	children int32  // names with data below it
}

func (n nameSlot) used() bool { return n != nameSlot{} }

// slot returns the slot of name, the zero one when the index does not use it.
func (ix *Index) slot(name string) nameSlot {
	id, ok := ix.sh.name(ix.sh.hashName(name))
	if !ok {
		return nameSlot{}
	}
	return ix.names.get(uint32(id))
}

// useName calls change with the slot of name and notes whether the index
// uses it afterwards, holding the name's number in the Shared while it does.
func (ix *Index) useName(name string, change func(*nameSlot)) {
	h := ix.sh.hashName(name)
	id, ok := ix.sh.name(h)
	if ok && ix.names.get(uint32(id)).used() {
		s := ix.names.at(uint32(id))
		if change(s); !s.used() {
			ix.sh.dropName(h, id)
		}
		return
	}
	var s nameSlot
	if change(&s); s.used() {
		*ix.names.ensure(uint32(ix.sh.holdName(h))) = s
	}
}

// addChildren adds delta to the count of names with data below name.
func (ix *Index) addChildren(name string, delta int32) {
	ix.useName(name, func(s *nameSlot) { s.children = max(s.children+delta, 0) })
}

// addOwner notes that object id, of key, publishes at name.
func (ix *Index) addOwner(name string, id objectID, key string) {
	if keys, ok := ix.shared[name]; ok {
		if i, found := slices.BinarySearch(keys, key); !found {
			ix.shared[name] = slices.Insert(keys, i, key)
		}
		return
	}
	ix.useName(name, func(s *nameSlot) {
		switch other := s.owner; {
		case other == 0:
			s.owner = uint32(id) + 1
		case other != uint32(id)+1:
			s.owner = 0
			keys := []string{ix.sh.key(objectID(other - 1)), key}
			slices.Sort(keys)
			ix.shared[name] = keys
		}
	})
}

// removeOwner notes that the object of key, at id, no longer publishes at name.
func (ix *Index) removeOwner(name string, id objectID, key string) {
	keys, ok := ix.shared[name]
	if !ok {
		ix.useName(name, func(s *nameSlot) {
			if s.owner == uint32(id)+1 {
				s.owner = 0
			}
		})
		return
	}
	if i, found := slices.BinarySearch(keys, key); found {
		keys = slices.Delete(keys, i, i+1)
	}
	if len(keys) == 1 {
		delete(ix.shared, name)
		other, _, _ := ix.object(keys[0])
		ix.useName(name, func(s *nameSlot) { s.owner = uint32(other) + 1 })
		return
	}
	ix.shared[name] = keys
}

// contributions returns what each object publishes at name, ordered by key.
func (ix *Index) contributions(name string) []contribution {
	if s := ix.slot(name); s.owner != 0 {
		return []contribution{ix.contribution(objectID(s.owner-1), name)}
	}
	keys := ix.shared[name]
	cs := make([]contribution, len(keys))
	for i, key := range keys {
		id, _, _ := ix.object(key)
		cs[i] = ix.contribution(id, name)
	}
	return cs
}

// contribution returns the records that object id publishes at name, with
// its claim. The object being updated gives its records as they came,
// ordered by name; the others unpack theirs.
func (ix *Index) contribution(id objectID, name string) contribution {
	key, claim := ix.sh.key(id), ix.claimOf(id)
	if id == ix.updating.id && ix.updating.rrs != nil {
		return contribution{key: key, claim: claim, rrs: rrsAt(ix.updating.rrs, name)}
	}
	return contribution{key: key, claim: claim, rrs: recordsAt(ix.recordsOf(id), name)}
}

// rrsAt returns the records of rrs, ordered by owner name (see sortRRs),
// that name owns, as a slice of rrs without spare capacity.
func rrsAt(rrs []dns.RR, name string) []dns.RR {
	i := sort.Search(len(rrs), func(i int) bool { return strings.Compare(rrs[i].Header().Name, name) >= 0 })
	j := i
	for j < len(rrs) && rrs[j].Header().Name == name {
		j++
	}
	return rrs[i:j:j]
}

// forOwnerNames calls f once for every owner name of rrs, which are ordered
// by owner name.
func forOwnerNames(rrs []dns.RR, f func(name string)) {
	for i, rr := range rrs {
		if name := rr.Header().Name; i == 0 || name != rrs[i-1].Header().Name {
			f(name)
		}
	}
}
