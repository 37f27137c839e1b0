package gateway

import (
	"encoding/json"
	"runtime"
	"testing"

	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// BenchmarkCacheBytes reports what the informer cache keeps per object
// (B/object): objects decoded as the informers decode them (Ingresses and
// Services from protobuf straight into what the informer keeps, HTTPRoutes
// from JSON and then converted by their transform), stored in a
// cache.Indexer without indexes. The shapes are those of test/bench, a
// single-host Ingress and a LoadBalancer Service with one port, each with
// one load balancer IP; a ClusterIP Service with two ports, the most common
// kind of Service, which publishes nothing but is cached all the same; and
// an HTTPRoute of one hostname attached to a shared Gateway.
//
//	go test -run '^$' -bench CacheBytes .
func BenchmarkCacheBytes(b *testing.B) {
	const n = 20000
	decodeService := func(data []byte) (any, error) {
		var o source.Service
		return &o, o.Unmarshal(data)
	}
	for _, tc := range []struct {
		name   string
		encode func(i int) ([]byte, error)
		// decode makes what the informer keeps of an object.
		decode func([]byte) (any, error)
	}{
		{"Ingress", func(i int) ([]byte, error) { return testutil.BenchIngress(i).Marshal() }, func(data []byte) (any, error) {
			var o source.Ingress
			return &o, o.Unmarshal(data)
		}},
		{"Service", func(i int) ([]byte, error) { return testutil.BenchService(i).Marshal() }, decodeService},
		{"ClusterIPService", func(i int) ([]byte, error) { return testutil.BenchClusterIPService(i).Marshal() }, decodeService},
		// Gateway API kinds are CRDs: the API server sends them as JSON.
		{"HTTPRoute", func(i int) ([]byte, error) { return json.Marshal(testutil.BenchHTTPRoute(i)) }, func(data []byte) (any, error) {
			var o gwv1.HTTPRoute
			if err := json.Unmarshal(data, &o); err != nil {
				return nil, err
			}
			return source.KindByName("HTTPRoute").Transform(&o)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			wire := make([][]byte, n)
			for i := range wire {
				var err error
				if wire[i], err = tc.encode(i); err != nil {
					b.Fatal(err)
				}
			}
			var kept uint64
			for b.Loop() {
				before := heapLive()
				store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
				for _, data := range wire {
					obj, err := tc.decode(data)
					if err != nil {
						b.Fatal(err)
					}
					if err := store.Add(obj); err != nil {
						b.Fatal(err)
					}
				}
				kept += heapLive() - before
				runtime.KeepAlive(store)
			}
			b.ReportMetric(float64(kept)/float64(b.N)/n, "B/object")
		})
	}
}

// heapLive returns the bytes of live heap objects after a collection.
func heapLive() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
