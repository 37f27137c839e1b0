//go:build e2e

package e2e

import (
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestPluginRestart: a restarted plugin serves the existing objects again.
func TestPluginRestart(t *testing.T) {
	s := startServer(t, "test/e2e/testdata/Corefile", kubeconfig)
	ns := namespace(t)
	lb := lbService(t, s, ns, "192.0.2.50")

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
	s := startServer(t, "test/e2e/testdata/Corefile", kubeconfig)
	ns := namespace(t)
	lb := lbService(t, s, ns, "192.0.2.60")

	startAPIServer := stopAPIServer(t)
	for range 10 {
		s.eventually(t, time.Second, lb, dns.TypeA, positive(lb+" 30 IN A 192.0.2.60"))
		time.Sleep(200 * time.Millisecond)
	}
	startAPIServer()
	setLBStatus(t, ns, "service", "lb", "192.0.2.61")
	d := s.eventually(t, 60*time.Second, lb, dns.TypeA, positive(lb+" 30 IN A 192.0.2.61"))
	t.Logf("change after API server restart → answer: %s", d)
}
