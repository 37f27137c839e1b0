package index

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/miekg/dns"
)

// mergeSets builds the RRsets of one owner name from the records that several
// objects publish there. The rule, documented in the README:
//
//   - records of one type are united, duplicates removed, and the RRset gets the
//     smallest TTL of its members (RFC 2181 §5.2);
//   - a CNAME cannot share its name with other data (RFC 1034 §3.6.2): when
//     other records exist, the CNAMEs are dropped; when several objects publish
//     different CNAMEs, the one from the first object in key order wins;
//   - a CNAME at a zone apex is dropped.
//
// contributors is ordered by key (byte order), so the outcome does not depend
// on the order in which objects arrived. conflict describes what was dropped
// or merged, or is empty when the contributors agree.
func mergeSets(name string, contributors []contribution, apex bool) (sets []rrset, conflict string) {
	if len(contributors) == 0 {
		return nil, ""
	}
	if len(contributors) == 1 {
		if sets, ok := singleSet(contributors[0].rrs, apex); ok {
			return sets, ""
		}
	}
	var cnameKey string
	var cname dns.RR
	var dataKeys []string
	var dataRRs [][]dns.RR
	var notes []string
	for _, ct := range contributors {
		k := ct.key
		hasData := false
		for _, rr := range ct.rrs {
			if c, ok := rr.(*dns.CNAME); ok {
				switch {
				case cname == nil:
					cname, cnameKey = c, k
				case dns.IsDuplicate(cname, c):
					// The same CNAME from several objects: the smallest TTL, as for other types.
					if c.Hdr.Ttl < cname.Header().Ttl {
						cname = c
					}
				default:
					notes = append(notes, fmt.Sprintf("CNAME %s from %s ignored in favour of %s from %s", c.Target, k, cname.(*dns.CNAME).Target, cnameKey))
				}
				continue
			}
			if apex && rr.Header().Rrtype == dns.TypeNS {
				notes = append(notes, fmt.Sprintf("NS %s from %s ignored: the apex NS records come from the apex and secondary options", rr.(*dns.NS).Ns, k))
				continue
			}
			hasData = true
			sets = addToSet(sets, rr)
		}
		if hasData {
			dataKeys = append(dataKeys, k)
			dataRRs = append(dataRRs, ct.rrs)
		}
	}
	if cname != nil {
		switch {
		case apex:
			notes = append(notes, fmt.Sprintf("CNAME %s from %s ignored at the zone apex", cname.(*dns.CNAME).Target, cnameKey))
		case len(sets) > 0:
			notes = append(notes, fmt.Sprintf("CNAME %s from %s ignored: %s also has other records from %s", cname.(*dns.CNAME).Target, cnameKey, name, strings.Join(dataKeys, ", ")))
		default:
			sets = []rrset{{qtype: dns.TypeCNAME, rrs: []dns.RR{cname}}}
		}
	}
	if len(dataKeys) > 1 && !sameData(dataRRs) {
		notes = append(notes, "records united from "+strings.Join(dataKeys, ", "))
	}
	sort.Slice(sets, func(i, j int) bool { return sets[i].qtype < sets[j].qtype })
	for i := range sets {
		sets[i].rrs = sortedUniformTTL(sets[i].rrs)
	}
	return sets, strings.Join(notes, "; ")
}

// singleSet is mergeSets for the common case of one object publishing one
// RRset, without duplicates, with one TTL, and no CNAME or NS at the apex.
// The RRset shares the object's records instead of copying them.
func singleSet(rrs []dns.RR, apex bool) ([]rrset, bool) {
	h := rrs[0].Header()
	switch {
	case h.Rrtype == dns.TypeCNAME && (apex || len(rrs) > 1), h.Rrtype == dns.TypeNS && apex:
		return nil, false
	}
	for i, rr := range rrs[1:] {
		if rh := rr.Header(); rh.Rrtype != h.Rrtype || rh.Ttl != h.Ttl || dns.IsDuplicate(rrs[i], rr) {
			return nil, false
		}
	}
	return []rrset{{qtype: h.Rrtype, rrs: rrs[:len(rrs):len(rrs)]}}, true
}

// addToSet adds rr to the set of its type unless an identical record is there.
func addToSet(sets []rrset, rr dns.RR) []rrset {
	t := rr.Header().Rrtype
	for i := range sets {
		if sets[i].qtype != t {
			continue
		}
		for j, have := range sets[i].rrs {
			if dns.IsDuplicate(have, rr) {
				if rr.Header().Ttl < have.Header().Ttl {
					sets[i].rrs[j] = rr
				}
				return sets
			}
		}
		sets[i].rrs = append(sets[i].rrs, rr)
		return sets
	}
	return append(sets, rrset{qtype: t, rrs: []dns.RR{rr}})
}

// sortedUniformTTL orders an RRset by RDATA and gives all members the smallest
// TTL among them, copying the records it changes (published records are shared).
func sortedUniformTTL(rrs []dns.RR) []dns.RR {
	sort.SliceStable(rrs, func(i, j int) bool { return compareRdata(rrs[i], rrs[j]) < 0 })
	ttl := rrs[0].Header().Ttl
	for _, rr := range rrs {
		ttl = min(ttl, rr.Header().Ttl)
	}
	for i, rr := range rrs {
		if rr.Header().Ttl != ttl {
			c := dns.Copy(rr)
			c.Header().Ttl = ttl
			rrs[i] = c
		}
	}
	return rrs[:len(rrs):len(rrs)]
}

// sameData reports whether every contributor publishes the same records.
func sameData(rrs [][]dns.RR) bool {
	for _, r := range rrs[1:] {
		if !equalRRs(rrs[0], r) {
			return false
		}
	}
	return true
}

// contribution is the records one object publishes at one owner name.
type contribution struct {
	key   string // the object's "Kind/namespace/name"
	claim Claim
	rrs   []dns.RR
}

// sortRRs orders records by owner name, type and RDATA.
func sortRRs(rrs []dns.RR) {
	sort.SliceStable(rrs, func(i, j int) bool {
		a, b := rrs[i].Header(), rrs[j].Header()
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Rrtype != b.Rrtype {
			return a.Rrtype < b.Rrtype
		}
		return compareRdata(rrs[i], rrs[j]) < 0
	})
}

// compareRdata orders two records of one type by their data.
func compareRdata(a, b dns.RR) int {
	switch x := a.(type) {
	case *dns.A:
		if y, ok := b.(*dns.A); ok {
			return bytes.Compare(x.A.To4(), y.A.To4())
		}
	case *dns.AAAA:
		if y, ok := b.(*dns.AAAA); ok {
			return bytes.Compare(x.AAAA, y.AAAA)
		}
	}
	return strings.Compare(rdata(a), rdata(b))
}

// rdata is the presentation form of a record without its header.
func rdata(rr dns.RR) string {
	return strings.TrimPrefix(rr.String(), rr.Header().String())
}

// equalRRs reports whether a and b, both sorted, hold the same records and TTLs.
func equalRRs(a, b []dns.RR) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !dns.IsDuplicate(a[i], b[i]) || a[i].Header().Ttl != b[i].Header().Ttl {
			return false
		}
	}
	return true
}

func equalSets(a, b []rrset) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].qtype != b[i].qtype || !equalRRs(a[i].rrs, b[i].rrs) {
			return false
		}
	}
	return true
}
