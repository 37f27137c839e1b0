package index

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/miekg/dns"
)

func TestOwnersBelow(t *testing.T) {
	ix := New(Config{Zones: []string{"example.com."}, SOA: func(zone string, serial uint32) *dns.SOA {
		return &dns.SOA{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET}, Ns: "ns." + zone, Mbox: "h." + zone, Serial: serial}
	}, Policy: First})
	rr := func(s string) []dns.RR {
		r, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		return []dns.RR{r}
	}
	ix.UpdateClaim("Service/team-a/www", Claim{Namespace: "team-a", Created: 1}, rr("www.team-a.example.com. 60 IN A 192.0.2.1"))
	ix.UpdateClaim("Service/team-b/www", Claim{Namespace: "team-b", Created: 2}, rr("www.team-a.example.com. 60 IN A 192.0.2.2"))
	ix.UpdateClaim("Service/team-b/b", Claim{Namespace: "team-b", Created: 2}, rr("b.example.com. 60 IN A 192.0.2.3"))
	ix.Flush()
	cases := map[string][]string{
		"team-a.example.com.":     {"team-a"}, // team-b's claim below is rejected
		"www.team-a.example.com.": {"team-a"},
		"example.com.":            {"team-a", "team-b"},
		"c.example.com.":          nil,
	}
	for name, want := range cases {
		if got := ix.OwnersBelow(name); !slices.Equal(got, want) {
			t.Errorf("OwnersBelow(%s) = %q, want %q", name, got, want)
		}
	}
}

// ownersWalk is OwnersBelow by a walk over every object, as it was made
// before the counts below each name.
func ownersWalk(ix *Index, name string) []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var out []string
	ix.objects.each(func(id objectID, wire []byte) {
		namespace := ix.objects.claim(id).Namespace
		forWireNames(wire, func(n string) {
			if dns.IsSubDomain(name, n) && !slices.Contains(out, namespace) && !ix.rules.rejected(n, ix.objects.key(id)) {
				out = append(out, namespace)
			}
		})
	})
	slices.Sort(out)
	return out
}

// BenchmarkOwnersBelow: an update's ownership check at 100,000 objects of
// one record each, 2,000 per namespace: at a namespace's name (2,000
// names below it) and at the zone apex (every name below it).
func BenchmarkOwnersBelow(b *testing.B) {
	ix := New(Config{Zones: []string{"example.com."}, SOA: func(zone string, serial uint32) *dns.SOA {
		return &dns.SOA{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET}, Ns: "ns." + zone, Mbox: "h." + zone, Serial: serial}
	}, Policy: First})
	for i := range 100_000 {
		name := fmt.Sprintf("n%d.team-%d.example.com.", i, i%50)
		rr, _ := dns.NewRR(name + " 60 IN A 192.0.2.1")
		ix.UpdateClaim(fmt.Sprintf("Service/team-%d/s%d", i%50, i), Claim{Namespace: fmt.Sprintf("team-%d", i%50), Created: int64(i)}, []dns.RR{rr})
	}
	ix.Flush()
	for _, c := range []struct {
		name   string
		owners int
	}{{"team-7.example.com.", 1}, {"example.com.", 50}} {
		b.Run(c.name, func(b *testing.B) {
			// CPU time of this thread as well (see BenchmarkSteeredLookup).
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			start, n := threadCPU(), 0
			for ; b.Loop(); n++ {
				if got := ix.OwnersBelow(c.name); len(got) != c.owners {
					b.Fatal(got)
				}
			}
			b.ReportMetric(float64(threadCPU()-start)/float64(n), "cpu-ns/op")
		})
	}
}
