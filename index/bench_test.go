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
// first Flush. It reports the cost per name and the heap the index adds to
// the records themselves.
func BenchmarkIndexSync(b *testing.B) {
	for _, c := range []struct {
		names, perObject int
	}{
		{10_000, 1},
		{100_000, 1},
		{100_000, 100},
	} {
		objects := make([][]dns.RR, 0, c.names/c.perObject)
		for o := range c.names / c.perObject {
			rrs := make([]dns.RR, c.perObject)
			for h := range rrs {
				i := o*c.perObject + h
				rrs[h] = &dns.A{
					Hdr: dns.RR_Header{Name: fmt.Sprintf("h%d.o%d.example.com.", h, o), Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
					A:   net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)).To4(),
				}
			}
			objects = append(objects, rrs)
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
				for o, rrs := range objects {
					ix.Update(fmt.Sprintf("Ingress/ns/o%d", o), slices.Clone(rrs))
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
