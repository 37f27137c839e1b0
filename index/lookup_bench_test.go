package index

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/miekg/dns"
)

// BenchmarkLookup is the query path of the index alone: Snapshot.Lookup at
// 100,000 names (50,000 objects of an A and an SRV name), of an A record
// that exists and of a name that does not, in an index of its own and in
// the first of four views of one cluster, which share a Shared and agree
// on every other name.
func BenchmarkLookup(b *testing.B) {
	const objects = 50_000
	for _, views := range []int{1, 4} {
		ixs := syncViews(objects, views)
		s := ixs[0].Snapshot()
		names := make([]string, 1024)
		for i := range names {
			names[i] = fmt.Sprintf("s-%d.ns.example.com.", i*objects/len(names))
		}
		for _, c := range []struct {
			what, prefix string
			res          Result
		}{{"A", "", Success}, {"NXDOMAIN", "x", NameError}} {
			b.Run(fmt.Sprintf("%s_%d_views", c.what, views), func(b *testing.B) {
				b.ReportAllocs()
				qs := make([]string, len(names))
				for i, n := range names {
					qs[i] = c.prefix + n
				}
				// CPU time of this thread as well (see BenchmarkSteeredLookup).
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				start, i := threadCPU(), 0
				for ; b.Loop(); i++ {
					if _, _, _, res := s.Lookup(0, qs[i%len(qs)], dns.TypeA); res != c.res {
						b.Fatal(res)
					}
				}
				b.ReportMetric(float64(threadCPU()-start)/float64(i), "cpu-ns/op")
			})
		}
		for _, ix := range ixs {
			ix.Close()
		}
	}
}
