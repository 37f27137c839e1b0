package index

import (
	"slices"
	"strings"
)

// quota keeps each tenant (the namespace of a claim) within the records
// Config.Quota gives it. An object whose records do not fit in what the
// tenant's older objects leave is refused: it publishes nothing at any
// name (all or nothing, so a half-published object never answers), and it
// is kept, so that it comes in as soon as room is made. The order is the
// claims' (Claim.before: creation time, then key), so the outcome depends
// on the objects that exist, never on the order of events: a new object is
// refused rather than an older one evicted. The parts of one object (keys
// that differ only from a '#' on, as the watch layer's unhealthy part)
// are one object here, admitted or refused together.
//
// The cost is O(1) an update while a tenant holds no more than its quota.
// A tenant that holds more keeps its objects ordered (members), built
// once, when it first does, and kept while it has objects: each update of
// its objects then costs O(its objects), never another tenant's.
//
// Until the first Flush (the initial sync, where objects come in any
// order) a tenant's objects are admitted as they come while they fit;
// settle then puts every tenant over its quota in order.
type quota struct {
	limitOf func(tenant string) int // Config.Quota; nil: no quotas
	tenants map[string]*tenant      // by namespace, while it holds objects
	refused map[objectID]struct{}   // the objects refused
}

// tenant is what quota keeps of one namespace.
type tenant struct {
	limit   int // records it may publish; 0: any number
	records int // of its objects, admitted or refused
	used    int // of its objects admitted
	refused int // its objects refused
	// members are its objects, ordered (see member.compare): nil until it
	// first holds more than its limit after the initial sync.
	members []member
}

// member is one object of a tenant that keeps them ordered.
type member struct {
	key     string
	created int64
	id      objectID
	records int
	refused bool
}

// flip is an object whose admission changed.
type flip struct {
	id       objectID
	admitted bool
}

func newQuota(limitOf func(string) int) quota {
	return quota{limitOf: limitOf, tenants: map[string]*tenant{}, refused: map[objectID]struct{}{}}
}

// on reports whether quotas apply.
func (q *quota) on() bool { return q.limitOf != nil }

// admitted reports whether object id, which the index holds, publishes.
func (q *quota) admitted(id objectID) bool {
	_, refused := q.refused[id]
	return !refused
}

// limit returns the limit of the tenant of claim c, 0 for none.
func (q *quota) limit(c Claim) int {
	if t := q.tenants[c.Namespace]; t != nil {
		return t.limit
	}
	return q.limitOf(c.Namespace)
}

// change notes that object id, of key, claimed by old with was records
// (0: new), is now claimed by c with now records (0: removed; the index
// holds it until then), of the same tenant, and returns the other objects
// of the tenant whose admission changed. live: the index is past its
// first Flush.
func (q *quota) change(id objectID, key string, old, c Claim, was, now int, objs *objects, live bool) []flip {
	if !q.on() || c.plugin() {
		return nil
	}
	t := q.tenants[c.Namespace]
	if t == nil {
		if now == 0 {
			return nil
		}
		t = &tenant{limit: q.limitOf(c.Namespace)}
		q.tenants[c.Namespace] = t
	}
	t.records += now - was
	defer func() {
		if t.records == 0 {
			delete(q.tenants, c.Namespace)
		}
	}()
	if t.members != nil {
		return q.reorder(t, member{key: key, created: old.Created, id: id, records: was}, member{key: key, created: c.Created, id: id, records: now})
	}
	if q.admitted(id) {
		t.used -= was
	} else {
		delete(q.refused, id)
		t.refused--
	}
	if live && now > 0 && t.limit > 0 && t.records > t.limit {
		t.members = q.members(objs, func(ns string) bool { return ns == c.Namespace })[c.Namespace]
		return q.evaluate(t, 0, 0, id)
	}
	// Everything fits, or in the initial sync: as they come.
	switch {
	case now == 0:
	case t.limit <= 0 || t.used+now <= t.limit:
		t.used += now
	default:
		q.refused[id] = struct{}{}
		t.refused++
	}
	return nil
}

// reorder replaces the member o (none when it has no records) of t by n
// (none when it has none) and admits again the members from the first
// whose decision may change: those from the first created as early as
// either, since a part of an object is never apart from the others. A new
// object, the newest, or one whose records change but not their number,
// costs O(log n); a change of an older one's number, O(n).
func (q *quota) reorder(t *tenant, o, n member) []flip {
	ms := t.members
	start, first := len(ms), n.created
	po := -1
	if o.records > 0 {
		if i, found := slices.BinarySearchFunc(ms, o, member.compare); found && ms[i].id == o.id {
			po = i
		} else {
			po = slices.IndexFunc(ms, func(m member) bool { return m.id == o.id })
		}
		if n.records == o.records && n.created == o.created {
			return nil // the same place and size: no decision changes
		}
		start = po
		if n.records == 0 || o.created < first {
			first = o.created
		}
	}
	if n.records > 0 {
		i, _ := slices.BinarySearchFunc(ms, n, member.compare)
		start = min(start, i)
	}
	for start > 0 && ms[start-1].created >= first {
		start--
	}
	used := t.used
	for _, m := range ms[start:] {
		if !m.refused {
			used -= m.records
		}
	}
	switch {
	case po >= 0 && n.records > 0 && o.created == n.created:
		n.refused = ms[po].refused
		ms[po] = n
	default:
		if po >= 0 {
			if ms[po].refused {
				delete(q.refused, o.id)
				t.refused--
			}
			ms = slices.Delete(ms, po, po+1)
		}
		if n.records > 0 {
			i, _ := slices.BinarySearchFunc(ms, n, member.compare)
			ms = slices.Insert(ms, i, n)
		}
	}
	t.members = ms
	return q.evaluate(t, start, used, n.id)
}

// settle puts every tenant that holds more than its limit, or has objects
// refused, in order, at the first Flush, and returns the objects whose
// admission changed.
func (q *quota) settle(objs *objects) []flip {
	over := func(ns string) bool {
		t := q.tenants[ns]
		return t != nil && (t.refused > 0 || t.limit > 0 && t.records > t.limit)
	}
	var flips []flip
	for ns, ms := range q.members(objs, over) {
		t := q.tenants[ns]
		t.members = ms
		flips = append(flips, q.evaluate(t, 0, 0, ^objectID(0))...)
	}
	return flips
}

// members returns the objects of the tenants that want reports true of,
// by tenant, ordered: one walk of the objects.
func (q *quota) members(objs *objects, want func(ns string) bool) map[string][]member {
	out := map[string][]member{}
	objs.objs.each(func(i uint32, n *uint32) {
		if *n == notHeld {
			return
		}
		id := objectID(i)
		c := objs.claim(id)
		if c.plugin() || !want(c.Namespace) {
			return
		}
		_, refused := q.refused[id]
		out[c.Namespace] = append(out[c.Namespace], member{key: objs.key(id), created: c.Created, id: id, records: countWire(objs.records(id)), refused: refused})
	})
	for _, ms := range out {
		slices.SortFunc(ms, member.compare)
	}
	return out
}

// evaluate admits t's objects from the member start on, in order, while
// they fit in what used (the records of those before admitted) leaves,
// refuses the others, and returns those whose admission changed but self.
// start is the first part of an object.
func (q *quota) evaluate(t *tenant, start, used int, self objectID) []flip {
	var flips []flip
	for i := start; i < len(t.members); {
		j, records := i+1, t.members[i].records
		for j < len(t.members) && t.members[j].partOf(t.members[i]) {
			records += t.members[j].records
			j++
		}
		fits := t.limit <= 0 || used+records <= t.limit
		if fits {
			used += records
		}
		for k := i; k < j; k++ {
			m := &t.members[k]
			if m.refused != fits {
				continue
			}
			m.refused = !fits
			if fits {
				delete(q.refused, m.id)
				t.refused--
			} else {
				q.refused[m.id] = struct{}{}
				t.refused++
			}
			if m.id != self {
				flips = append(flips, flip{m.id, fits})
			}
		}
		i = j
	}
	t.used = used
	return flips
}

// compare orders members as Claim.before orders claims: by creation time,
// then by key, the parts of an object together.
func (m member) compare(o member) int {
	if m.created != o.created {
		if m.created < o.created {
			return -1
		}
		return 1
	}
	if c := strings.Compare(m.object(), o.object()); c != 0 {
		return c
	}
	return strings.Compare(m.key, o.key)
}

// object returns the key of the object m is a part of.
func (m member) object() string {
	k, _, _ := strings.Cut(m.key, "#")
	return k
}

// partOf reports whether m is a part of the object of o.
func (m member) partOf(o member) bool {
	return m.created == o.created && m.object() == o.object()
}

// countWire returns the number of records of wire.
func countWire(wire []byte) int {
	n := 0
	for b := wire; len(b) > 0; n++ {
		rec, _ := packedRecordLen(b)
		b = b[rec:]
	}
	return n
}

// flipNames returns the owner names of the objects of flips.
func (ix *Index) flipNames(flips []flip) []string {
	var names []string
	for _, f := range flips {
		forWireNames(ix.objects.records(f.id), func(name string) { names = append(names, name) })
	}
	return names
}

// flipOwners adds the objects of flips that are admitted now at their
// names, and removes those refused now.
func (ix *Index) flipOwners(flips []flip) {
	for _, f := range flips {
		key := ix.objects.key(f.id)
		forWireNames(ix.objects.records(f.id), func(name string) {
			if f.admitted {
				ix.owners.add(name, f.id, key, &ix.objects)
			} else {
				ix.owners.remove(name, f.id, key, &ix.objects)
			}
		})
	}
}

// refusal returns the rejection of object id, which the quota refuses:
// at its first name.
func (ix *Index) refusal(id objectID) Rejection {
	wire := ix.objects.records(id)
	var name string
	forWireNames(wire, func(n string) {
		if name == "" {
			name = n
		}
	})
	r := Rejection{Name: name, Key: ix.objects.key(id), Reason: ReasonQuota, Records: countWire(wire), Quota: ix.quota.limit(ix.objects.claim(id))}
	if zi := ZoneOf(ix.zones, name); zi >= 0 {
		r.Zone = ix.zones[zi]
	}
	return r
}

// refusalsNow returns the rejections of the objects the quota refuses,
// ordered by key.
func (ix *Index) refusalsNow() []Rejection {
	out := make([]Rejection, 0, len(ix.quota.refused))
	for id := range ix.quota.refused {
		out = append(out, ix.refusal(id))
	}
	slices.SortFunc(out, func(a, b Rejection) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// tell tells the listener of rejections; ix.mu is not held.
func (ix *Index) tell(rejected []Rejection) {
	if rl, ok := ix.listener.(RejectionListener); ok {
		for _, r := range rejected {
			rl.Rejected(r)
		}
	}
}
