//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestTenantQuota: a namespace publishes at most tenant_quota records. Its
// objects come in oldest first; the one that does not fit publishes nothing
// at any of its names, its tenant is told with an Event, another namespace
// is not affected, and it comes in once room is made.
func TestTenantQuota(t *testing.T) {
	s := startServer(t, "test/e2e/testdata/Corefile.quota", kubeconfig)
	tenant, other := namespace(t), namespace(t)
	name := func(label, ns string) string { return label + "." + ns + ".example.com." }

	// Two records each: the Service's own name and its annotation's.
	claimingService(t, tenant, "one", name("a", tenant), "192.0.2.11")
	s.eventually(t, 5*time.Second, name("a", tenant), dns.TypeA, positive(name("a", tenant)+" 30 IN A 192.0.2.11"))
	afterCreationSecond(t, tenant, "service", "one")
	claimingService(t, tenant, "two", name("b", tenant), "192.0.2.12")
	claimingService(t, other, "three", name("c", other), "192.0.2.13")
	s.eventually(t, 5*time.Second, name("c", other), dns.TypeA, positive(name("c", other)+" 30 IN A 192.0.2.13"))
	s.eventually(t, 5*time.Second, name("three", other), dns.TypeA, positive(name("three", other)+" 30 IN A 192.0.2.13"))

	// The newer object would make 4 records of 3: none of its names answers.
	rejectedEvents(t, tenant, "two", strings.TrimSuffix(name("b", tenant), "."), "quota of 3 records")
	for _, n := range []string{name("b", tenant), name("two", tenant)} {
		s.eventually(t, time.Second, n, dns.TypeA, nxdomain)
	}
	s.eventually(t, time.Second, name("one", tenant), dns.TypeA, positive(name("one", tenant)+" 30 IN A 192.0.2.11"))
	if !strings.Contains(s.output(), "claim of Service/"+tenant+"/two rejected: its 2 records do not fit") {
		t.Errorf("no log line names the object refused by the quota:\n%s", s.output())
	}

	// Room made: the waiting object comes in, both its names at once.
	kubectl(t, "", "-n", tenant, "delete", "service", "one", "--wait=false")
	s.eventually(t, 5*time.Second, name("b", tenant), dns.TypeA, positive(name("b", tenant)+" 30 IN A 192.0.2.12"))
	s.eventually(t, time.Second, name("two", tenant), dns.TypeA, positive(name("two", tenant)+" 30 IN A 192.0.2.12"))
	s.eventually(t, time.Second, name("a", tenant), dns.TypeA, nxdomain)
}
