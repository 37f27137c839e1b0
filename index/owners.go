package index

import (
	"slices"
	"sort"
	"strings"

	"github.com/miekg/dns"
)

// The index keeps, per owner name, only the keys of the objects publishing
// there: the records themselves are in the objects map, ordered by owner
// name. Most names have one object, kept in a map of plain strings; the few
// with several keep a sorted list apart. That is about 80 bytes a name less
// than a list of contributions per name.

// addOwner notes that object key publishes at name.
func (ix *Index) addOwner(name, key string) {
	if keys, ok := ix.shared[name]; ok {
		if i, found := slices.BinarySearch(keys, key); !found {
			ix.shared[name] = slices.Insert(keys, i, key)
		}
		return
	}
	other, ok := ix.owners[name]
	switch {
	case !ok:
		ix.owners[name] = key
	case other != key:
		delete(ix.owners, name)
		keys := []string{other, key}
		slices.Sort(keys)
		ix.shared[name] = keys
	}
}

// removeOwner notes that object key no longer publishes at name.
func (ix *Index) removeOwner(name, key string) {
	keys, ok := ix.shared[name]
	if !ok {
		if ix.owners[name] == key {
			delete(ix.owners, name)
		}
		return
	}
	if i, found := slices.BinarySearch(keys, key); found {
		keys = slices.Delete(keys, i, i+1)
	}
	if len(keys) == 1 {
		delete(ix.shared, name)
		ix.owners[name] = keys[0]
		return
	}
	ix.shared[name] = keys
}

// contributions returns what each object publishes at name, ordered by key.
func (ix *Index) contributions(name string) []contribution {
	if key, ok := ix.owners[name]; ok {
		return []contribution{ix.contribution(key, name)}
	}
	keys := ix.shared[name]
	cs := make([]contribution, len(keys))
	for i, key := range keys {
		cs[i] = ix.contribution(key, name)
	}
	return cs
}

// contribution returns the records that object key publishes at name, with its claim.
func (ix *Index) contribution(key, name string) contribution {
	o := ix.objects[key]
	return contribution{key: key, claim: o.claim, rrs: recordsAt(o.rrs, name)}
}

// recordsAt returns the records of rrs, ordered by owner name (see sortRRs),
// that name owns, as a slice of rrs without spare capacity.
func recordsAt(rrs []dns.RR, name string) []dns.RR {
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
