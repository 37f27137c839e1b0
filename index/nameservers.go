package index

import "slices"

// Under Union the wildcard below a zone's apex is a tenant's, but it must
// not answer for a nameserver name (RFC 4592: it answers for the names that
// do not exist), which would make a tenant's address the nameserver's in
// answers, in the glue and in the parent. A nameserver name exists while
// the plugin publishes there (its Service's addresses, or those of the
// Corefile) or while a name below it has data; the wildcard is rejected
// while one of the zone's nameserver names does not exist (rules.reserved),
// and admitted again, or rejected, when that changes.

// recheckNameservers rebuilds the wildcard below the apex of zone zi when
// name, just rebuilt, is at or below a nameserver name of the zone and
// whether all of them exist changed.
func (ix *Index) recheckNameservers(name string, zi int) {
	r := &ix.rules
	if r.policy != Union || len(r.nsIn[zi]) == 0 {
		return
	}
	if !slices.ContainsFunc(r.nsIn[zi], func(ns string) bool { return inZone(name, ns) }) {
		return
	}
	missing := false
	for _, ns := range r.nsIn[zi] {
		if _, ok := ix.nodes.view(ns); !ok {
			missing = true
		}
	}
	if missing == r.nsMissing[zi] {
		return
	}
	r.nsMissing[zi] = missing
	wildcard := "*." + ix.zones[zi]
	ix.rebuild(wildcard, ix.admittedAt(wildcard))
}
