package delegation

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func strs(rrs []dns.RR) string {
	var out []string
	for _, rr := range rrs {
		out = append(out, key(rr))
	}
	return strings.Join(out, "\n")
}

func TestWantRecords(t *testing.T) {
	w := zoneCut{
		zone:        "K8s.Example.",
		nameservers: []string{"ns1.k8s.example.", "ns.other.example."},
		glue: map[string][]netip.Addr{
			"ns1.k8s.example.":  {netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")},
			"ns.other.example.": {netip.MustParseAddr("192.0.2.9")}, // not below the cut: no glue
		},
		ttl: 300,
	}
	got := strs(w.records())
	for _, want := range []string{"k8s.example.\t0\tin\tns\tns1.k8s.example.", "k8s.example.\t0\tin\tns\tns.other.example.",
		"ns1.k8s.example.\t0\tin\ta\t192.0.2.1", "ns1.k8s.example.\t0\tin\taaaa\t2001:db8::1"} {
		if !strings.Contains(got, want) {
			t.Errorf("records lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "192.0.2.9") {
		t.Errorf("glue for a name outside the zone:\n%s", got)
	}
}

func rr(s string) dns.RR {
	r, err := dns.NewRR(s)
	if err != nil {
		panic(err)
	}
	return r
}

func TestPlan(t *testing.T) {
	ns1 := rr("k8s.example. 300 IN NS ns1.k8s.example.")
	a1 := rr("ns1.k8s.example. 300 IN A 192.0.2.1")
	a2 := rr("ns1.k8s.example. 60 IN A 192.0.2.2")
	tests := []struct {
		name        string
		want, owned []dns.RR
		add, remove string
	}{
		{"first write", []dns.RR{ns1, a1}, nil, strs([]dns.RR{ns1, a1}), ""},
		{"nothing to do (TTL aside)", []dns.RR{ns1, a1}, []dns.RR{ns1, rr("ns1.k8s.example. 9 IN A 192.0.2.1")}, "", ""},
		{"address moved", []dns.RR{ns1, a2}, []dns.RR{ns1, a1}, strs([]dns.RR{a2}), strs([]dns.RR{a1})},
		{"all gone", nil, []dns.RR{ns1, a1}, "", strs([]dns.RR{ns1, a1})},
	}
	for _, tc := range tests {
		add, remove := plan(tc.want, tc.owned)
		if strs(add) != tc.add || strs(remove) != tc.remove {
			t.Errorf("%s: add\n%s\nremove\n%s\nwant add\n%s\nremove\n%s", tc.name, strs(add), strs(remove), tc.add, tc.remove)
		}
	}
}

func TestRegistryRoundTrip(t *testing.T) {
	w := zoneCut{zone: "k8s.example.", nameservers: []string{"ns1.k8s.example."},
		glue: map[string][]netip.Addr{"ns1.k8s.example.": {netip.MustParseAddr("2001:db8::5")}}, ttl: 60}
	rrs := w.records()
	back := decodeRegistry("k8s.example.", encodeRegistry(rrs))
	if strs(back) != strs(rrs) {
		t.Errorf("round trip:\n%s\nwant\n%s", strs(back), strs(rrs))
	}
}

// TestRegistryHostile: a registry someone else edited names only records the
// plugin may own: NS at the zone, A/AAAA below it. Anything else is ignored,
// so the plugin never deletes the parent's own records.
func TestRegistryHostile(t *testing.T) {
	got := decodeRegistry("k8s.example.", []string{
		"example. NS a.iana-servers.net.",        // the parent's own NS
		"www.example. A 192.0.2.80",              // outside the zone
		"k8s.example. MX 10 mail.example.",       // a type never written
		"k8s.example. NS",                        // broken
		"garbage",                                //
		"k8s.example. NS ns1.k8s.example.",       // ok
		"deep.ns1.k8s.example. AAAA 2001:db8::9", // ok
	})
	want := "deep.ns1.k8s.example.\t0\tin\taaaa\t2001:db8::9\nk8s.example.\t0\tin\tns\tns1.k8s.example."
	if strs(got) != want {
		t.Errorf("decoded:\n%s\nwant\n%s", strs(got), want)
	}
}

func TestRegistryName(t *testing.T) {
	for _, tc := range []struct{ zone, parent, want string }{
		{"example.com.", "com.", "example._k8s-gateway-delegation.com."},
		{"A.b.Example.com.", "example.com.", "a.b._k8s-gateway-delegation.example.com."},
		{"com.", ".", "com._k8s-gateway-delegation."},
	} {
		if got := registryName(tc.zone, tc.parent); got != tc.want {
			t.Errorf("registryName(%s, %s) = %s, want %s", tc.zone, tc.parent, got, tc.want)
		}
	}
}

// TestCheckZonesDecodesAsItself: CheckZones refuses a nameserver whose
// record in the registry decodes, but as another record. miekg/dns's IsFqdn
// counts the backslashes before a last dot wrong after a non-ASCII octet,
// so "\205\144\\\." (its last dot escaped) passes for fully qualified, and
// reads back from the registry as "\205\144\\\..": every sync would then
// remove the record the registry lists and write it again. FuzzRegistryWritten
// found it (testdata/fuzz/FuzzRegistryWritten/escaped-final-dot-after-non-ascii).
func TestCheckZonesDecodesAsItself(t *testing.T) {
	escaped := "\xcd\x90\\\\\\."
	for _, tc := range []struct {
		ns string
		ok bool
	}{
		{"ns1.k8s.example.", true},
		{"ns.example.net.", true},
		{escaped, false},
		{"ns\\.a.k8s.example.", true}, // an escaped dot inside a label decodes as itself
		{"n s.k8s.example.", false},
	} {
		err := CheckZones([]string{"k8s.example."}, func(zone string) []dns.RR {
			return []dns.RR{&dns.NS{Hdr: hdr(zone, dns.TypeNS, 60), Ns: tc.ns}}
		})
		if (err == nil) != tc.ok {
			t.Errorf("nameserver %q: %v, want ok %v", tc.ns, err, tc.ok)
		}
	}
	// The apex and the secondary may have one name: listed once, it decodes
	// as itself (counting records refused it).
	err := CheckZones([]string{"k8s.example."}, func(zone string) []dns.RR {
		ns := &dns.NS{Hdr: hdr(zone, dns.TypeNS, 60), Ns: "ns1.k8s.example."}
		return []dns.RR{ns, dns.Copy(ns)}
	})
	if err != nil {
		t.Errorf("one nameserver twice: %v", err)
	}
}
