package index

import (
	"fmt"
	"testing"

	"github.com/miekg/dns"
)

// BenchmarkHealthFlip: a Service's health flips in an index of 10,000
// Services (each an A and an AAAA at its own name, pairs of them at a shared
// name): the republish of its records with the new claim, both names rebuilt.
func BenchmarkHealthFlip(b *testing.B) {
	ix, _ := newTestIndex(b, "example.com.")
	ix.Flush()
	rrs := func(i int) []dns.RR {
		own := fmt.Sprintf("svc-%d.ns.example.com.", i)
		shared := fmt.Sprintf("shop-%d.example.com.", i/2)
		return qtRRs(own+" 60 IN A 192.0.2.1", own+" 60 IN AAAA 2001:db8::1", shared+" 60 IN A 192.0.2.1")
	}
	for i := range 10000 {
		ix.UpdateClaim(fmt.Sprintf("Service/ns/svc-%d", i), Claim{Namespace: "ns"}, rrs(i))
	}
	// The records parsed once: the index only reads them (they are sorted
	// and canonical already).
	seven := rrs(7)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ix.UpdateClaim("Service/ns/svc-7", Claim{Namespace: "ns", Unhealthy: i%2 == 0}, seven)
	}
}
