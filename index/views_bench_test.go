package index

import (
	"fmt"
	"net"
	"runtime"
	"testing"

	"github.com/miekg/dns"
)

// BenchmarkViewsSync is the initial sync of 1 and 4 indexes of one zone, as
// the views of one cluster build them: objects of a LoadBalancer Service's
// shape (an A and an SRV name each), every view with its own copy of the
// records, and one key string per object, as the watch layer hands them
// over; the indexes share one Shared, as the views of one cluster do. The
// views alternate between a private and a public address, as an include
// and an exclude filter keep them. heap-bytes/object is what the indexes
// keep after a collection, alloc-bytes/object what the sync allocated.
func BenchmarkViewsSync(b *testing.B) {
	for _, objects := range []int{5_000, 100_000} {
		for _, views := range []int{1, 4} {
			b.Run(fmt.Sprintf("%d_objects_%d_views", objects, views), func(b *testing.B) {
				var heap, alloc uint64
				for b.Loop() {
					var before, after runtime.MemStats
					b.StopTimer()
					runtime.GC()
					runtime.ReadMemStats(&before)
					b.StartTimer()
					ixs := syncViews(objects, views)
					b.StopTimer()
					runtime.ReadMemStats(&after)
					a := after.TotalAlloc - before.TotalAlloc
					runtime.GC()
					runtime.ReadMemStats(&after)
					if heap == 0 {
						heap, alloc = after.HeapAlloc-before.HeapAlloc, a
					}
					runtime.KeepAlive(ixs)
					for _, ix := range ixs {
						ix.Close()
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(heap)/float64(objects), "heap-bytes/object")
				b.ReportMetric(float64(alloc)/float64(objects), "alloc-bytes/object")
			})
		}
	}
}

// syncViews returns views indexes of one zone, which share one Shared,
// after the initial sync of objects Services (viewRecords).
func syncViews(objects, views int) []*Index {
	ixs := make([]*Index, views)
	sh := newShared()
	for v := range ixs {
		ixs[v] = New(Config{Zones: []string{"example.com."}, SOA: indexSOA, Shared: sh})
	}
	for o := range objects {
		key := fmt.Sprintf("Service/ns/s-%d", o)
		for v, ix := range ixs {
			ix.UpdateClaim(key, Claim{Namespace: "ns", Created: int64(o)}, viewRecords(o, v%2 == 0))
		}
	}
	for _, ix := range ixs {
		ix.Flush()
	}
	return ixs
}

// viewRecords are the records of Service o in a view: its A record, private
// or public, and the SRV record of its port.
func viewRecords(o int, private bool) []dns.RR {
	name := fmt.Sprintf("s-%d.ns.example.com.", o)
	ip := net.IPv4(198, 51, byte(o>>8), byte(o)).To4()
	if private {
		ip = net.IPv4(10, byte(o>>16), byte(o>>8), byte(o)).To4()
	}
	return []dns.RR{
		&dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: ip},
		&dns.SRV{Hdr: dns.RR_Header{Name: "_http._tcp." + name, Rrtype: dns.TypeSRV, Class: dns.ClassINET, Ttl: 30}, Port: 80, Target: name},
	}
}
