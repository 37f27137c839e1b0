package gateway

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
// kubeconfig Secrets, labeled with their cluster's name.
const capiGroup = "cluster.x-k8s.io"

var secretsResource = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

var capiClusters = schema.GroupVersionResource{Group: capiGroup, Version: "v1beta2", Resource: "clusters"}

func capiCluster(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(capiGroup + "/v1beta2")
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

// TestClusterAPIDiscovery: a Cluster with a working kubeconfig Secret is read
// under <cluster>.<zone>; a Secret rotated reconnects (objects gone from the
// new view are withdrawn); a broken kubeconfig is logged and changes nothing
// else; a Cluster deleted takes its names along.
func TestClusterAPIDiscovery(t *testing.T) {
	ctx := context.Background()
	a, b := fake.NewSimpleClientset(), fake.NewSimpleClientset()
	k8sCreate(t, a, k8sClaimingService("apps", "web", 100, "", "192.0.2.1"))
	k8sCreate(t, b, k8sClaimingService("apps", "api", 100, "", "192.0.2.2"))
	clients := map[string]kubernetes.Interface{"kubeconfig-a": a, "kubeconfig-b": b}

	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), map[schema.GroupVersionResource]string{
		capiClusters: "ClusterList", secretsResource: "SecretList",
	})
	g := newGateway()
	g.Zones = []string{"example.com."}
	g.resources = []string{"Service"}
	g.timing = k8sTiming
	g.clusterAPI = &clusterAPIConfig{}
	g.buildIndex()
	served := func(_ context.Context, gv string) ([]string, error) {
		if gv == capiClusters.GroupVersion().String() {
			return []string{"clusters"}, nil
		}
		return nil, errors.New("not served")
	}
	g.discovery = g.newDiscovery(dyn, served, func(kc []byte) (watch.API, error) {
		c, ok := clients[string(kc)]
		if !ok {
			return nil, errors.New("broken kubeconfig")
		}
		return watchtest.API{Core: c}, nil
	})
	t.Cleanup(g.stop)
	if err := g.start(); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "ready", func() string {
		if !g.Ready() {
			return "not ready"
		}
		return ""
	})
	create := func(u *unstructured.Unstructured, gvr schema.GroupVersionResource) {
		t.Helper()
		if _, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	web := "web.apps.prod.example.com."
	create(capiCluster("fleet", "prod"), capiClusters)
	create(capiSecret("fleet", "prod", "kubeconfig-a"), secretsResource)
	k8sAnswers(t, g, web, dns.TypeA, k8sExpect(t, "NOERROR", []string{web + " 60 IN A 192.0.2.1"}))
	k8sAnswers(t, g, "web.apps.example.com.", dns.TypeA, k8sNX)

	// A broken kubeconfig: the Cluster is not read, the others are unaffected.
	create(capiCluster("fleet", "bad"), capiClusters)
	create(capiSecret("fleet", "bad", "garbage"), secretsResource)
	testutil.Eventually(t, "bad is not read", func() string {
		g.discovery.Mu.Lock()
		defer g.discovery.Mu.Unlock()
		if _, ok := g.discovery.Members["fleet/bad"]; ok {
			return "fleet/bad is read"
		}
		if g.discovery.Warned["fleet/bad"] == "" {
			return "no warning about fleet/bad"
		}
		return ""
	})
	k8sAnswers(t, g, web, dns.TypeA, k8sExpect(t, "NOERROR", []string{web + " 60 IN A 192.0.2.1"}))

	// Rotation: the new kubeconfig reads another view of the cluster.
	if _, err := dyn.Resource(secretsResource).Namespace("fleet").Update(ctx, capiSecret("fleet", "prod", "kubeconfig-b"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	api := "api.apps.prod.example.com."
	k8sAnswers(t, g, api, dns.TypeA, k8sExpect(t, "NOERROR", []string{api + " 60 IN A 192.0.2.2"}))
	k8sAnswers(t, g, web, dns.TypeA, k8sNX)

	// Deleted: its names go.
	if err := dyn.Resource(capiClusters).Namespace("fleet").Delete(ctx, "prod", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, api, dns.TypeA, k8sNX)
	if cl, _ := g.fleet.Of("fleet.prod/Service/apps/api"); cl != nil {
		t.Errorf("the deleted Cluster is still in the fleet as %q", cl.Name)
	}
}

// TestClusterAPIReadyWithWorkloads: a plugin started with a Cluster already
// there becomes ready only once that workload cluster has synced, so it
// never answers NXDOMAIN for its names meanwhile.
func TestClusterAPIReadyWithWorkloads(t *testing.T) {
	work := fake.NewSimpleClientset()
	k8sCreate(t, work, k8sClaimingService("apps", "web", 100, "", "192.0.2.1"))
	// The workload cluster lists slowly.
	work.PrependReactor("list", "*", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		time.Sleep(300 * time.Millisecond)
		return false, nil, nil
	})
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), map[schema.GroupVersionResource]string{
		capiClusters: "ClusterList", secretsResource: "SecretList",
	}, capiCluster("fleet", "prod"), capiSecret("fleet", "prod", "kubeconfig"))
	g := newGateway()
	g.Zones = []string{"example.com."}
	g.resources = []string{"Service"}
	g.timing = k8sTiming
	g.timing.clusterWait = time.Minute // ready must come from the sync, not the wait
	g.clusterAPI = &clusterAPIConfig{}
	g.buildIndex()
	served := func(context.Context, string) ([]string, error) { return []string{"clusters"}, nil }
	g.discovery = g.newDiscovery(dyn, served, func([]byte) (watch.API, error) { return watchtest.API{Core: work}, nil })
	t.Cleanup(g.stop)
	g.noStartupWait = true
	if err := g.start(); err != nil {
		t.Fatal(err)
	}
	web := "web.apps.prod.example.com."
	testutil.Eventually(t, "ready", func() string {
		if !g.Ready() {
			return "not ready"
		}
		return ""
	})
	if got, want := k8sAnswer(g, web, dns.TypeA), k8sExpect(t, "NOERROR", []string{web + " 60 IN A 192.0.2.1"}); got != want {
		t.Errorf("at ready: %s, want %s", got, want)
	}
}

// TestClusterAPIPriority: a Cluster's priority is its annotation's, else the
// block's; a changed annotation reconnects the cluster with the new one.
func TestClusterAPIPriority(t *testing.T) {
	ctx := context.Background()
	a := fake.NewSimpleClientset()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), map[schema.GroupVersionResource]string{
		capiClusters: "ClusterList", secretsResource: "SecretList",
	})
	g := newGateway()
	g.Zones = []string{"example.com."}
	g.resources = []string{"Service"}
	g.timing = k8sTiming
	g.clusterAPI = &clusterAPIConfig{}
	g.priority = 5
	g.buildIndex()
	served := func(_ context.Context, gv string) ([]string, error) { return []string{"clusters"}, nil }
	g.discovery = g.newDiscovery(dyn, served, func([]byte) (watch.API, error) { return watchtest.API{Core: a}, nil })
	t.Cleanup(g.stop)
	if err := g.start(); err != nil {
		t.Fatal(err)
	}
	prod := capiCluster("fleet", "prod")
	prod.SetAnnotations(map[string]string{"k8s-gateway.dns/priority": "1"})
	for _, u := range []*unstructured.Unstructured{prod, capiCluster("fleet", "stage")} {
		if _, err := dyn.Resource(capiClusters).Namespace("fleet").Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := dyn.Resource(secretsResource).Namespace("fleet").Create(ctx, capiSecret("fleet", u.GetName(), "kc"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	priorities := func(want map[string]int32) func() string {
		return func() string {
			g.discovery.Mu.Lock()
			defer g.discovery.Mu.Unlock()
			for key, p := range want {
				m, ok := g.discovery.Members[key]
				if !ok {
					return key + " not read"
				}
				if got := m.Priority(); got != p {
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
