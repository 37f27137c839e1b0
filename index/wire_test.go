package index

import (
	"slices"
	"testing"

	"github.com/miekg/dns"
)

// TestPackRecords: the records of an object come back from their wire form
// as they went in, names in order, and a record without a wire form is left
// out with nothing else lost.
func TestPackRecords(t *testing.T) {
	rrs := qtRRs(
		"a.example.com. 60 IN A 192.0.2.1",
		"a.example.com. 60 IN AAAA 2001:db8::1",
		"b.example.com. 300 IN CNAME target.example.net.",
		`c.example.com. 60 IN TXT "x y"`,
		"_h._tcp.d.example.com. 60 IN SRV 0 0 80 a.example.com.",
	)
	bad := &dns.MX{Hdr: dns.RR_Header{Name: "c.example.com.", Rrtype: dns.TypeMX, Class: dns.ClassINET, Ttl: 60}, Mx: "bad..name."}
	in := append(slices.Clone(rrs), bad)
	sortRRs(in)
	wire := packRecords(in)
	var got, want []string
	for _, rr := range unpackRecords(wire) {
		got = append(got, rr.String())
	}
	for _, rr := range rrs {
		want = append(want, rr.String())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("unpacked\n%q\nwant\n%q", got, want)
	}
	var names []string
	forWireNames(wire, func(name string) { names = append(names, name) })
	if want := []string{"_h._tcp.d.example.com.", "a.example.com.", "b.example.com.", "c.example.com."}; !slices.Equal(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
}

// TestPackRecordsCanonicalNames: an owner name in an unusual presentation
// form becomes the form its wire form gives back, so that the name the
// index files the record under is the name it finds again.
func TestPackRecordsCanonicalNames(t *testing.T) {
	rr := &dns.A{Hdr: dns.RR_Header{Name: `\097b.example.com.`, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: []byte{192, 0, 2, 1}}
	wire := packRecords([]dns.RR{rr})
	if rr.Hdr.Name != "ab.example.com." {
		t.Errorf("owner name %q, want ab.example.com.", rr.Hdr.Name)
	}
	if got := recordsAt(wire, "ab.example.com."); len(got) != 1 {
		t.Errorf("records at ab.example.com.: %v", got)
	}
	space := &dns.A{Hdr: dns.RR_Header{Name: `a\ b.example.com.`, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: []byte{192, 0, 2, 1}}
	wire = packRecords([]dns.RR{space})
	var names []string
	forWireNames(wire, func(name string) { names = append(names, name) })
	if len(names) != 1 || names[0] != space.Hdr.Name || len(recordsAt(wire, space.Hdr.Name)) != 1 {
		t.Errorf("escaped name: %q, record filed as %q", names, space.Hdr.Name)
	}
}
