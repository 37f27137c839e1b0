package fleet

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/miekg/dns"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/watch"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// TestFleetOf maps index keys to their clusters.
func TestFleetOf(t *testing.T) {
	var f Fleet
	f.Add(&Cluster{Name: "prod"})
	f.Add(&Cluster{Name: "stage"})
	for _, tc := range []struct{ key, cluster, rest string }{
		{"prod/Ingress/apps/web", "prod", "Ingress/apps/web"},
		{"stage/Nameserver/kube-system/dns", "stage", "Nameserver/kube-system/dns"},
		{"other/Ingress/apps/web", "", ""},
		{"Ingress/apps/web", "", ""},
	} {
		cl, rest := f.Of(tc.key)
		name := ""
		if cl != nil {
			name = cl.Name
		} else {
			rest = ""
		}
		if name != tc.cluster || rest != tc.rest {
			t.Errorf("of(%q) = %q, %q; want %q, %q", tc.key, name, rest, tc.cluster, tc.rest)
		}
	}
	var single Fleet
	single.Add(&Cluster{Name: ""})
	if cl, rest := single.Of("Ingress/apps/web"); cl == nil || rest != "Ingress/apps/web" {
		t.Errorf("the unnamed cluster does not own its keys: %v %q", cl, rest)
	}
}

// TestFleetMerged: two clusters merged into one zone answer the union at a
// name both publish; one cluster's objects never replace the other's, even
// with the same kind, namespace and name.
func TestFleetMerged(t *testing.T) {
	a, b := fake.NewSimpleClientset(), fake.NewSimpleClientset()
	tf := newTestFleet(t, "example.com.")
	tf.join("a", watchtest.API{Core: a}, nil)
	tf.join("b", watchtest.API{Core: b}, nil)
	tf.start(t)
	create(t, a, testutil.ClaimingService("apps", "web", 100, "web.example.com", "192.0.2.1"))
	create(t, b, testutil.ClaimingService("apps", "web", 200, "web.example.com", "192.0.2.2"))
	tf.answers(t, "web.example.com.", dns.TypeA, watchtest.Expect(t, "NOERROR", []string{"web.example.com. 60 IN A 192.0.2.1", "web.example.com. 60 IN A 192.0.2.2"}))
	tf.answers(t, "web.apps.example.com.", dns.TypeA, watchtest.Expect(t, "NOERROR", []string{"web.apps.example.com. 60 IN A 192.0.2.1", "web.apps.example.com. 60 IN A 192.0.2.2"}))

	// A cluster that withdraws drops out.
	if err := b.CoreV1().Services("apps").Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	tf.answers(t, "web.example.com.", dns.TypeA, watchtest.Expect(t, "NOERROR", []string{"web.example.com. 60 IN A 192.0.2.1"}))
}

// TestFleetSubdomain: a cluster with a subdomain publishes below it only;
// names it gives outside are not published.
func TestFleetSubdomain(t *testing.T) {
	a, b := fake.NewSimpleClientset(), fake.NewSimpleClientset()
	tf := newTestFleet(t, "example.com.")
	tf.join("a", watchtest.API{Core: a}, nil)
	sub := testConfig("b.example.com.")
	tf.join("b", watchtest.API{Core: b}, &sub)
	tf.start(t)
	create(t, a, testutil.ClaimingService("apps", "web", 100, "web.example.com", "192.0.2.1"))
	create(t, b, testutil.ClaimingService("apps", "web", 100, "web.b.example.com,www.example.com", "192.0.2.2"))
	tf.answers(t, "web.b.example.com.", dns.TypeA, watchtest.Expect(t, "NOERROR", []string{"web.b.example.com. 60 IN A 192.0.2.2"}))
	tf.answers(t, "web.apps.b.example.com.", dns.TypeA, watchtest.Expect(t, "NOERROR", []string{"web.apps.b.example.com. 60 IN A 192.0.2.2"}))
	tf.answers(t, "web.example.com.", dns.TypeA, watchtest.Expect(t, "NOERROR", []string{"web.example.com. 60 IN A 192.0.2.1"}))
	tf.answers(t, "www.example.com.", dns.TypeA, watchtest.NX)
}

// TestFleetWithdraw: a cluster taken out of the fleet takes its names along.
func TestFleetWithdraw(t *testing.T) {
	a, b := fake.NewSimpleClientset(), fake.NewSimpleClientset()
	tf := newTestFleet(t, "example.com.")
	tf.join("a", watchtest.API{Core: a}, nil)
	tf.join("b", watchtest.API{Core: b}, nil)
	tf.start(t)
	create(t, a, testutil.ClaimingService("apps", "web", 100, "", "192.0.2.1"))
	create(t, b, testutil.ClaimingService("apps", "web", 100, "", "192.0.2.2"))
	tf.answers(t, "web.apps.example.com.", dns.TypeA, watchtest.Expect(t, "NOERROR", []string{"web.apps.example.com. 60 IN A 192.0.2.1", "web.apps.example.com. 60 IN A 192.0.2.2"}))
	cl := tf.remove("b")
	cl.Stop()
	cl.sink.withdraw()
	tf.answers(t, "web.apps.example.com.", dns.TypeA, watchtest.Expect(t, "NOERROR", []string{"web.apps.example.com. 60 IN A 192.0.2.1"}))
	if c, _ := tf.Of("b/Service/apps/web"); c != nil {
		t.Errorf("key of the removed cluster b belongs to %q", c.Name)
	}
}

// TestFleetUnreachableCluster: a cluster whose API server never answers is
// reported unreachable (not synced, not connected), and the other cluster's
// names are answered. (That it does not hold back the plugin's readiness
// beyond clusterWait is the plugin's own test.)
func TestFleetUnreachableCluster(t *testing.T) {
	a, down := fake.NewSimpleClientset(), fake.NewSimpleClientset()
	down.PrependReactor("list", "*", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("unreachable")
	})
	create(t, a, testutil.ClaimingService("apps", "web", 100, "web.example.com", "192.0.2.1"))
	tf := newTestFleet(t, "example.com.")
	up := tf.join("a", watchtest.API{Core: a}, nil)
	tf.join("down", watchtest.API{Core: down}, nil)
	tf.startClusters(t)
	select {
	case <-up.Controller.Synced():
	case <-time.After(10 * time.Second):
		t.Fatal("cluster a not synced after 10s")
	}
	tf.ix.Flush()
	tf.answers(t, "web.example.com.", dns.TypeA, watchtest.Expect(t, "NOERROR", []string{"web.example.com. 60 IN A 192.0.2.1"}))
	testutil.Eventually(t, "cluster metrics", func() string {
		synced, conn := gauge(t, "cluster_synced", "a"), gauge(t, "cluster_connected", "a")
		downSynced, downConn := gauge(t, "cluster_synced", "down"), gauge(t, "cluster_connected", "down")
		if synced != 1 || conn != 1 || downSynced != 0 || downConn != 0 {
			return fmt.Sprintf("a synced %v connected %v, down synced %v connected %v", synced, conn, downSynced, downConn)
		}
		return ""
	})
}

// TestFleetPriorities: two merged clusters of priorities 1 and 2 with
// health; the standby answers while the primary has no healthy target.
func TestFleetPriorities(t *testing.T) {
	ctx := context.Background()
	a, b := fake.NewSimpleClientset(), fake.NewSimpleClientset()
	tf, primary, standby := startPrimaryAndStandby(t, a, b, func(cfg *watch.Config) { cfg.Health = true })
	if _, err := a.DiscoveryV1().EndpointSlices("apps").Create(ctx, testutil.EndpointSlice("apps", "web-1", "web", false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tf.answers(t, "web.example.com.", dns.TypeA, standby)
	if got := tf.ix.Health("example.com."); got.Standby != 2 { // web.example.com and web.apps.example.com
		t.Errorf("health %+v, want 2 standby names", got)
	}
	// The failover of a: set down, as its health watch does after a silence.
	if _, err := a.DiscoveryV1().EndpointSlices("apps").Update(ctx, testutil.EndpointSlice("apps", "web-1", "web", true), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	tf.answers(t, "web.example.com.", dns.TypeA, primary)
	tf.ix.SetDown("a/", true)
	tf.answers(t, "web.example.com.", dns.TypeA, standby)
	tf.ix.SetDown("a/", false)
	tf.answers(t, "web.example.com.", dns.TypeA, primary)
}
