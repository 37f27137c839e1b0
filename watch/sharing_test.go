package watch

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	kwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// sharingAPI is a watchtest.API that lets controllers share informers (key), and
// counts the watches opened per kind (informers watch, probes only list)
// and the lists.
type sharingAPI struct {
	watchtest.API
	mu      *sync.Mutex
	watches map[string]int
	lists   map[string]int
}

func newSharingAPI(f watchtest.API, key string) sharingAPI {
	f.Share = key
	return sharingAPI{API: f, mu: &sync.Mutex{}, watches: map[string]int{}, lists: map[string]int{}}
}

func (a sharingAPI) ListWatch(k *source.Kind, ns string) (listFunc, watchFunc) {
	list, watchFn := a.API.ListWatch(k, ns)
	counted := func(ctx context.Context, o metav1.ListOptions) (k8sruntime.Object, error) {
		a.mu.Lock()
		a.lists[k.Name]++
		a.mu.Unlock()
		return list(ctx, o)
	}
	return counted, func(ctx context.Context, o metav1.ListOptions) (kwatch.Interface, error) {
		a.mu.Lock()
		a.watches[k.Name]++
		a.mu.Unlock()
		return watchFn(ctx, o)
	}
}

func (a sharingAPI) count(kind string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.watches[kind]
}

func (a sharingAPI) countLists(kinds ...string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, k := range kinds {
		n += a.lists[k]
	}
	return n
}

// TestSharedInformers: two controllers (a plugin's blocks, or views) over one cluster with the same
// credentials share one informer per kind: one watch each, whatever the
// number of blocks; each block publishes through its own filters; a block
// that stops leaves the other one running; the last one stops the informers.
// Blocks over different credentials share nothing.
func TestSharedInformers(t *testing.T) {
	for _, tc := range []struct {
		name        string
		keyB        string
		wantWatches int
	}{
		{name: "same credentials", keyB: "cluster-1", wantWatches: 1},
		{name: "other credentials", keyB: "cluster-2", wantWatches: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewSimpleClientset(testutil.NamedIngress("default", "web", []string{"www.example.com"}, "10.0.0.1", "192.0.2.1"))
			apiA, apiB := newSharingAPI(watchtest.API{Core: client}, "cluster-1"), newSharingAPI(watchtest.API{Core: client}, tc.keyB)
			if tc.keyB == "cluster-1" {
				apiB = apiA // one counter for both
			}
			cfgA, cfgB := testConfig("example.com."), testConfig("example.com.")
			if err := cfgA.Sources.Addresses.AddRanges("include", []string{"10.0.0.0/8"}); err != nil {
				t.Fatal(err)
			}
			if err := cfgB.Sources.Addresses.AddRanges("exclude", []string{"10.0.0.0/8"}); err != nil {
				t.Fatal(err)
			}
			internal := startPipeline(t, cfgA, apiA)
			external := startPipeline(t, cfgB, apiB)
			www := "www.example.com."
			internal.answers(t, www, dns.TypeA, expect(t, "NOERROR", []string{www + " 60 IN A 10.0.0.1"}))
			external.answers(t, www, dns.TypeA, expect(t, "NOERROR", []string{www + " 60 IN A 192.0.2.1"}))
			watches := apiA.count("Ingress")
			if tc.keyB != "cluster-1" {
				watches += apiB.count("Ingress")
			}
			if watches != tc.wantWatches {
				t.Errorf("Ingress watched %d times, want %d", watches, tc.wantWatches)
			}

			// A change reaches both; after one block stops, the other still follows.
			create(t, client, testutil.NamedIngress("default", "api", []string{"api.example.com"}, "10.0.0.2", "192.0.2.2"))
			api := "api.example.com."
			internal.answers(t, api, dns.TypeA, expect(t, "NOERROR", []string{api + " 60 IN A 10.0.0.2"}))
			external.answers(t, api, dns.TypeA, expect(t, "NOERROR", []string{api + " 60 IN A 192.0.2.2"}))
			internal.c.Stop()
			if err := client.NetworkingV1().Ingresses("default").Delete(context.Background(), "api", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			external.answers(t, api, dns.TypeA, nx)
			external.c.Stop()
			if n := sharedInformers(); n != 0 {
				t.Errorf("%d informers still run after both blocks stopped", n)
			}
		})
	}
}

// TestSharedInformersReload: a block started while another with the same
// key runs (a Corefile reload starts the new instance before it stops the
// old one) syncs from the running informers, opens no watch, and keeps
// answering when the old block stops; stopping it too leaves no goroutine.
func TestSharedInformersReload(t *testing.T) {
	client := fake.NewSimpleClientset(testutil.NamedIngress("default", "web", []string{"www.example.com"}, "192.0.2.1"))
	api := newSharingAPI(watchtest.API{Core: client}, "cluster-1")
	www := "www.example.com."
	before := runtime.NumGoroutine()
	old := startPipeline(t, testConfig("example.com."), api)
	old.answers(t, www, dns.TypeA, expect(t, "NOERROR", []string{www + " 60 IN A 192.0.2.1"}))
	watchesBefore := api.count("Ingress") + api.count("Service")
	listsBefore := api.countLists("Ingress", "Service")
	for i := range 3 {
		g := startPipeline(t, testConfig("example.com."), api)
		old.c.Stop()
		g.answers(t, www, dns.TypeA, expect(t, "NOERROR", []string{www + " 60 IN A 192.0.2.1"}))
		if n := api.count("Ingress") + api.count("Service"); n != watchesBefore {
			t.Errorf("reload %d: %d watches, want still %d", i, n, watchesBefore)
		}
		// Joining running informers lists nothing, not even a probe.
		if n := api.countLists("Ingress", "Service"); n != listsBefore {
			t.Errorf("reload %d: %d lists, want still %d", i, n, listsBefore)
		}
		old = g
	}
	old.c.Stop()
	testutil.Eventually(t, "goroutines", func() string {
		if n := runtime.NumGoroutine(); n > before {
			return fmt.Sprintf("%d goroutines, %d before", n, before)
		}
		return ""
	})
}
