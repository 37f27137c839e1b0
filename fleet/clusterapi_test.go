package fleet

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/watch"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// What Cluster API and the plugin's documentation name: Clusters and their
// kubeconfig Secrets, labeled with their cluster's name (written out here,
// not taken from clusterapi.go, so that a change there fails the tests).
var capiClusters = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "clusters"}

var capiSecrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

func capiCluster(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("cluster.x-k8s.io/v1beta2")
	u.SetKind("Cluster")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func capiSecret(ns, cluster, kubeconfig string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"data": map[string]any{"value": base64.StdEncoding.EncodeToString([]byte(kubeconfig))},
	}}
	u.SetNamespace(ns)
	u.SetName(cluster + "-kubeconfig")
	u.SetLabels(map[string]string{"cluster.x-k8s.io/cluster-name": cluster})
	return u
}

// capiFake is a management cluster's dynamic client serving Clusters and
// Secrets, holding objs.
func capiFake(objs ...k8sruntime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), map[schema.GroupVersionResource]string{
		capiClusters: "ClusterList", capiSecrets: "SecretList",
	}, objs...)
}

// servesClusters serves Clusters at v1beta2 only.
func servesClusters(_ context.Context, gv string) ([]string, error) {
	if gv == capiClusters.GroupVersion().String() {
		return []string{"clusters"}, nil
	}
	return nil, errors.New("not served")
}

// newTestDiscovery returns the Cluster API discovery of a fleet of
// example.com. on dyn, as the plugin's clusterapi option makes it: each
// workload cluster read with apiOf's API, under <cluster>.example.com.,
// with priority (the block's); it stops when the test ends.
func newTestDiscovery(t testing.TB, tf *testFleet, dyn *dynamicfake.FakeDynamicClient, apiOf func([]byte) (watch.API, error), clusterWait time.Duration, priority int32) *Discovery {
	d := NewDiscovery(DiscoveryConfig{
		Dynamic: dyn, Served: servesClusters, APIOf: apiOf,
		Reprobe: testTiming.Reprobe, ClusterWait: clusterWait, Health: testHealth, Guard: testTiming.Guard,
		Members: &tf.Fleet,
		Join: func(namespace, name string, api watch.API) (*Cluster, error) {
			cfg := testConfig(name + ".example.com.")
			cfg.Priority = priority
			return NewCluster(namespace+"."+name, cfg, api, tf.ix, false), nil
		},
	})
	t.Cleanup(d.Stop)
	return d
}

// startDiscovery starts d, waits until it has synced, and publishes the
// index, as the plugin does once it is ready.
func (tf *testFleet) startDiscovery(t testing.TB, d *Discovery) {
	t.Helper()
	d.Start()
	select {
	case <-d.Synced():
	case <-time.After(10 * time.Second):
		t.Fatal("Cluster API discovery not synced after 10s")
	}
	tf.ix.Flush()
}

// TestClusterAPIDiscovery: a Cluster with a working kubeconfig Secret is read
// under <cluster>.<zone>; a Secret rotated reconnects (objects gone from the
// new view are withdrawn); a broken kubeconfig is logged and changes nothing
// else; a Cluster deleted takes its names along.
func TestClusterAPIDiscovery(t *testing.T) {
	ctx := context.Background()
	a, b := fake.NewSimpleClientset(), fake.NewSimpleClientset()
	create(t, a, testutil.ClaimingService("apps", "web", 100, "", "192.0.2.1"))
	create(t, b, testutil.ClaimingService("apps", "api", 100, "", "192.0.2.2"))
	clients := map[string]kubernetes.Interface{"kubeconfig-a": a, "kubeconfig-b": b}

	dyn := capiFake()
	tf := newTestFleet(t, "example.com.")
	d := newTestDiscovery(t, tf, dyn, func(kc []byte) (watch.API, error) {
		c, ok := clients[string(kc)]
		if !ok {
			return nil, errors.New("broken kubeconfig")
		}
		return watchtest.API{Core: c}, nil
	}, time.Second, 0)
	tf.startDiscovery(t, d)
	create := func(u *unstructured.Unstructured, gvr schema.GroupVersionResource) {
		t.Helper()
		if _, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	web := "web.apps.prod.example.com."
	create(capiCluster("fleet", "prod"), capiClusters)
	create(capiSecret("fleet", "prod", "kubeconfig-a"), capiSecrets)
	tf.answers(t, web, dns.TypeA, watchtest.Expect(t, "NOERROR", []string{web + " 60 IN A 192.0.2.1"}))
	tf.answers(t, "web.apps.example.com.", dns.TypeA, watchtest.NX)

	// A broken kubeconfig: the Cluster is not read, the others are unaffected.
	create(capiCluster("fleet", "bad"), capiClusters)
	create(capiSecret("fleet", "bad", "garbage"), capiSecrets)
	testutil.Eventually(t, "bad is not read", func() string {
		d.mu.Lock()
		defer d.mu.Unlock()
		if _, ok := d.members["fleet/bad"]; ok {
			return "fleet/bad is read"
		}
		if d.warned["fleet/bad"] == "" {
			return "no warning about fleet/bad"
		}
		return ""
	})
	tf.answers(t, web, dns.TypeA, watchtest.Expect(t, "NOERROR", []string{web + " 60 IN A 192.0.2.1"}))

	// Rotation: the new kubeconfig reads another view of the cluster.
	if _, err := dyn.Resource(capiSecrets).Namespace("fleet").Update(ctx, capiSecret("fleet", "prod", "kubeconfig-b"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	api := "api.apps.prod.example.com."
	tf.answers(t, api, dns.TypeA, watchtest.Expect(t, "NOERROR", []string{api + " 60 IN A 192.0.2.2"}))
	tf.answers(t, web, dns.TypeA, watchtest.NX)

	// Deleted: its names go.
	if err := dyn.Resource(capiClusters).Namespace("fleet").Delete(ctx, "prod", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	tf.answers(t, api, dns.TypeA, watchtest.NX)
	if cl, _ := tf.Of("fleet.prod/Service/apps/api"); cl != nil {
		t.Errorf("the deleted Cluster is still in the fleet as %q", cl.Name)
	}
}

// TestClusterAPIReadyWithWorkloads: discovery started with a Cluster already
// there has synced only once that workload cluster has, so that the plugin
// (ready when discovery has synced) never answers NXDOMAIN for its names
// meanwhile.
func TestClusterAPIReadyWithWorkloads(t *testing.T) {
	work := fake.NewSimpleClientset()
	create(t, work, testutil.ClaimingService("apps", "web", 100, "", "192.0.2.1"))
	// The workload cluster lists slowly.
	work.PrependReactor("list", "*", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		time.Sleep(300 * time.Millisecond)
		return false, nil, nil
	})
	dyn := capiFake(capiCluster("fleet", "prod"), capiSecret("fleet", "prod", "kubeconfig"))
	tf := newTestFleet(t, "example.com.")
	// The synced state must come from the workload's sync, not the wait.
	d := newTestDiscovery(t, tf, dyn, func([]byte) (watch.API, error) { return watchtest.API{Core: work}, nil }, time.Minute, 0)
	tf.startDiscovery(t, d)
	web := "web.apps.prod.example.com."
	if got, want := watchtest.Answer(tf.ix, web, dns.TypeA), watchtest.Expect(t, "NOERROR", []string{web + " 60 IN A 192.0.2.1"}); got != want {
		t.Errorf("at ready: %s, want %s", got, want)
	}
}

// TestClusterAPIPriority: a Cluster's priority is its annotation's, else the
// block's; a changed annotation reconnects the cluster with the new one.
func TestClusterAPIPriority(t *testing.T) {
	ctx := context.Background()
	a := fake.NewSimpleClientset()
	dyn := capiFake()
	tf := newTestFleet(t, "example.com.")
	d := newTestDiscovery(t, tf, dyn, func([]byte) (watch.API, error) { return watchtest.API{Core: a}, nil }, time.Second, 5)
	d.Start()
	prod := capiCluster("fleet", "prod")
	prod.SetAnnotations(map[string]string{"k8s-gateway.dns/priority": "1"})
	for _, u := range []*unstructured.Unstructured{prod, capiCluster("fleet", "stage")} {
		if _, err := dyn.Resource(capiClusters).Namespace("fleet").Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := dyn.Resource(capiSecrets).Namespace("fleet").Create(ctx, capiSecret("fleet", u.GetName(), "kc"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	priorities := func(want map[string]int32) func() string {
		return func() string {
			d.mu.Lock()
			defer d.mu.Unlock()
			for key, p := range want {
				m, ok := d.members[key]
				if !ok {
					return key + " not read"
				}
				if got := m.priority(); got != p {
					return fmt.Sprintf("%s: priority %d, want %d", key, got, p)
				}
			}
			return ""
		}
	}
	testutil.Eventually(t, "priorities", priorities(map[string]int32{"fleet/prod": 1, "fleet/stage": 5}))
	prod.SetAnnotations(map[string]string{"k8s-gateway.dns/priority": "3"})
	if _, err := dyn.Resource(capiClusters).Namespace("fleet").Update(ctx, prod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "changed priority", priorities(map[string]int32{"fleet/prod": 3, "fleet/stage": 5}))
	prod.SetAnnotations(nil)
	if _, err := dyn.Resource(capiClusters).Namespace("fleet").Update(ctx, prod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "annotation removed", priorities(map[string]int32{"fleet/prod": 5}))
}
