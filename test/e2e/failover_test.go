//go:build e2e

package e2e

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestFleetFailover: two real API servers, priority 1 and 2, publish one
// name. Only cluster one answers while it has a healthy target; cluster two
// answers while it has none, and while its API server has been silent for
// longer than failover.
func TestFleetFailover(t *testing.T) {
	kc2 := secondCluster(t)
	metrics := freePort(t)
	s := startServer(t, "test/e2e/testdata/Corefile.failover", kubeconfig,
		"KUBECONFIG2="+kc2, "K8S_GATEWAY_METRICS_PORT="+strconv.Itoa(metrics))
	ns := fleetNamespace(t, kubeconfig, kc2)
	app := "app." + ns + ".example.com"
	lbServiceAt(t, kubeconfig, ns, "web", app, "192.0.2.61")
	lbServiceAt(t, kc2, ns, "web", app, "192.0.2.62")
	one, two := positive(app+". 30 IN A 192.0.2.61"), positive(app+". 30 IN A 192.0.2.62")
	s.eventually(t, 10*time.Second, app+".", dns.TypeA, one)

	// Withdraw cluster one's health: the standby answers.
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
	d := s.eventually(t, 5*time.Second, app+".", dns.TypeA, two)
	t.Logf("cluster one unhealthy → cluster two answers: %s", d)
	if v := metric(t, metrics, "coredns_k8s_gateway_standby_names", `zone="example.com."`); v < 1 {
		t.Errorf("standby_names %v, want at least 1", v)
	}
	kubectlAt(t, kubeconfig, slice(true), "apply", "-f", "-")
	d = s.eventually(t, 5*time.Second, app+".", dns.TypeA, one)
	t.Logf("cluster one healthy again → it answers: %s", d)

	// Cluster one's API server goes away: after failover (5 s), cluster two answers.
	stopped := time.Now() // contact ends after this: the stop takes a second or so
	start := stopAPIServer(t)
	s.eventually(t, 3*time.Second, app+".", dns.TypeA, one) // its last known records, for now
	s.eventually(t, 15*time.Second, app+".", dns.TypeA, two)
	t.Logf("API server of cluster one stopped → cluster two answers after %s (failover 5s)", time.Since(stopped).Round(10*time.Millisecond))
	if el := time.Since(stopped); el < 5*time.Second {
		t.Errorf("failed over after %s, before the failover time", el)
	}
	if v := metric(t, metrics, "coredns_k8s_gateway_cluster_failed_over", `cluster="one"`); v != 1 {
		t.Errorf("cluster_failed_over{one} %v, want 1", v)
	}
	start()
	d = s.eventually(t, 30*time.Second, app+".", dns.TypeA, one)
	t.Logf("API server back → cluster one answers after %s", d)
}

// TestFleetReloadFailover: two real API servers, failover configured, whose
// objects do not change. Reload after reload of the Corefile, each after
// more than the silence that is reported (10 s) without an event, the
// primary answers throughout and no cluster is logged as silent: the new
// instance counts the old one's last contact.
func TestFleetReloadFailover(t *testing.T) {
	kc2 := secondCluster(t)
	s := startServer(t, "test/e2e/testdata/Corefile.failover", kubeconfig,
		"KUBECONFIG2="+kc2, "K8S_GATEWAY_METRICS_PORT="+strconv.Itoa(freePort(t)))
	ns := fleetNamespace(t, kubeconfig, kc2)
	app := "app." + ns + ".example.com"
	lbServiceAt(t, kubeconfig, ns, "web", app, "192.0.2.63")
	lbServiceAt(t, kc2, ns, "web", app, "192.0.2.64")
	one := positive(app + ". 30 IN A 192.0.2.63")
	s.eventually(t, 10*time.Second, app+".", dns.TypeA, one)
	// other counts the answers that are not the primary's, over d.
	other := func(d time.Duration) (n int, last string) {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			r, err := s.query(app+".", dns.TypeA)
			if err == nil {
				err = one.check(r)
			}
			if err != nil {
				n, last = n+1, err.Error()
			}
		}
		return n, last
	}
	const reloads = 4
	for i := 1; i <= reloads; i++ {
		// Quiet for longer than a silence is reported after, then the
		// reload and the seconds after it.
		if n, last := other(12 * time.Second); n > 0 {
			t.Errorf("before reload %d: %d answers not the primary's, the last: %s", i, n, last)
		}
		if err := s.Signal(syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		synced := time.Now().Add(30 * time.Second)
		for strings.Count(s.output(), "cluster two: synced") <= i {
			if time.Now().After(synced) {
				t.Fatalf("reload %d: the new instance has not synced after 30s", i)
			}
			time.Sleep(50 * time.Millisecond)
		}
		// Past the new instance's first health checks (every 2 s).
		if n, last := other(5 * time.Second); n > 0 {
			t.Errorf("after reload %d: %d answers not the primary's, the last: %s", i, n, last)
		}
	}
	if n := strings.Count(s.output(), "has not answered"); n > 0 {
		t.Errorf("%d lines calling a quiet cluster silent over %d reloads:\n%s", n, reloads, s.output())
	}
}
