//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestNameserverReservedUnion: under ownership union (the default) a tenant
// cannot publish at the nameserver's name, at the names between it and the
// apex (a delegation there would take the nameserver away), nor at a
// wildcard that covers it: answers, the glue of the NS answer, the zone's
// transfer and the delegation that the parent option writes into a real
// BIND parent hold the nameserver Service's address only. The tenant's
// wildcard below the apex answers other names, but not the nameserver's
// name while that has no address.
func TestNameserverReservedUnion(t *testing.T) {
	chartEnsureCRDs(t, []string{"dnsendpoints.externaldns.k8s.io"}, false, filepath.Join(repoRoot, "test/e2e/testdata/dnsendpoint-crd.yaml"))
	dir, port := t.TempDir(), freePort(t)
	secret := tsigSecret(t)
	startParentBIND(t, dir, port, secret)
	keyFile := filepath.Join(t.TempDir(), "k8sgw.key")
	writeFile(t, keyFile, secret+"\n")

	const (
		ns1   = "dns1.kube-system.example.com."
		thief = "198.51.100.66"
	)
	tenant := namespace(t)
	// The tenant comes first, before the nameserver's Service has an address.
	claimingService(t, tenant, "thief", ns1+", kube-system.example.com, *.kube-system.example.com, *.example.com", thief)
	kubectl(t, fmt.Sprintf(`
apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata: {name: takeover, namespace: %s}
spec:
  endpoints:
  - {dnsName: kube-system.example.com, recordType: NS, targets: [ns.evil.example.net]}
  - {dnsName: %s, recordType: A, targets: [%s]}
`, tenant, strings.TrimSuffix(ns1, "."), thief), "apply", "-f", "-")

	cf := filepath.Join(t.TempDir(), "Corefile")
	writeFile(t, cf, fmt.Sprintf(`example.com:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    transfer {
        to *
    }
    k8s_gateway {
        kubeconfig {$KUBECONFIG}
        apex dns1.kube-system
        ttl 30
        parent 127.0.0.1:%d key k8sgw. hmac-sha256 %s
    }
}
`, port, keyFile))
	rel, _ := filepath.Rel(repoRoot, cf)
	s := startServer(t, rel, kubeconfig)

	// Without the nameserver's address, nothing answers for its name: not
	// the tenant's records there, nor its wildcard below the apex.
	own := "thief." + tenant + ".example.com."
	s.eventually(t, 10*time.Second, own, dns.TypeA, positive(own+" 30 IN A "+thief))
	s.eventually(t, time.Second, ns1, dns.TypeA, nxdomain)
	s.eventually(t, time.Second, "missing.example.com.", dns.TypeA, nxdomain)
	waitLog(t, s, 5*time.Second, ns1+": claim of Service/"+tenant+"/thief rejected: the zone apex and the nameserver names belong to the plugin")

	nameserverService(t, "192.0.2.53")
	s.eventually(t, 10*time.Second, ns1, dns.TypeA, positive(ns1+" 30 IN A 192.0.2.53"))
	s.eventually(t, time.Second, "example.com.", dns.TypeNS, expectation{
		Rcode: "NOERROR", Answer: []string{"example.com. 30 IN NS " + ns1}, Extra: []string{ns1 + " 30 IN A 192.0.2.53"},
	})
	// The name between the nameserver's and the apex is not delegated away.
	s.eventually(t, time.Second, "kube-system.example.com.", dns.TypeNS, nodata)
	s.eventually(t, time.Second, "kube-system.example.com.", dns.TypeA, nodata)
	// Union lets the tenant's wildcard below the apex answer other names.
	s.eventually(t, time.Second, "missing.example.com.", dns.TypeA, positive("missing.example.com. 30 IN A "+thief))
	transferredOnly(t, s, thief, own, "*.example.com.")
	waitParent(t, port, 20*time.Second, []string{"dns1.kube-system.example.com. A 192.0.2.53"}, []string{thief, "evil"})

	// The nameserver's address goes: its name does not exist again, the
	// wildcard does not answer for it, and the parent keeps the last glue.
	setLBStatus(t, "kube-system", "service", "dns1")
	s.eventually(t, 10*time.Second, ns1, dns.TypeA, nxdomain)
	s.eventually(t, time.Second, "missing.example.com.", dns.TypeA, nxdomain)
	time.Sleep(2 * time.Second) // the parent option's next attempt
	if got := parentRecords(t, port); strings.Contains(got, thief) || !strings.Contains(got, "dns1.kube-system.example.com. A 192.0.2.53") {
		t.Errorf("the parent's records after the nameserver lost its address:\n%s", got)
	}
	setLBStatus(t, "kube-system", "service", "dns1", "192.0.2.54")
	s.eventually(t, 10*time.Second, ns1, dns.TypeA, positive(ns1+" 30 IN A 192.0.2.54"))
	s.eventually(t, time.Second, "missing.example.com.", dns.TypeA, positive("missing.example.com. 30 IN A "+thief))
	waitParent(t, port, 20*time.Second, []string{"dns1.kube-system.example.com. A 192.0.2.54"}, []string{thief, "192.0.2.53"})
}
