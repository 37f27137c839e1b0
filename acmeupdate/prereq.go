package acmeupdate

import (
	"slices"

	"github.com/miekg/dns"
)

// Zone is the data prerequisites are checked against: the zone as this
// replica answers it from the index, without wildcard expansion.
type Zone interface {
	// Records returns the records at exactly name of type t, or of every
	// type when t is dns.TypeANY.
	Records(name string, t uint16) []dns.RR
}

// ZoneFunc adapts a function to Zone.
type ZoneFunc func(name string, t uint16) []dns.RR

// Records implements Zone.
func (f ZoneFunc) Records(name string, t uint16) []dns.RR { return f(name, t) }

// rrsetKey names one RRset.
type rrsetKey struct {
	name  string
	rtype uint16
}

// checkPrereqs checks the prerequisite section (RFC 2136 §3.2) against z.
func checkPrereqs(prereqs []dns.RR, zone string, z Zone) *failure {
	want := map[rrsetKey][]string{} // §3.2.3: the value-dependent RRsets
	var order []rrsetKey
	for _, rr := range prereqs {
		h := rr.Header()
		name := canonical(h.Name)
		if h.Ttl != 0 {
			return fail(dns.RcodeFormatError, ReasonFormat, "prerequisite with a TTL at "+name)
		}
		if !dns.IsSubDomain(zone, name) {
			return fail(dns.RcodeNotZone, ReasonNotZone, "prerequisite "+name+" outside zone "+zone)
		}
		switch h.Class {
		case dns.ClassANY, dns.ClassNONE:
			if h.Rdlength != 0 {
				return fail(dns.RcodeFormatError, ReasonFormat, "prerequisite with data at "+name)
			}
			if f := existence(name, h.Rrtype, h.Class == dns.ClassANY, z); f != nil {
				return f
			}
		case dns.ClassINET:
			if isMeta(h.Rrtype) || h.Rdlength == 0 {
				return fail(dns.RcodeFormatError, ReasonFormat, "malformed value-dependent prerequisite at "+name)
			}
			k := rrsetKey{name, h.Rrtype}
			if _, ok := want[k]; !ok {
				order = append(order, k)
			}
			want[k] = append(want[k], rdata(rr))
		default:
			return fail(dns.RcodeFormatError, ReasonFormat, "prerequisite class "+dns.Class(h.Class).String())
		}
	}
	for _, k := range order {
		var have []string
		for _, rr := range z.Records(k.name, k.rtype) {
			have = append(have, rdata(rr))
		}
		if !sameSet(want[k], have) {
			return fail(dns.RcodeNXRrset, ReasonPrereq, "RRset "+k.name+" "+dns.Type(k.rtype).String()+" differs")
		}
	}
	return nil
}

// existence checks a prerequisite of §2.4.1 to §2.4.5 but the
// value-dependent one: exists says class ANY (must exist) or NONE (must not).
func existence(name string, t uint16, exists bool, z Zone) *failure {
	found := len(z.Records(name, t)) > 0
	if found == exists {
		return nil
	}
	what := "name " + name
	if t != dns.TypeANY {
		what = "RRset " + name + " " + dns.Type(t).String()
	}
	switch {
	case t == dns.TypeANY && exists:
		return fail(dns.RcodeNameError, ReasonPrereq, what+" is not in use")
	case t == dns.TypeANY:
		return fail(dns.RcodeYXDomain, ReasonPrereq, what+" is in use")
	case exists:
		return fail(dns.RcodeNXRrset, ReasonPrereq, what+" does not exist")
	}
	return fail(dns.RcodeYXRrset, ReasonPrereq, what+" exists")
}

// rdata returns the presentation of an RR's data, lower-cased names aside.
func rdata(rr dns.RR) string {
	s := rr.String()
	return s[len(rr.Header().String()):]
}

// sameSet reports whether a and b hold the same strings, duplicates ignored.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
