package fleet

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// BenchmarkFleetSync syncs the same number of names from one cluster and
// from ten, each cluster a fake API server in the process: the time from
// start to ready (every cluster synced and the index published), and the
// heap the fleet keeps (informer stores, index, controllers) beyond the fake
// servers' objects (measured after the fake clientsets are made, so the
// difference between the two runs is what each extra cluster costs).
func BenchmarkFleetSync(b *testing.B) {
	const names = 10000
	for _, clusters := range []int{1, 10} {
		b.Run(fmt.Sprintf("%dx%d", clusters, names/clusters), func(b *testing.B) {
			var heap uint64
			var synced time.Duration
			for b.Loop() {
				b.StopTimer()
				var fakes []*fake.Clientset
				for c := range clusters {
					objs := make([]k8sruntime.Object, 0, names/clusters)
					for i := range names / clusters {
						objs = append(objs, testutil.NamedService("apps", fmt.Sprintf("svc-%d-%d", c, i), fmt.Sprintf("10.%d.%d.%d", c, i/256, i%256)))
					}
					fakes = append(fakes, fake.NewSimpleClientset(objs...))
				}
				before := heapInUse()
				b.StartTimer()
				start := time.Now()
				tf := newTestFleet(b, "example.com.")
				for c, client := range fakes {
					tf.join(fmt.Sprintf("c%d", c), watchtest.API{Core: client}, nil)
				}
				tf.start(b)
				synced += time.Since(start)
				b.StopTimer()
				if n := tf.ix.Snapshot().Len(); n < names {
					b.Fatalf("%d names published, want at least %d", n, names)
				}
				heap += heapInUse() - before
				tf.stop()
				tf.ix.Close()
				runtime.KeepAlive(fakes)
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
