package gateway

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// BenchmarkFleetSync syncs the same number of names from one cluster and
// from ten, each cluster a fake API server in the process: the time from
// start to ready, and the heap the plugin keeps beyond the fake servers'
// objects (measured after the fake clientsets are made, so the difference
// between the two runs is what each extra cluster costs).
func BenchmarkFleetSync(b *testing.B) {
	const names = 10000
	for _, clusters := range []int{1, 10} {
		b.Run(fmt.Sprintf("%dx%d", clusters, names/clusters), func(b *testing.B) {
			var heap uint64
			var synced time.Duration
			for b.Loop() {
				b.StopTimer()
				var fleet []k8sFleetCluster
				for c := range clusters {
					objs := make([]k8sruntime.Object, 0, names/clusters)
					for i := range names / clusters {
						objs = append(objs, testutil.NamedService("apps", fmt.Sprintf("svc-%d-%d", c, i), fmt.Sprintf("10.%d.%d.%d", c, i/256, i%256)))
					}
					fleet = append(fleet, k8sFleetCluster{name: fmt.Sprintf("c%d", c), client: fake.NewSimpleClientset(objs...)})
				}
				before := heapInUse()
				b.StartTimer()
				start := time.Now()
				g := k8sNewFleet(b, fleet, nil)
				g.noStartupWait = true
				if err := g.start(); err != nil {
					b.Fatal(err)
				}
				for !g.Ready() {
					time.Sleep(time.Millisecond)
				}
				synced += time.Since(start)
				b.StopTimer()
				if n := g.index.Snapshot().Len(); n < names {
					b.Fatalf("%d names published, want at least %d", n, names)
				}
				heap += heapInUse() - before
				g.stop()
				runtime.KeepAlive(fleet)
				b.StartTimer()
			}
			b.ReportMetric(float64(synced.Milliseconds())/float64(b.N), "ms-to-ready/op")
			b.ReportMetric(float64(heap)/float64(b.N)/(1<<20), "MiB-kept/op")
		})
	}
}

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
