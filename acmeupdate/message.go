package acmeupdate

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// ChallengeLabel is the first label of every name an update may change (RFC 8555 §8.4).
const ChallengeLabel = "_acme-challenge"

// Limits bound what one update may do.
type Limits struct {
	MaxTTL     uint32 // largest TTL of an added record
	MaxTXT     int    // largest TXT value, in bytes (all its strings)
	MaxRecords int    // most update RRs in one message
	MaxPrereqs int    // most prerequisite RRs in one message
	MaxValues  int    // most TXT values at one name
	MaxMessage int    // largest message, in bytes
}

// DefaultLimits are generous for ACME: one value per challenge (two for a
// name and its wildcard), 43 bytes each.
var DefaultLimits = Limits{MaxTTL: 3600, MaxTXT: 255, MaxRecords: 16, MaxPrereqs: 16, MaxValues: 16, MaxMessage: 4096}

// opKind is what one update RR does (RFC 2136 §2.5).
type opKind int

const (
	opAdd       opKind = iota // §2.5.1 add to an RRset
	opDelete                  // §2.5.4 delete an RR from an RRset
	opDeleteSet               // §2.5.2 delete an RRset
)

// op is one update RR within the scope.
type op struct {
	kind  opKind
	name  string // canonical owner name, _acme-challenge.<base>
	value string // the TXT value (add, delete)
	ttl   uint32 // add
}

// base returns <name> of _acme-challenge.<name>.
func (o op) base() string { return o.name[len(ChallengeLabel)+1:] }

// failure is an rcode and the reason logged and counted for it.
type failure struct {
	rcode  int
	reason string
	detail string
}

func fail(rcode int, reason, detail string) *failure {
	return &failure{rcode: rcode, reason: reason, detail: detail}
}

// zoneOf checks the zone section (§3.1.1) and returns the zone named there,
// canonical, which must be one of zones.
func zoneOf(r *dns.Msg, zones []string) (string, *failure) {
	if len(r.Question) != 1 || r.Question[0].Qtype != dns.TypeSOA {
		return "", fail(dns.RcodeFormatError, ReasonFormat, "the zone section must hold one SOA record")
	}
	if c := r.Question[0].Qclass; c != dns.ClassINET {
		return "", fail(dns.RcodeNotAuth, ReasonNotAuth, "zone class "+dns.Class(c).String())
	}
	zone := canonical(r.Question[0].Name)
	if !slices.Contains(zones, zone) {
		return "", fail(dns.RcodeNotAuth, ReasonNotAuth, "not authoritative for "+zone)
	}
	return zone, nil
}

// isMeta reports whether t is a QTYPE or meta type, not allowed in data.
func isMeta(t uint16) bool {
	switch t {
	case dns.TypeANY, dns.TypeAXFR, dns.TypeIXFR, dns.TypeMAILA, dns.TypeMAILB, dns.TypeOPT, dns.TypeTSIG, dns.TypeTKEY:
		return true
	}
	return false
}

// prescan checks the update section (§3.4.1).
func prescan(updates []dns.RR, zone string) *failure {
	for _, rr := range updates {
		h := rr.Header()
		if !dns.IsSubDomain(zone, canonical(h.Name)) {
			return fail(dns.RcodeNotZone, ReasonNotZone, h.Name+" is outside zone "+zone)
		}
		switch h.Class {
		case dns.ClassINET:
			if isMeta(h.Rrtype) {
				return fail(dns.RcodeFormatError, ReasonFormat, "add of meta type "+dns.Type(h.Rrtype).String())
			}
		case dns.ClassANY:
			if h.Ttl != 0 || h.Rdlength != 0 || h.Rrtype == dns.TypeAXFR || h.Rrtype == dns.TypeMAILA || h.Rrtype == dns.TypeMAILB {
				return fail(dns.RcodeFormatError, ReasonFormat, "malformed RRset delete at "+h.Name)
			}
		case dns.ClassNONE:
			if h.Ttl != 0 || isMeta(h.Rrtype) {
				return fail(dns.RcodeFormatError, ReasonFormat, "malformed RR delete at "+h.Name)
			}
		default:
			return fail(dns.RcodeFormatError, ReasonFormat, "update class "+dns.Class(h.Class).String())
		}
	}
	return nil
}

// scope turns the update section, prescanned, into ops, refusing anything
// but TXT records at _acme-challenge names (§3.3, the plugin's policy).
func scope(updates []dns.RR, zone string, lim Limits) ([]op, *failure) {
	if len(updates) > lim.MaxRecords {
		return nil, fail(dns.RcodeRefused, ReasonSize, "too many update records")
	}
	ops := make([]op, 0, len(updates))
	for _, rr := range updates {
		h := rr.Header()
		name := canonical(h.Name)
		if !challengeName(name, zone) {
			return nil, fail(dns.RcodeRefused, ReasonScope, "only "+ChallengeLabel+".<name> may be updated, not "+name)
		}
		if h.Rrtype != dns.TypeTXT {
			return nil, fail(dns.RcodeRefused, ReasonScope, "only TXT records may be updated, not "+dns.Type(h.Rrtype).String()+" at "+name)
		}
		o := op{name: name}
		switch h.Class {
		case dns.ClassANY:
			o.kind = opDeleteSet
		case dns.ClassNONE, dns.ClassINET:
			txt, ok := rr.(*dns.TXT)
			if !ok || h.Rdlength == 0 {
				return nil, fail(dns.RcodeFormatError, ReasonFormat, "TXT without data at "+name)
			}
			v, why := txtValue(txt, lim.MaxTXT)
			if why != "" {
				return nil, fail(dns.RcodeRefused, ReasonScope, why+" at "+name)
			}
			o.value, o.kind = v, opDelete
			if h.Class == dns.ClassINET {
				if h.Ttl > lim.MaxTTL {
					return nil, fail(dns.RcodeRefused, ReasonScope, "TTL above the limit at "+name)
				}
				o.kind, o.ttl = opAdd, h.Ttl
			}
		}
		ops = append(ops, o)
	}
	return ops, nil
}

// challengeName reports whether name is _acme-challenge.<name> with <name>
// at or below zone and free of wildcard labels.
func challengeName(name, zone string) bool {
	rest, ok := strings.CutPrefix(name, ChallengeLabel+".")
	if !ok || !dns.IsSubDomain(zone, rest) {
		return false
	}
	for _, l := range dns.SplitDomainName(rest) {
		if l == "*" || l == ChallengeLabel {
			return false
		}
	}
	return true
}

// txtValue returns the value of a TXT record (its strings joined) when it is
// printable ASCII without quotes or backslashes, as ACME values are, and at
// most max bytes long; else why not.
func txtValue(t *dns.TXT, max int) (string, string) {
	v := strings.Join(t.Txt, "")
	if len(v) == 0 || len(v) > max {
		return "", "TXT value empty or too long"
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", "TXT value not printable ASCII"
		}
	}
	return v, ""
}

// Error implements error, so that a failure crosses Store.Edit.
func (f *failure) Error() string { return f.reason + ": " + f.detail }

// canonical returns name fully qualified and lower-cased with DNS case
// folding: ASCII letters only (RFC 4343), never Unicode's rules.
func canonical(name string) string {
	b := []byte(dns.Fqdn(name))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// sameName reports whether a and b are one name under DNS case folding.
func sameName(a, b string) bool { return canonical(a) == canonical(b) }
