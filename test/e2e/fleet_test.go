//go:build e2e

package e2e

import (
	"testing"
	"time"

	"github.com/miekg/dns"
)

// startFleetServer runs coredns with a fleet Corefile on both clusters.
func startFleetServer(t *testing.T, corefile, kubeconfig2, ownership string) *server {
	t.Helper()
	return startServer(t, corefile, kubeconfig, "KUBECONFIG2="+kubeconfig2, "K8SGW_OWNERSHIP="+ownership)
}

// TestFleetMerged: two clusters merged into one zone. A name both publish
// answers the union. With cluster two's API server stopped, its records are
// still answered and cluster one's changes still arrive; a plugin started
// meanwhile becomes ready without cluster two. Once it is back, its changes
// arrive again.
func TestFleetMerged(t *testing.T) {
	if cluster == nil {
		t.Skip("the cluster was not started by these tests; not stopping API servers")
	}
	kc2 := secondCluster(t)
	s := startFleetServer(t, "test/e2e/testdata/Corefile.fleet", kc2, "union")
	ns := fleetNamespace(t, kubeconfig, kc2)
	web, only2 := "web."+ns+".example.com.", "only2."+ns+".example.com."
	lbServiceAt(t, kubeconfig, ns, "web", "", "192.0.2.101")
	lbServiceAt(t, kc2, ns, "web", "", "192.0.2.102")
	lbServiceAt(t, kc2, ns, "only2", "", "192.0.2.103")
	s.eventually(t, 10*time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.101", web+" 30 IN A 192.0.2.102"))
	s.eventually(t, 10*time.Second, only2, dns.TypeA, positive(only2+" 30 IN A 192.0.2.103"))

	if err := cluster2.Script("stop-apiserver"); err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			cluster2.Script("start-apiserver")
		}
	})
	for range 5 {
		s.eventually(t, time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.101", web+" 30 IN A 192.0.2.102"))
		s.eventually(t, time.Second, only2, dns.TypeA, positive(only2+" 30 IN A 192.0.2.103"))
		time.Sleep(200 * time.Millisecond)
	}
	lbServiceAt(t, kubeconfig, ns, "web", "", "192.0.2.111")
	d := s.eventually(t, 30*time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.111", web+" 30 IN A 192.0.2.102"))
	t.Logf("cluster two down: a change in cluster one → answer: %s", d)

	// A plugin started while cluster two is down is ready with cluster one.
	start := time.Now()
	s2 := startFleetServer(t, "test/e2e/testdata/Corefile.fleet", kc2, "union")
	t.Logf("started with cluster two down → ready: %s", time.Since(start))
	s2.eventually(t, 5*time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.111"))
	s2.eventually(t, 5*time.Second, only2, dns.TypeA, nxdomain)

	if err := cluster2.Script("start-apiserver"); err != nil {
		t.Fatal(err)
	}
	restarted = true
	lbServiceAt(t, kc2, ns, "web", "", "192.0.2.112")
	for _, srv := range []*server{s, s2} {
		d := srv.eventually(t, 60*time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.111", web+" 30 IN A 192.0.2.112"))
		t.Logf("cluster two back: its change → answer: %s", d)
		srv.eventually(t, 10*time.Second, only2, dns.TypeA, positive(only2+" 30 IN A 192.0.2.103"))
	}
}

// TestFleetFirstOwnership: under the first policy the namespace of one
// cluster is another tenant than its namesake in the other: the later claim
// on a name, from cluster two, is rejected, and cluster two's other names are
// published.
func TestFleetFirstOwnership(t *testing.T) {
	kc2 := secondCluster(t)
	s := startFleetServer(t, "test/e2e/testdata/Corefile.fleet", kc2, "first")
	ns := fleetNamespace(t, kubeconfig, kc2)
	shop, thief := "shop."+ns+".example.com.", "thief."+ns+".example.com."
	lbServiceAt(t, kubeconfig, ns, "shop", "", "192.0.2.121")
	s.eventually(t, 10*time.Second, shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.121"))
	afterCreationSecond(t, ns, "service", "shop")
	lbServiceAt(t, kc2, ns, "thief", "shop."+ns, "192.0.2.122")
	s.eventually(t, 10*time.Second, thief, dns.TypeA, positive(thief+" 30 IN A 192.0.2.122"))
	s.eventually(t, time.Second, shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.121"))
}

// TestFleetSubdomain: each cluster publishes under its own subdomain,
// <cluster>.example.com, and nothing outside it.
func TestFleetSubdomain(t *testing.T) {
	kc2 := secondCluster(t)
	s := startFleetServer(t, "test/e2e/testdata/Corefile.fleet-subdomain", kc2, "union")
	ns := fleetNamespace(t, kubeconfig, kc2)
	lbServiceAt(t, kubeconfig, ns, "web", "", "192.0.2.131")
	lbServiceAt(t, kc2, ns, "web", "app.two.example.com,outside.example.com.", "192.0.2.132")
	one, two := "web."+ns+".one.example.com.", "web."+ns+".two.example.com."
	s.eventually(t, 10*time.Second, one, dns.TypeA, positive(one+" 30 IN A 192.0.2.131"))
	s.eventually(t, 10*time.Second, two, dns.TypeA, positive(two+" 30 IN A 192.0.2.132"))
	s.eventually(t, time.Second, "app.two.example.com.", dns.TypeA, positive("app.two.example.com. 30 IN A 192.0.2.132"))
	s.eventually(t, time.Second, "web."+ns+".example.com.", dns.TypeA, nxdomain)
	s.eventually(t, time.Second, "outside.example.com.", dns.TypeA, nxdomain)
	s.eventually(t, time.Second, "two.example.com.", dns.TypeA, nodata) // an empty non-terminal
}
