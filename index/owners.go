package index

import (
	"hash/maphash"
	"slices"
	"sort"
	"strings"

	"github.com/miekg/dns"
)

// The index keeps, per owner name, only the objects publishing there: the
// records themselves are in the objects (see objects.go). Most names have
// one object, kept in a map from the name's 128-bit hash to the object's
// position, which holds no pointers for the collector to scan; the few names
// with several keep a sorted list of keys apart.
//
// Two names with one 128-bit hash would share an entry; with per-process
// random seeds that takes about 2^64 names, far beyond any index.

// nameHash is the key of a name in Index.owners.
type nameHash [2]uint64

// hashName returns the key of name in Index.owners.
func (ix *Index) hashName(name string) nameHash {
	return nameHash{maphash.String(ix.seeds[0], name), maphash.String(ix.seeds[1], name)}
}

// addOwner notes that object id publishes at name.
func (ix *Index) addOwner(name string, id objectID) {
	key := ix.objs.at(id).key
	if keys, ok := ix.shared[name]; ok {
		if i, found := slices.BinarySearch(keys, key); !found {
			ix.shared[name] = slices.Insert(keys, i, key)
		}
		return
	}
	h := ix.hashName(name)
	other, ok := ix.owners[h]
	switch {
	case !ok:
		ix.owners[h] = id
	case other != id:
		delete(ix.owners, h)
		keys := []string{ix.objs.at(other).key, key}
		slices.Sort(keys)
		ix.shared[name] = keys
	}
}

// removeOwner notes that the object of key, at id, no longer publishes at name.
func (ix *Index) removeOwner(name string, id objectID, key string) {
	keys, ok := ix.shared[name]
	if !ok {
		h := ix.hashName(name)
		if other, ok := ix.owners[h]; ok && other == id {
			delete(ix.owners, h)
		}
		return
	}
	if i, found := slices.BinarySearch(keys, key); found {
		keys = slices.Delete(keys, i, i+1)
	}
	if len(keys) == 1 {
		delete(ix.shared, name)
		ix.owners[ix.hashName(name)] = ix.objects[keys[0]]
		return
	}
	ix.shared[name] = keys
}

// contributions returns what each object publishes at name, ordered by key.
func (ix *Index) contributions(name string) []contribution {
	if id, ok := ix.owners[ix.hashName(name)]; ok {
		return []contribution{ix.contribution(id, name)}
	}
	keys := ix.shared[name]
	cs := make([]contribution, len(keys))
	for i, key := range keys {
		cs[i] = ix.contribution(ix.objects[key], name)
	}
	return cs
}

// contribution returns the records that object id publishes at name, with
// its claim. The object being updated gives its records as they came,
// ordered by name; the others unpack theirs.
func (ix *Index) contribution(id objectID, name string) contribution {
	o := ix.objs.at(id)
	if id == ix.updating.id && ix.updating.rrs != nil {
		return contribution{key: o.key, claim: o.claim.claim(), rrs: rrsAt(ix.updating.rrs, name)}
	}
	return contribution{key: o.key, claim: o.claim.claim(), rrs: recordsAt(o.wire, name)}
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
