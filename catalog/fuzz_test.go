package catalog

import (
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// FuzzCatalog builds catalogs of hostile names and properties (a catalog
// name, a group, a coo, members one a line). Check refuses it, or the
// catalog is servable: at most three records per member beside the NS and
// the version, each packs into a message, each member once with an ID of
// its own, every owner answered by Lookup, and the transfer holds every
// record between two SOAs.
func FuzzCatalog(f *testing.F) {
	f.Add("catalog.invalid.", "blue", "", "example.com.\nexample.org.")
	f.Add("catalog.invalid", "", "new.invalid.", "Example.COM\nexample.com.\n\\000.example.")
	f.Add("a.b.", `"quoted\" \\ group`, "a.b.", "x.")
	f.Add(strings.Repeat("a.", 104), strings.Repeat("g", 255), "c.", "m.")
	f.Fuzz(func(t *testing.T, name, group, coo, members string) {
		lines := strings.Split(members, "\n")
		if len(lines) > 64 {
			lines = lines[:64]
		}
		cfg := Config{Name: name, Serial: 1, TTL: 60, Refresh: 60, Retry: 60, Expire: 600}
		for _, l := range lines {
			cfg.Members = append(cfg.Members, Member{Zone: l, Group: group, COO: coo})
		}
		if cfg.Check() != nil {
			return
		}
		z := New(cfg)
		recs := z.Records()
		if max := 2 + 3*len(cfg.Members); len(recs) > max {
			t.Fatalf("%d records of %d members, at most %d", len(recs), len(cfg.Members), max)
		}
		ids, zones := map[string]bool{}, map[string]bool{}
		for _, rr := range append([]dns.RR{z.SOA()}, recs...) {
			m := new(dns.Msg)
			m.Answer = []dns.RR{rr}
			if _, err := m.Pack(); err != nil {
				t.Fatalf("record %q does not pack: %v", rr, err)
			}
			h := rr.Header()
			if answer, _, res := z.Lookup(asciiUpper(h.Name), h.Rrtype); res != Success || !slices.ContainsFunc(answer, func(a dns.RR) bool { return dns.IsDuplicate(a, rr) }) {
				t.Fatalf("Lookup(%s, %s): %v %v, want the record %q", h.Name, dns.TypeToString[h.Rrtype], res, answer, rr)
			}
			if p, ok := rr.(*dns.PTR); ok && !strings.HasPrefix(h.Name, "coo.") {
				if ids[h.Name] || zones[p.Ptr] {
					t.Fatalf("member %s (%s) listed twice", p.Ptr, h.Name)
				}
				ids[h.Name], zones[p.Ptr] = true, true
			}
		}
		var got int
		for batch := range z.Transfer(0) {
			got += len(batch)
		}
		if want := len(recs) + 2; got != want {
			t.Fatalf("the transfer holds %d records, want %d", got, want)
		}
	})
}

// asciiUpper upper-cases the ASCII letters of s, as a client may ask.
func asciiUpper(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		return r
	}, s)
}
