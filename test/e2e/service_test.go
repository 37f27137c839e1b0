//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestServiceLoadBalancer publishes a LoadBalancer Service under its own name,
// its hostname annotation and SRV records for its named ports.
func TestServiceLoadBalancer(t *testing.T) {
	s := startServer(t, "test/e2e/testdata/Corefile", kubeconfig)
	ns := namespace(t)
	kubectl(t, fmt.Sprintf(webServiceYAML+`---
apiVersion: v1
kind: Service
metadata: {name: internal, namespace: %[1]s}
spec:
  type: ClusterIP
  ports: [{port: 80}]
`, ns), "apply", "-f", "-")
	own := "web." + ns + ".example.com."
	s.eventually(t, 5*time.Second, own, dns.TypeA, nxdomain)

	setLBStatus(t, ns, "service", "web", "192.0.2.30", "2001:db8::30")
	d := s.eventually(t, 5*time.Second, own, dns.TypeA, positive(own+" 30 IN A 192.0.2.30"))
	t.Logf("status → answer: %s", d)
	s.eventually(t, time.Second, own, dns.TypeAAAA, positive(own+" 30 IN AAAA 2001:db8::30"))
	www := "www." + ns + ".example.com."
	s.eventually(t, time.Second, www, dns.TypeA, positive(www+" 30 IN A 192.0.2.30"))
	deep := "a.b.apps." + ns + ".example.com."
	s.eventually(t, time.Second, deep, dns.TypeA, positive(deep+" 30 IN A 192.0.2.30"))
	srv := "_https._tcp." + own
	s.eventually(t, time.Second, srv, dns.TypeSRV, expectation{
		Rcode:  "NOERROR",
		Answer: []string{srv + " 30 IN SRV 0 100 443 " + own},
		Extra:  []string{own + " 30 IN A 192.0.2.30", own + " 30 IN AAAA 2001:db8::30"},
	})
	// A load balancer that reports only a hostname: the name is a CNAME, and
	// the SRV target is the load balancer's hostname, never the CNAME (RFC 2782).
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: elb, namespace: %s}
spec:
  type: LoadBalancer
  ports: [{name: https, port: 443, protocol: TCP}]
`, ns), "apply", "-f", "-")
	setLBStatus(t, ns, "service", "elb", "lb-1234.elb.example.net")
	elb := "elb." + ns + ".example.com."
	s.eventually(t, 5*time.Second, elb, dns.TypeCNAME, positive(elb+" 30 IN CNAME lb-1234.elb.example.net."))
	s.eventually(t, time.Second, "_https._tcp."+elb, dns.TypeSRV, positive("_https._tcp."+elb+" 30 IN SRV 0 100 443 lb-1234.elb.example.net."))
	// Cluster IPs never leave the cluster.
	s.eventually(t, time.Second, "internal."+ns+".example.com.", dns.TypeA, nxdomain)

	kubectl(t, "", "-n", ns, "delete", "service", "web")
	s.eventually(t, 5*time.Second, own, dns.TypeA, nxdomain)
	s.eventually(t, time.Second, www, dns.TypeA, nxdomain)
}

// TestApexAndGlue checks SOA, NS and glue from the nameserver's own Service.
func TestApexAndGlue(t *testing.T) {
	s := startServer(t, "test/e2e/testdata/Corefile", kubeconfig)
	nameserverService(t, "192.0.2.53", "2001:db8::53")

	ns := "dns1.kube-system.example.com."
	s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, expectation{
		Rcode:  "NOERROR",
		Answer: []string{"example.com. 30 IN NS " + ns},
		Extra:  []string{ns + " 30 IN A 192.0.2.53", ns + " 30 IN AAAA 2001:db8::53"},
	})
	s.eventually(t, time.Second, ns, dns.TypeAAAA, positive(ns+" 30 IN AAAA 2001:db8::53"))
	r, err := askSOA(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Answer) != 1 || len(r.Authority) != 0 || r.Rcode != "NOERROR" || !r.AA {
		t.Fatalf("SOA: %s", r)
	}
	var serial1 uint32
	fmt.Sscanf(fieldN(r.Answer[0], 6), "%d", &serial1)

	// A change of the zone's data moves the serial forward.
	setLBStatus(t, "kube-system", "service", "dns1", "192.0.2.54")
	s.eventually(t, 5*time.Second, ns, dns.TypeA, positive(ns+" 30 IN A 192.0.2.54"))
	deadline := time.Now().Add(3 * time.Second)
	for {
		r, err = askSOA(s)
		if err != nil {
			t.Fatal(err)
		}
		var serial2 uint32
		fmt.Sscanf(fieldN(r.Answer[0], 6), "%d", &serial2)
		if int32(serial2-serial1) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serial did not increase from %d: %s", serial1, r)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// SOA and NS below the apex are NODATA, not the zone's records.
	s.eventually(t, time.Second, ns, dns.TypeSOA, nodata)
	s.eventually(t, time.Second, "kube-system.example.com.", dns.TypeNS, nodata)
}

// fieldN returns the nth whitespace-separated field of s.
func fieldN(s string, n int) string {
	if f := strings.Fields(s); n < len(f) {
		return f[n]
	}
	return ""
}

// askSOA asks for the apex SOA with dig and the Go client, again when the two
// saw different serials: the serial may move on the next second between them.
func askSOA(s *server) (reply, error) {
	var err error
	for range 5 {
		var r reply
		if r, err = s.ask("example.com.", dns.TypeSOA); err == nil {
			return r, nil
		}
		time.Sleep(300 * time.Millisecond)
	}
	return reply{}, err
}
