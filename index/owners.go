package index

import (
	"slices"
	"sort"
	"strings"

	"github.com/miekg/dns"
)

// owners is who publishes at each owner name: the index keeps per name
// only the objects publishing there, the records themselves are in the
// objects (objects.go). Most names have one object, kept at the name's
// number in the Shared (4 bytes a name); the few names with several keep a
// sorted list of keys apart. below (below.go) counts the namespaces the
// policy admits below each name, for OwnersBelow.
type owners struct {
	one     slots[uint32]       // the one object publishing at a name, plus one; 0: none, or several
	several map[string][]string // owner name → the keys of the objects publishing there, when several
	below   below
}

func newOwners(sh *Shared) owners {
	return owners{one: slots[uint32]{sh: sh}, several: map[string][]string{}, below: below{count: map[string][]nsCount{}}}
}

// add notes that object id, of key, publishes at name.
func (w *owners) add(name string, id objectID, key string, objs *objects) {
	if keys, ok := w.several[name]; ok {
		if i, found := slices.BinarySearch(keys, key); !found {
			w.several[name] = slices.Insert(keys, i, key)
		}
		return
	}
	w.one.update(name, func(other uint32) uint32 {
		switch {
		case other == 0:
			return uint32(id) + 1
		case other != uint32(id)+1:
			keys := []string{objs.key(objectID(other - 1)), key}
			slices.Sort(keys)
			w.several[name] = keys
			return 0
		}
		return other
	})
}

// remove notes that the object of key, at id, no longer publishes at name.
func (w *owners) remove(name string, id objectID, key string, objs *objects) {
	keys, ok := w.several[name]
	if !ok {
		w.one.update(name, func(one uint32) uint32 {
			if one == uint32(id)+1 {
				return 0
			}
			return one
		})
		return
	}
	if i, found := slices.BinarySearch(keys, key); found {
		keys = slices.Delete(keys, i, i+1)
	}
	if len(keys) == 1 {
		delete(w.several, name)
		other, _, _ := objs.find(keys[0])
		w.one.update(name, func(uint32) uint32 { return uint32(other) + 1 })
		return
	}
	w.several[name] = keys
}

// each calls f with every object publishing at name, ordered by key.
func (w *owners) each(name string, objs *objects, f func(id objectID, key string)) {
	if one := w.one.get(name); one != 0 {
		id := objectID(one - 1)
		f(id, objs.key(id))
		return
	}
	for _, key := range w.several[name] {
		id, _, _ := objs.find(key)
		f(id, key)
	}
}

// updating is the object UpdateClaim is rebuilding the names of, with its
// records as given (see owners.contributions).
type updating struct {
	id  objectID
	rrs []dns.RR
}

// contributions returns what each object publishes at name, ordered by
// key, with its claim. The object being updated gives its records as they
// came, ordered by name; the others unpack theirs.
func (w *owners) contributions(name string, objs *objects, u updating) []contribution {
	var cs []contribution
	w.each(name, objs, func(id objectID, key string) {
		if cs == nil {
			cs = make([]contribution, 0, max(len(w.several[name]), 1))
		}
		c := contribution{key: key, claim: objs.claim(id)}
		if id == u.id && u.rrs != nil {
			c.rrs = rrsAt(u.rrs, name)
		} else {
			c.rrs = recordsAt(objs.records(id), name)
		}
		cs = append(cs, c)
	})
	return cs
}

// release forgets the owners of names (every name the index uses).
func (w *owners) release(names []string) {
	w.one.release(names)
	clear(w.several)
	w.below.reset()
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
