package gateway

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/watch"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// k8sFleetCluster is one cluster of a fleet test, on a fake clientset.
type k8sFleetCluster struct {
	name, subdomain string
	client          kubernetes.Interface
}

// k8sNewFleet configures a Gateway for example.com with a cluster block for
// each cluster, publishing Services.
func k8sNewFleet(t testing.TB, clusters []k8sFleetCluster, configure func(*Gateway)) *Gateway {
	t.Helper()
	g := newGateway()
	g.Zones = []string{"example.com."}
	g.resources = []string{"Service"}
	g.timing = k8sTiming
	clients := map[string]kubernetes.Interface{}
	for _, c := range clusters {
		spec := clusterSpec{name: c.name, subdomain: c.subdomain, opts: newClusterOptions(), set: map[string]bool{}}
		spec.opts.kubeconfig = c.name // the key of its fake below
		g.clusters = append(g.clusters, spec)
		clients[c.name] = c.client
	}
	if configure != nil {
		configure(g)
	}
	g.buildIndex()
	err := g.addClusters(&g.readers, func(kubeconfig, _ string) (watch.API, error) { return watchtest.API{Core: clients[kubeconfig]}, nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.stop)
	return g
}

// k8sStartFleet is k8sNewFleet, started and ready.
func k8sStartFleet(t *testing.T, clusters []k8sFleetCluster, configure func(*Gateway)) *Gateway {
	t.Helper()
	g := k8sNewFleet(t, clusters, configure)
	if err := g.start(); err != nil {
		t.Fatal(err)
	}
	if !g.Ready() {
		t.Fatal("not ready after start")
	}
	return g
}

// k8sClaimingServiceIn is k8sClaimingService, created in client.
func k8sClaimingServiceIn(t *testing.T, client kubernetes.Interface, ns, name string, created int64, hosts, ip string) {
	t.Helper()
	k8sCreate(t, client, testutil.ClaimingService(ns, name, created, hosts, ip))
}

// TestFleetFirstOwnership: under the first policy a namespace is a tenant of
// its cluster: the same-named namespace of another cluster cannot publish at
// its names, and the rejection is counted as a cross-cluster conflict and
// told, as an Event, to the rejected object in its own cluster only.
func TestFleetFirstOwnership(t *testing.T) {
	ctx := context.Background()
	a, b := fake.NewSimpleClientset(), fake.NewSimpleClientset()
	g := k8sStartFleet(t, []k8sFleetCluster{{name: "a", client: a}, {name: "b", client: b}}, func(g *Gateway) {
		g.ownership = index.First
		g.emitEvents = true
		for i := range g.clusters {
			g.clusters[i].opts.emitEvents = true
			g.clusters[i].set["events"] = true
		}
	})
	before := k8sMetric(clusterConflicts.WithLabelValues("example.com."))
	k8sClaimingServiceIn(t, a, "apps", "shop", 100, "shop.example.com", "192.0.2.1")
	k8sAnswers(t, g, "shop.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"shop.example.com. 60 IN A 192.0.2.1"}))
	k8sClaimingServiceIn(t, b, "apps", "thief", 200, "shop.example.com", "192.0.2.66")
	testutil.Eventually(t, "the rejection's Event in cluster b", func() string {
		list, err := b.CoreV1().Events("apps").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		for _, ev := range list.Items {
			o := ev.InvolvedObject
			if ev.Reason == "DNSNameRejected" && o.Kind == "Service" && o.Namespace == "apps" && o.Name == "thief" {
				return ""
			}
		}
		return fmt.Sprintf("no DNSNameRejected on Service apps/thief: %d events", len(list.Items))
	})
	k8sAnswers(t, g, "thief.apps.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"thief.apps.example.com. 60 IN A 192.0.2.66"}))
	k8sAnswers(t, g, "shop.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"shop.example.com. 60 IN A 192.0.2.1"}))
	if got := k8sMetric(clusterConflicts.WithLabelValues("example.com.")) - before; got < 1 {
		t.Errorf("cluster conflicts counted %v, want at least 1", got)
	}
	if list, err := a.CoreV1().Events("apps").List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("events in cluster a: %v %v", list, err)
	}
}

// TestFleetUnreachableCluster: a cluster whose API server never answers does
// not hold back readiness beyond clusterWait, and the other cluster's names
// are answered. (That the cluster is reported unreachable is fleet's test.)
func TestFleetUnreachableCluster(t *testing.T) {
	a, down := fake.NewSimpleClientset(), fake.NewSimpleClientset()
	down.PrependReactor("list", "*", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("unreachable")
	})
	k8sCreate(t, a, testutil.ClaimingService("apps", "web", 100, "web.example.com", "192.0.2.1"))
	g := k8sNewFleet(t, []k8sFleetCluster{{name: "a", client: a}, {name: "down", client: down}}, func(g *Gateway) {
		g.timing.startupWait = 50 * time.Millisecond
		g.timing.clusterWait = 300 * time.Millisecond
	})
	begin := time.Now()
	if err := g.start(); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "ready", func() string {
		if !g.Ready() {
			return "not ready"
		}
		return ""
	})
	if d := time.Since(begin); d < g.timing.clusterWait {
		t.Errorf("ready after %s, before clusterWait", d)
	}
	k8sAnswers(t, g, "web.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"web.example.com. 60 IN A 192.0.2.1"}))
}

// k8sMetric returns the value of a gauge or counter.
func k8sMetric(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		return -1
	}
	if c := d.GetCounter(); c != nil {
		return c.GetValue()
	}
	return d.GetGauge().GetValue()
}
