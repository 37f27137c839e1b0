//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestPluginRestart: a restarted plugin serves the existing objects again.
func TestPluginRestart(t *testing.T) {
	s := startServer(t, "examples/Corefile", kubeconfig)
	ns := namespace(t)
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: %s}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, ns), "apply", "-f", "-")
	setLBStatus(t, ns, "service", "lb", "192.0.2.50")
	lb := "lb." + ns + ".example.com."
	s.eventually(t, 5*time.Second, lb, dns.TypeA, positive(lb+" 30 IN A 192.0.2.50"))

	s.stop()
	start := time.Now()
	s.start()
	s.eventually(t, time.Second, lb, dns.TypeA, positive(lb+" 30 IN A 192.0.2.50"))
	t.Logf("restart → ready and answering: %s", time.Since(start))
}

// TestAPIServerRestart: while the API server is down the plugin answers from
// what it knows; once it is back, changes made since reach DNS.
func TestAPIServerRestart(t *testing.T) {
	if cluster == nil {
		t.Skip("the cluster was not started by these tests; not restarting its API server")
	}
	s := startServer(t, "examples/Corefile", kubeconfig)
	ns := namespace(t)
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: %s}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, ns), "apply", "-f", "-")
	setLBStatus(t, ns, "service", "lb", "192.0.2.60")
	lb := "lb." + ns + ".example.com."
	s.eventually(t, 5*time.Second, lb, dns.TypeA, positive(lb+" 30 IN A 192.0.2.60"))

	if err := clusterScript("stop-apiserver"); err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			clusterScript("start-apiserver")
		}
	})
	for range 10 {
		s.eventually(t, time.Second, lb, dns.TypeA, positive(lb+" 30 IN A 192.0.2.60"))
		time.Sleep(200 * time.Millisecond)
	}
	if err := clusterScript("start-apiserver"); err != nil {
		t.Fatal(err)
	}
	restarted = true
	setLBStatus(t, ns, "service", "lb", "192.0.2.61")
	d := s.eventually(t, 60*time.Second, lb, dns.TypeA, positive(lb+" 30 IN A 192.0.2.61"))
	t.Logf("change after API server restart → answer: %s", d)
}
