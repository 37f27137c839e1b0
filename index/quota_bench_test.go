package index

import (
	"fmt"
	"net"
	"testing"

	"github.com/miekg/dns"
)

// quotaBenchRR is the one A record of object i.
func quotaBenchRR(i int) []dns.RR {
	return []dns.RR{&dns.A{
		Hdr: dns.RR_Header{Name: fmt.Sprintf("h%d.example.com.", i), Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
		A:   net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)).To4(),
	}}
}

// BenchmarkIndexSyncQuota is the initial sync of 10,000 objects of one
// name from 100 namespaces (or one), without quotas, with quotas that
// every namespace stays within, and with one that each is over twice (half
// of the objects refused, in the order of creation, at the Flush).
func BenchmarkIndexSyncQuota(b *testing.B) {
	const objects = 10_000
	for _, c := range []struct {
		name    string
		tenants int
		quota   func(string) int
	}{
		{"off", 100, nil},
		{"within", 100, quotaOf(objects, nil)},
		{"over", 100, quotaOf(objects/100/2, nil)},
		{"one_tenant_over", 1, quotaOf(objects/2, nil)},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, NS: indexNS, Quota: c.quota})
				b.StartTimer()
				for i := range objects {
					ns := fmt.Sprintf("ns%d", i%c.tenants)
					// Created in the reverse order of the events: the
					// informers list by name, not by age.
					ix.UpdateClaim(fmt.Sprintf("Service/%s/o%d", ns, i), Claim{Namespace: ns, Created: int64(objects - i)}, quotaBenchRR(i))
				}
				ix.Flush()
				b.StopTimer()
				ix.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*objects), "ns/object")
		})
	}
}

// BenchmarkIndexUpdateQuota changes one object of a namespace of n
// objects that is over its quota (half of them refused): the address of
// the newest (refused) or of the oldest (admitted), each O(log n), or the
// number of records of the oldest, which admits all the others again in
// order, O(n) (one of them goes out and comes back in turn).
func BenchmarkIndexUpdateQuota(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		for _, which := range []string{"newest", "oldest", "oldest_grows"} {
			b.Run(fmt.Sprintf("%d_objects_%s", n, which), func(b *testing.B) {
				ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, Quota: quotaOf(n/2, nil)})
				defer ix.Close()
				for i := range n {
					ix.UpdateClaim(fmt.Sprintf("Service/ns/o%d", i), Claim{Namespace: "ns", Created: int64(i)}, quotaBenchRR(i))
				}
				ix.Flush()
				i := 0
				if which == "newest" {
					i = n - 1
				}
				key, claim := fmt.Sprintf("Service/ns/o%d", i), Claim{Namespace: "ns", Created: int64(i)}
				a, other := *quotaBenchRR(i)[0].(*dns.A), *quotaBenchRR(i)[0].(*dns.A)
				other.A = net.IPv4(192, 0, 2, 1).To4()
				b.ReportAllocs()
				b.ResetTimer()
				j := 0
				for b.Loop() {
					// The index may rewrite what it is given: copies.
					x, y := a, other
					rrs := []dns.RR{&x}
					switch {
					case which == "oldest_grows" && j%2 == 1:
						rrs = append(rrs, &y)
					case which != "oldest_grows" && j%2 == 1:
						rrs = []dns.RR{&y}
					}
					ix.UpdateClaim(key, claim, rrs)
					j++
				}
			})
		}
	}
}
