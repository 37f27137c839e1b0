//go:build e2e

package e2e

import (
	"strconv"
	"testing"
	"time"
)

// TestFleetSteering: two real API servers, one cluster located in DE with
// weight 3, the other in the US with weight 1, publish one name. Clients in
// DE get cluster one, in the US cluster two, elsewhere both by weight; when
// cluster one's target turns unhealthy, everyone gets cluster two (health
// comes first, and the name never turns NODATA); when it heals, it is back.
// When cluster one's API server has been silent longer than failover, its
// targets count as unhealthy too: the DE client gets cluster two until the
// API server is back.
func TestFleetSteering(t *testing.T) {
	mmdb := testMMDB(t)
	kc2 := secondCluster(t)
	s := startServer(t, "test/e2e/testdata/Corefile.steering-fleet", kubeconfig,
		"KUBECONFIG2="+kc2, "K8S_GATEWAY_MMDB="+mmdb)
	ns := fleetNamespace(t, kubeconfig, kc2)
	app := "app." + ns + ".example.com."
	steeredService(t, kubeconfig, ns, "web", app, "192.0.2.101")
	steeredService(t, kc2, ns, "web", app, "192.0.2.102")

	ask := func(subnet string) geoAnswer { return s.askWith(t, "dig", "127.0.0.1", app, "A", "+subnet="+subnet) }
	waitFor := func(desc, subnet, want string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			a := ask(subnet)
			if a.rcode == "NOERROR" && len(a.addrs) == 1 && a.addrs[0] == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: got %+v, want %s", desc, a, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("DE client", "198.51.100.0/24", "192.0.2.101")
	waitFor("US client", "203.0.113.0/24", "192.0.2.102")
	if a := ask("198.51.100.0/24"); a.subnet != "198.51.100.0/24/24" {
		t.Errorf("ECS of the reply %q, want scope 24", a.subnet)
	}
	// A client in AU matches neither: both clusters by weight, 3:1.
	const n = 4000
	counts := s.countAnswers(t, app, "192.0.2.0/24", n)
	withinShare(t, counts, n, "192.0.2.101", 3, 4)
	withinShare(t, counts, n, "192.0.2.102", 1, 4)

	// Cluster one's target turns unhealthy: its EndpointSlice has no ready endpoint.
	slice := func(ready bool) string {
		return `
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: ` + ns + `, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints: [{addresses: ["10.1.0.1"], conditions: {ready: ` + strconv.FormatBool(ready) + `}}]
`
	}
	kubectlAt(t, kubeconfig, slice(false), "apply", "-f", "-")
	waitFor("DE client, cluster one unhealthy", "198.51.100.0/24", "192.0.2.102")
	if c := s.countAnswers(t, app, "192.0.2.0/24", 500); c["192.0.2.102"] != 500 {
		t.Errorf("AU clients with cluster one unhealthy: %v, want cluster two only", c)
	}
	kubectlAt(t, kubeconfig, slice(true), "apply", "-f", "-")
	waitFor("DE client, cluster one healthy again", "198.51.100.0/24", "192.0.2.101")

	// Cluster one's API server goes away: its last known target answers,
	// then after failover (5 s) it counts as unhealthy.
	stopped := time.Now()
	start := stopAPIServer(t)
	waitFor("DE client, cluster one silent, before failover", "198.51.100.0/24", "192.0.2.101")
	waitFor("DE client, cluster one failed over", "198.51.100.0/24", "192.0.2.102")
	if el := time.Since(stopped); el < 5*time.Second {
		t.Errorf("failed over after %s, before the failover time", el)
	}
	if c := s.countAnswers(t, app, "192.0.2.0/24", 500); c["192.0.2.102"] != 500 {
		t.Errorf("AU clients with cluster one failed over: %v, want cluster two only", c)
	}
	start()
	deadline := time.Now().Add(30 * time.Second)
	for a := ask("198.51.100.0/24"); len(a.addrs) != 1 || a.addrs[0] != "192.0.2.101"; a = ask("198.51.100.0/24") {
		if time.Now().After(deadline) {
			t.Fatal("DE client: cluster one never back after its API server")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
