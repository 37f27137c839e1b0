package index

import (
	"fmt"
	"net"
	"runtime"
	"slices"
	"testing"

	"github.com/miekg/dns"
)

// BenchmarkIndexSync builds an index from nothing, as the first sync does:
// objects of one name each, or of 100 names each (a big Ingress), then the
// first Flush. The records are made as the index takes them, as the
// plugin's sources make them, so heap-bytes/name is all the index keeps
// per name, its records included.
func BenchmarkIndexSync(b *testing.B) {
	for _, c := range []struct {
		names, perObject int
	}{
		{10_000, 1},
		{100_000, 1},
		{100_000, 100},
		{1_000_000, 100},
	} {
		type object struct {
			key   string
			names []string
		}
		objects := make([]object, 0, c.names/c.perObject)
		for o := range c.names / c.perObject {
			names := make([]string, c.perObject)
			for h := range names {
				names[h] = fmt.Sprintf("h%d.o%d.example.com.", h, o)
			}
			objects = append(objects, object{fmt.Sprintf("Ingress/ns/o%d", o), names})
		}
		b.Run(fmt.Sprintf("%d_names_%d_per_object", c.names, c.perObject), func(b *testing.B) {
			var heap uint64
			for b.Loop() {
				var before, after runtime.MemStats
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&before)
				ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA})
				b.StartTimer()
				i := 0
				for o, obj := range objects {
					rrs := make([]dns.RR, len(obj.names))
					for h, name := range obj.names {
						rrs[h] = &dns.A{
							Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
							A:   net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)).To4(),
						}
						i++
					}
					// Claimed, as the plugin's objects always are.
					ix.UpdateClaim(obj.key, Claim{Namespace: "ns", Created: int64(o)}, rrs)
				}
				ix.Flush()
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&after)
				if heap == 0 {
					// The first round only: later ones can find the previous
					// index not yet collected.
					heap = after.HeapAlloc - before.HeapAlloc
				}
				runtime.KeepAlive(ix)
				ix.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*c.names), "ns/name")
			b.ReportMetric(float64(heap)/float64(c.names), "heap-bytes/name")
		})
	}
}

// BenchmarkIndexSyncPolicy is the initial sync of 10,000 names from 100
// namespaces under each ownership policy; every tenth name is claimed a second
// time from another namespace, so that first and delegated reject claims.
func BenchmarkIndexSyncPolicy(b *testing.B) {
	const names, tenants = 10_000, 100
	type object struct {
		key   string
		claim Claim
		rrs   []dns.RR
	}
	var objects []object
	for i := range names {
		rr := &dns.A{
			Hdr: dns.RR_Header{Name: fmt.Sprintf("h%d.example.com.", i), Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
			A:   net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)).To4(),
		}
		ns := fmt.Sprintf("ns%d", i%tenants)
		objects = append(objects, object{"Ingress/" + ns + "/o" + fmt.Sprint(i), Claim{Namespace: ns, Created: int64(i)}, []dns.RR{rr}})
		if i%10 == 0 {
			ns := fmt.Sprintf("ns%d", (i+1)%tenants)
			objects = append(objects, object{"Service/" + ns + "/o" + fmt.Sprint(i), Claim{Namespace: ns, Created: int64(i + 1)}, []dns.RR{dns.Copy(rr)}})
		}
	}
	domains := map[string][]string{}
	for t := range tenants {
		domains[fmt.Sprintf("ns%d", t)] = []string{"example.com."}
	}
	for _, p := range []Policy{Union, First, Delegated} {
		b.Run(p.String(), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, NS: indexNS, Policy: p, Domains: domains})
				b.StartTimer()
				for _, o := range objects {
					ix.UpdateClaim(o.key, o.claim, slices.Clone(o.rrs))
				}
				ix.Flush()
				b.StopTimer()
				ix.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*names), "ns/name")
		})
	}
}

// BenchmarkIndexUpdateAt changes the address of one name among many, as a
// status update of one object does: the cost of an update and its publication.
func BenchmarkIndexUpdateAt(b *testing.B) {
	for _, names := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("%d_names", names), func(b *testing.B) {
			ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA})
			defer ix.Close()
			a := func(name string, i int) []dns.RR {
				return []dns.RR{&dns.A{
					Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
					A:   net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)).To4(),
				}}
			}
			for i := range names {
				ix.Update(fmt.Sprintf("Ingress/ns/o%d", i), a(fmt.Sprintf("h%d.o%d.example.com.", i, i%100), i))
			}
			ix.Flush()
			rrs := [2][]dns.RR{a("h7.o7.example.com.", 1), a("h7.o7.example.com.", 2)}
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				ix.Update("Ingress/ns/o7", rrs[i%2])
				i++
			}
		})
	}
}
