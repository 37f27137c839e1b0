package gateway

import (
	"context"
	"fmt"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"runtime"
	"sync"
	"testing"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
)

// sharingAPI is a watchtest.API that lets controllers share informers (key), and
// counts the watches opened per kind (informers watch, probes only list)
// and the lists.
type sharingAPI struct {
	watchtest.API
	key     string
	mu      *sync.Mutex
	watches map[string]int
	lists   map[string]int
}

func newSharingAPI(f watchtest.API, key string) sharingAPI {
	return sharingAPI{API: f, key: key, mu: &sync.Mutex{}, watches: map[string]int{}, lists: map[string]int{}}
}

func (a sharingAPI) ShareKey() string { return a.key }

func (a sharingAPI) ListWatch(k *source.Kind, ns string) (watch.ListFunc, watch.WatchFunc) {
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

// TestSharedInformers: two blocks (views) over one cluster with the same
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
			internal := k8sStartGatewayAPI(t, apiA, []string{"example.com."}, func(g *Gateway) {
				if err := g.addresses.AddRanges("include", []string{"10.0.0.0/8"}); err != nil {
					t.Fatal(err)
				}
			})
			external := k8sStartGatewayAPI(t, apiB, []string{"example.com."}, func(g *Gateway) {
				if err := g.addresses.AddRanges("exclude", []string{"10.0.0.0/8"}); err != nil {
					t.Fatal(err)
				}
			})
			www := "www.example.com."
			k8sAnswers(t, internal, www, dns.TypeA, k8sExpect(t, "NOERROR", []string{www + " 60 IN A 10.0.0.1"}))
			k8sAnswers(t, external, www, dns.TypeA, k8sExpect(t, "NOERROR", []string{www + " 60 IN A 192.0.2.1"}))
			watches := apiA.count("Ingress")
			if tc.keyB != "cluster-1" {
				watches += apiB.count("Ingress")
			}
			if watches != tc.wantWatches {
				t.Errorf("Ingress watched %d times, want %d", watches, tc.wantWatches)
			}

			// A change reaches both; after one block stops, the other still follows.
			k8sCreate(t, client, testutil.NamedIngress("default", "api", []string{"api.example.com"}, "10.0.0.2", "192.0.2.2"))
			api := "api.example.com."
			k8sAnswers(t, internal, api, dns.TypeA, k8sExpect(t, "NOERROR", []string{api + " 60 IN A 10.0.0.2"}))
			k8sAnswers(t, external, api, dns.TypeA, k8sExpect(t, "NOERROR", []string{api + " 60 IN A 192.0.2.2"}))
			internal.stop()
			if err := client.NetworkingV1().Ingresses("default").Delete(context.Background(), "api", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			k8sAnswers(t, external, api, dns.TypeA, k8sNX)
			external.stop()
			if n := watch.SharedInformers(); n != 0 {
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
	old := k8sStartGatewayAPI(t, api, []string{"example.com."}, nil)
	k8sAnswers(t, old, www, dns.TypeA, k8sExpect(t, "NOERROR", []string{www + " 60 IN A 192.0.2.1"}))
	watchesBefore := api.count("Ingress") + api.count("Service")
	listsBefore := api.countLists("Ingress", "Service")
	for i := range 3 {
		g := k8sStartGatewayAPI(t, api, []string{"example.com."}, nil)
		old.stop()
		k8sAnswers(t, g, www, dns.TypeA, k8sExpect(t, "NOERROR", []string{www + " 60 IN A 192.0.2.1"}))
		if n := api.count("Ingress") + api.count("Service"); n != watchesBefore {
			t.Errorf("reload %d: %d watches, want still %d", i, n, watchesBefore)
		}
		// Joining running informers lists nothing, not even a probe.
		if n := api.countLists("Ingress", "Service"); n != listsBefore {
			t.Errorf("reload %d: %d lists, want still %d", i, n, listsBefore)
		}
		old = g
	}
	old.stop()
	testutil.Eventually(t, "goroutines", func() string {
		if n := runtime.NumGoroutine(); n > before {
			return fmt.Sprintf("%d goroutines, %d before", n, before)
		}
		return ""
	})
}
