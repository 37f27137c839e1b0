package delegation

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// FuzzRegistry decodes hostile registry TXT strings, as a parent someone
// else edits may hold them (one a line). The records decoded are at most
// one a string, each NS at the zone or A/AAAA at or below it, each packs
// into an UPDATE (so that removing it cannot fail), and they decode again
// from their own encoding, which packs as the TXT record the plugin writes.
// A plan against them removes only records of the registry.
func FuzzRegistry(f *testing.F) {
	f.Add("k8s.example.", "k8s.example. NS ns1.k8s.example.\nns1.k8s.example. A 192.0.2.1")
	f.Add("k8s.example.", "example. NS a.iana-servers.net.\nwww.example. A 192.0.2.80\nk8s.example. MX 10 mail.example.\ngarbage")
	f.Add("K8s.Example", "deep.ns1.k8s.example. AAAA 2001:db8::9\nk8s.example. NS \\128.k8s.example.\n$GENERATE A x")
	f.Fuzz(func(t *testing.T, zone, registry string) {
		zone = dns.CanonicalName(zone)
		if _, ok := dns.IsDomainName(zone); !ok || !printableASCII(zone) {
			return // the zones of a block
		}
		if CheckZones([]string{zone}, func(string) []dns.RR { return nil }) != nil {
			return // no parent is kept for it (the root zone, say): no registry is read
		}
		txt := strings.Split(registry, "\n")
		if len(txt) > 256 {
			txt = txt[:256]
		}
		// As the parent answers them: TXT strings off the wire, escaped.
		if txt = offTheWire(txt); txt == nil {
			return
		}
		rrs := decodeRegistry(zone, txt)
		if len(rrs) > len(txt) {
			t.Fatalf("%d records from %d strings", len(rrs), len(txt))
		}
		for _, rr := range rrs {
			h := rr.Header()
			switch {
			case h.Rrtype == dns.TypeNS && dns.CanonicalName(h.Name) == zone:
			case (h.Rrtype == dns.TypeA || h.Rrtype == dns.TypeAAAA) && dns.IsSubDomain(zone, dns.CanonicalName(h.Name)):
			default:
				t.Fatalf("decoded %q, which the plugin never owns in zone %s", rr, zone)
			}
			m := new(dns.Msg)
			m.SetUpdate("example.")
			m.Remove([]dns.RR{dns.Copy(rr)}) // Remove sets the class of what it is given
			if _, err := m.Pack(); err != nil {
				t.Fatalf("decoded %q, which does not pack: %v", rr, err)
			}
		}
		enc := encodeRegistry(rrs)
		m := new(dns.Msg)
		m.SetUpdate("example.")
		m.Insert([]dns.RR{&dns.TXT{Hdr: hdr(registryName(zone, "."), dns.TypeTXT, 60), Txt: enc}})
		if _, err := m.Pack(); err != nil && len(enc) > 0 {
			t.Fatalf("the registry of %q does not pack: %v", enc, err)
		}
		if back := decodeRegistry(zone, enc); strs(back) != strs(rrs) {
			t.Fatalf("decoded again from %q:\n%s\nwant\n%s", enc, strs(back), strs(rrs))
		}
		_, remove := plan(nil, rrs)
		if strs(remove) != strs(rrs) {
			t.Fatalf("a plan to hold nothing removes\n%s\nnot\n%s", strs(remove), strs(rrs))
		}
	})
}

// FuzzRegistryWritten: for a zone and a nameserver name that CheckZones
// admits, the delegation the plugin writes (NS and glue) and its registry
// pack into the UPDATE, and the registry decodes back to those records.
func FuzzRegistryWritten(f *testing.F) {
	f.Add("k8s.example.", "ns1.k8s.example.", []byte{192, 0, 2, 1})
	f.Add("k8s.example.", strings.Repeat("n.", 110)+"k8s.example.", []byte{32, 1, 13, 184, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Add("a.", "\\.\\\"\\128.a.", []byte{255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, zone, ns string, addr []byte) {
		zone, ns = dns.CanonicalName(zone), dns.CanonicalName(ns)
		a, ok := netip.AddrFromSlice(addr)
		if _, okz := dns.IsDomainName(zone); !okz || !ok {
			return
		}
		if _, okn := dns.IsDomainName(ns); !okn || !dns.IsFqdn(ns) || !dns.IsFqdn(zone) {
			return
		}
		nsRRs := func(string) []dns.RR { return []dns.RR{&dns.NS{Hdr: hdr(zone, dns.TypeNS, 60), Ns: ns}} }
		if CheckZones([]string{zone}, nsRRs) != nil {
			return
		}
		w := zoneCut{zone: zone, nameservers: []string{ns}, glue: map[string][]netip.Addr{ns: {a.Unmap()}}, ttl: 60}
		rrs := w.records()
		m := new(dns.Msg)
		m.SetUpdate("example.")
		m.Insert(rrs)
		m.Insert([]dns.RR{&dns.TXT{Hdr: hdr(registryName(zone, "."), dns.TypeTXT, 60), Txt: encodeRegistry(rrs)}})
		if _, err := m.Pack(); err != nil {
			t.Fatalf("the delegation of %s by %s (%s) does not pack: %v", zone, ns, a, err)
		}
		if back := decodeRegistry(zone, encodeRegistry(rrs)); strs(back) != strs(rrs) {
			t.Fatalf("the registry decodes to\n%s\nwant\n%s", strs(back), strs(rrs))
		}
	})
}

// printableASCII reports whether s holds printable ASCII only.
func printableASCII(s string) bool {
	for i := range len(s) {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// offTheWire returns the strings of a TXT record holding txt as a DNS reply
// carries it, presented as miekg/dns presents them; nil when they do not
// fit in one.
func offTheWire(txt []string) []string {
	m := new(dns.Msg)
	m.Answer = []dns.RR{&dns.TXT{Hdr: hdr("r.", dns.TypeTXT, 0), Txt: txt}}
	wire, err := m.Pack()
	if err != nil {
		return nil
	}
	var back dns.Msg
	if back.Unpack(wire) != nil || len(back.Answer) != 1 {
		return nil
	}
	return back.Answer[0].(*dns.TXT).Txt
}
