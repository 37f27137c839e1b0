package index

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// OwnersBelow returns the namespaces of the claims the policy admits at name
// and at the names below it, sorted, with "" for the plugin's own records.
// It reads the objects publishing at name and a count kept per name of the
// namespaces admitted below it: its cost grows with name's labels and the
// answer, not with the index. Under the first and delegated policies the
// counts are kept from the start; under union, where nothing needs them
// (the dynamic updates' ownership check never asks), the first call makes
// them, walking the objects once.
func (ix *Index) OwnersBelow(name string) []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !ix.owners.below.on {
		ix.owners.below.on = true
		var names []string
		ix.objects.each(func(_ objectID, wire []byte) {
			forWireNames(wire, func(n string) { names = append(names, n) })
		})
		slices.Sort(names)
		for _, n := range slices.Compact(names) {
			ix.owners.below.change(n, nil, ix.admittedAt(n))
		}
	}
	out := ix.admittedAt(name)
	for _, c := range ix.owners.below.count[name] {
		out = append(out, c.ns)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// admittedAt returns the namespaces of the claims the policy admits at
// name, one per object, when the counts are kept.
func (ix *Index) admittedAt(name string) []string {
	if !ix.owners.below.on {
		return nil
	}
	var out []string
	ix.owners.each(name, &ix.objects, func(id objectID, key string) {
		if !ix.rules.rejected(name, key) {
			out = append(out, ix.objects.claim(id).Namespace)
		}
	})
	return out
}

// below counts, for each name with admitted claims below it, those claims
// by namespace: one per object and owner name. Updates change the counts
// of a name's ancestors, a few map entries per label.
type below struct {
	on    bool                 // the counts are kept
	count map[string][]nsCount // name → the claims admitted below it, by namespace, sorted
}

type nsCount struct {
	ns string
	n  int32
}

// change notes that the namespaces admitted at name were was and are now
// is (one per object, in any order).
func (b *below) change(name string, was, is []string) {
	if !b.on || len(was) == len(is) && (len(was) == 0 || len(was) == 1 && was[0] == is[0]) {
		return // the usual update: the same one namespace, or none
	}
	was, is = slices.Clone(was), slices.Clone(is)
	slices.Sort(was)
	slices.Sort(is)
	ds := deltas(was, is)
	if len(ds) == 0 {
		return
	}
	for off, end := dns.NextLabel(name, 0); !end; off, end = dns.NextLabel(name, off) {
		for _, d := range ds {
			b.add(name[off:], d.ns, d.n)
		}
	}
}

// deltas returns, per namespace, how many more times is holds it than was;
// both are sorted.
func deltas(was, is []string) []nsCount {
	var ds []nsCount
	add := func(ns string, d int32) {
		if n := len(ds); n > 0 && ds[n-1].ns == ns {
			ds[n-1].n += d
		} else {
			ds = append(ds, nsCount{ns, d})
		}
	}
	for i, j := 0, 0; i < len(was) || j < len(is); {
		switch {
		case j == len(is) || i < len(was) && was[i] < is[j]:
			add(was[i], -1)
			i++
		case i == len(was) || is[j] < was[i]:
			add(is[j], +1)
			j++
		default:
			i, j = i+1, j+1
		}
	}
	return slices.DeleteFunc(ds, func(d nsCount) bool { return d.n == 0 })
}

// add adds d to the count of namespace ns below name.
func (b *below) add(name, ns string, d int32) {
	cs := b.count[name]
	i, found := slices.BinarySearchFunc(cs, ns, func(c nsCount, ns string) int { return strings.Compare(c.ns, ns) })
	switch {
	case found:
		if cs[i].n += d; cs[i].n <= 0 {
			cs = slices.Delete(cs, i, i+1)
		}
	case d > 0:
		cs = slices.Insert(cs, i, nsCount{strings.Clone(ns), d})
	}
	if len(cs) == 0 {
		delete(b.count, name)
		return
	}
	if _, ok := b.count[name]; !ok {
		name = strings.Clone(name) // not the rest of a record's name
	}
	b.count[name] = cs
}

// reset forgets every count; they are kept as before.
func (b *below) reset() { clear(b.count) }
