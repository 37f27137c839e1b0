package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// Version is the catalog zone schema version this package writes (RFC 9432).
const Version = "2"

// Member is a zone listed in a catalog.
type Member struct {
	Zone  string // fully qualified
	Group string // the group property; "" for none
	// COO names the catalog this member moves to (the change-of-ownership
	// property, RFC 9432 §5.2); "" for none.
	COO string
}

// Config is what a catalog zone is built from.
type Config struct {
	Name    string // the catalog zone, fully qualified
	Serial  uint32
	TTL     uint32
	Refresh uint32
	Retry   uint32
	Expire  uint32
	Members []Member
}

// Zone is a built catalog zone. It is immutable.
type Zone struct {
	name    string
	soa     *dns.SOA
	records []dns.RR            // transfer order, without the SOA
	names   map[string][]dns.RR // owner (lower case) → its records
	// ents are the empty non-terminals: names with children but no records.
	ents map[string]bool
}

// MemberID returns the unique ID of a member zone: the hex SHA-256 of its
// canonical (lower-case) wire name, cut to 16 bytes.
func MemberID(zone string) string {
	buf := make([]byte, 256)
	n, err := dns.PackDomainName(dns.CanonicalName(zone), buf, 0, nil, false)
	if err != nil {
		n = copy(buf, dns.CanonicalName(zone))
	}
	sum := sha256.Sum256(buf[:n])
	return hex.EncodeToString(sum[:16])
}

// New builds the catalog zone of cfg. Members are listed once each, sorted
// by name; the order of cfg.Members does not matter.
func New(cfg Config) *Zone {
	name := dns.CanonicalName(cfg.Name)
	hdr := func(owner string, t uint16) dns.RR_Header {
		return dns.RR_Header{Name: owner, Rrtype: t, Class: dns.ClassINET, Ttl: cfg.TTL}
	}
	z := &Zone{name: name, names: map[string][]dns.RR{}, ents: map[string]bool{}}
	z.soa = &dns.SOA{
		Hdr: hdr(name, dns.TypeSOA), Ns: "invalid.", Mbox: "invalid.",
		Serial: cfg.Serial, Refresh: cfg.Refresh, Retry: cfg.Retry, Expire: cfg.Expire, Minttl: cfg.TTL,
	}
	add := func(rr dns.RR) {
		z.records = append(z.records, rr)
		owner := lowerASCII(rr.Header().Name)
		z.names[owner] = append(z.names[owner], rr)
	}
	z.names[name] = []dns.RR{z.soa}
	// RFC 9432 §4.2: exactly one NS record, conventionally "invalid.".
	add(&dns.NS{Hdr: hdr(name, dns.TypeNS), Ns: "invalid."})
	add(&dns.TXT{Hdr: hdr("version."+name, dns.TypeTXT), Txt: []string{Version}})

	members := slices.Clone(cfg.Members)
	slices.SortFunc(members, func(a, b Member) int { return strings.Compare(dns.CanonicalName(a.Zone), dns.CanonicalName(b.Zone)) })
	zones := "zones." + name
	listed := map[string]bool{} // by ID: one zone may be written two ways (a\b and ab)
	for _, m := range members {
		id := MemberID(m.Zone) + "." + zones
		if listed[id] {
			continue
		}
		listed[id] = true
		add(&dns.PTR{Hdr: hdr(id, dns.TypePTR), Ptr: dns.CanonicalName(m.Zone)})
		if m.Group != "" {
			add(&dns.TXT{Hdr: hdr("group."+id, dns.TypeTXT), Txt: []string{m.Group}})
		}
		if m.COO != "" {
			add(&dns.PTR{Hdr: hdr("coo."+id, dns.TypePTR), Ptr: dns.CanonicalName(m.COO)})
		}
	}
	// Every name between an owner and the apex that has no records of its
	// own is an empty non-terminal: NODATA, not NXDOMAIN (RFC 8020).
	for owner := range z.names {
		for n := owner; n != name; {
			i, end := dns.NextLabel(n, 0)
			if end {
				break
			}
			n = n[i:]
			if _, ok := z.names[n]; !ok {
				z.ents[n] = true
			}
		}
	}
	return z
}

// Name returns the catalog zone's name.
func (z *Zone) Name() string { return z.name }

// SOA returns the catalog's SOA record.
func (z *Zone) SOA() *dns.SOA { return z.soa }

// Records returns every record of the zone but the SOA, in transfer order:
// the apex NS, the version property, then the members and their properties.
// The slice is shared: callers must not change it.
func (z *Zone) Records() []dns.RR { return z.records }
