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

// diffZonesCorefile serves three zones of one block from the objects of
// namespace %[1]s: diffZone, a child zone nested in it, and a reverse zone
// (README: nested zones answer as a parent and a child on one server;
// reverse zones answer PTR for every published address).
const diffZonesCorefile = `differential.test:{$K8S_GATEWAY_PORT} sub.differential.test:{$K8S_GATEWAY_PORT} 2.0.192.in-addr.arpa:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    errors
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    transfer {
        to *
    }
    k8s_gateway differential.test sub.differential.test 2.0.192.in-addr.arpa {
        kubeconfig {$KUBECONFIG}
        namespaces %[1]s
        apex ns1.%[1]s
        secondary ns.example.net.
        ttl 30
    }
}
`

// diffZonesObjects are its objects (namespace %[1]s): a parent wildcard,
// names in the child (a wildcard, an empty non-terminal, a delegation),
// CNAMEs and an MX from one zone to the other, an explicit PTR.
const diffZonesObjects = `
apiVersion: v1
kind: Service
metadata: {name: ns1, namespace: %[1]s}
spec:
  type: LoadBalancer
  ports: [{name: dns, port: 53, protocol: UDP}]
---
apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata: {name: zones, namespace: %[1]s}
spec:
  endpoints:
  - {dnsName: "*.differential.test", recordType: A, targets: [192.0.2.1]}
  - {dnsName: www.differential.test, recordType: A, targets: [192.0.2.2]}
  - {dnsName: www.differential.test, recordType: AAAA, targets: ["2001:db8::2"]}
  - {dnsName: www.sub.differential.test, recordType: A, targets: [192.0.2.3]}
  - {dnsName: "*.w.sub.differential.test", recordType: A, targets: [192.0.2.4]}
  - {dnsName: x.y.sub.differential.test, recordType: A, targets: [192.0.2.5]}
  - {dnsName: alias.differential.test, recordType: CNAME, targets: [www.sub.differential.test]}
  - {dnsName: back.sub.differential.test, recordType: CNAME, targets: [www.differential.test]}
  - {dnsName: mail.differential.test, recordType: MX, targets: ["10 mx.sub.differential.test"]}
  - {dnsName: mx.sub.differential.test, recordType: A, targets: [192.0.2.6]}
  - {dnsName: deleg.differential.test, recordType: NS, targets: [ns.deleg.differential.test]}
  - {dnsName: ns.deleg.differential.test, recordType: A, targets: [192.0.2.7]}
  - {dnsName: d.sub.differential.test, recordType: NS, targets: [ns.example.net]}
  - {dnsName: 9.2.0.192.in-addr.arpa, recordType: PTR, targets: [named.differential.test]}
`

// diffZonesNames are names of the matrix of TestDifferentialZones.
var diffZonesNames = []string{
	"differential.test.", "sub.differential.test.", "2.0.192.in-addr.arpa.",
	"www.differential.test.", "x.differential.test.", "x.sub.differential.test.", "www.sub.differential.test.",
	"a.w.sub.differential.test.", "y.sub.differential.test.", "x.y.sub.differential.test.", "alias.differential.test.",
	"back.sub.differential.test.", "mail.differential.test.", "x.deleg.differential.test.", "d.sub.differential.test.",
	"x.d.sub.differential.test.", "1.2.0.192.in-addr.arpa.", "9.2.0.192.in-addr.arpa.", "99.2.0.192.in-addr.arpa.",
}

// TestDifferentialZones is TestDifferential for a block of three zones, a
// parent, its child and a reverse zone: Knot and BIND serve all three as
// secondaries, and the plugin must answer as they do, a matrix and a
// randomized campaign over the names of the three.
func TestDifferentialZones(t *testing.T) {
	chartEnsureCRDs(t, []string{"dnsendpoints.externaldns.k8s.io"}, false, filepath.Join(repoRoot, "test/e2e/testdata/dnsendpoint-crd.yaml"))
	ns := namespace(t)
	s := startServer(t, tempCorefile(t, fmt.Sprintf(diffZonesCorefile, ns)), kubeconfig)
	chartKubectlRetrying(t, fmt.Sprintf(diffZonesObjects, ns), "apply", "-f", "-")
	setLBStatus(t, ns, "service", "ns1", "192.0.2.53", "2001:db8::53")
	s.eventually(t, 10*time.Second, "ns1."+ns+"."+diffZone, dns.TypeA, positive("ns1."+ns+"."+diffZone+" 30 IN A 192.0.2.53"))
	s.eventually(t, 5*time.Second, "x.y.sub."+diffZone, dns.TypeA, positive("x.y.sub."+diffZone+" 30 IN A 192.0.2.5"))
	s.eventually(t, 5*time.Second, "9.2.0.192.in-addr.arpa.", dns.TypePTR, positive("9.2.0.192.in-addr.arpa. 30 IN PTR named.differential.test."))

	zones := []string{diffZone, "sub." + diffZone, "2.0.192.in-addr.arpa."}
	peers, axfr := startDiffSecondaries(t, s.port, zones...)
	var tally diffTally
	n := 0
	for _, name := range diffZonesNames {
		for _, qtype := range diffTypes {
			for _, f := range diffFlagSets[:4] {
				c, err := peers.ask(diffQuery{name: name, qtype: qtype, flags: f}, false)
				if err != nil {
					t.Fatal(err)
				}
				tally.add(c)
				n++
			}
		}
	}
	t.Logf("zones %s: %d queries to each server; allowed differences: %v", strings.Join(zones, " "), n, tally.forgiven)
	reportDiffs(t, "queries", n, tally.diffs)
	checkRandomQueries(t, peers, axfr)
}
