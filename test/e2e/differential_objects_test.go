//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The objects of TestDifferential beyond diffObjects and diffEndpoint: the
// shapes a user's cluster has that the comparison must cover. A Gateway
// with an HTTPRoute per listener (one without hostnames: the listener's
// wildcard), load balancers that report a hostname (alone, and beside an
// address), an Ingress with a wildcard host, and names that several objects
// publish: addresses of three kinds united, a TXT beside addresses, a CNAME
// beside addresses (the addresses win), two different CNAMEs (the first
// object's wins), TTLs that differ (the smallest wins), a delegation over
// an address, a null MX and SRV (RFC 7505, RFC 2782), a TXT longer than 255
// octets, a name in mixed case, records at the apex.

// diffMoreObjects are those objects (%[1]s namespace, %[2]s zone, without
// the final dot).
const diffMoreObjects = `
apiVersion: v1
kind: Service
metadata: {name: elb, namespace: %[1]s}
spec:
  type: LoadBalancer
  ports: [{name: http, port: 80, protocol: TCP}]
---
apiVersion: v1
kind: Service
metadata:
  name: mixed
  namespace: %[1]s
  annotations: {external-dns.alpha.kubernetes.io/hostname: "mixed.%[2]s"}
spec:
  type: LoadBalancer
  ports: [{name: http, port: 80, protocol: TCP}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: apps, namespace: %[1]s}
spec:
  rules:
  - host: "*.apps.%[2]s"
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 443}}}}]}
  - host: api.apps.%[2]s
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 443}}}}]}
  - host: shop.%[2]s
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 443}}}}]}
---
apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata: {name: collide, namespace: %[1]s}
spec:
  endpoints:
  - {dnsName: www.%[2]s, recordType: A, targets: [192.0.2.21]}
  - {dnsName: shop.%[2]s, recordType: TXT, targets: ["shop"]}
  - {dnsName: secure.%[2]s, recordType: CNAME, targets: [elsewhere.example.net]}
  - {dnsName: twocname.%[2]s, recordType: CNAME, targets: [a.example.net]}
  - {dnsName: ttl.%[2]s, recordType: A, targets: [192.0.2.70], recordTTL: 300}
  - {dnsName: longtxt.%[2]s, recordType: TXT, targets: ["%[3]s"]}
  - {dnsName: Mixed.Case.%[2]s, recordType: A, targets: [192.0.2.72]}
  - {dnsName: nsa.%[2]s, recordType: NS, targets: [ns.nsa.%[2]s]}
  - {dnsName: ns.nsa.%[2]s, recordType: A, targets: [192.0.2.74]}
  - {dnsName: nullmx.%[2]s, recordType: MX, targets: ["0 ."]}
  - {dnsName: _null._tcp.%[2]s, recordType: SRV, targets: ["0 0 0 ."]}
  - {dnsName: %[2]s, recordType: MX, targets: ["10 mailhost.%[2]s"]}
---
apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata: {name: collide2, namespace: %[1]s}
spec:
  endpoints:
  - {dnsName: twocname.%[2]s, recordType: CNAME, targets: [b.example.net]}
  - {dnsName: ttl.%[2]s, recordType: A, targets: [192.0.2.71], recordTTL: 100}
  - {dnsName: nsa.%[2]s, recordType: A, targets: [192.0.2.73]}
`

// applyDiffMoreObjects creates those objects, with the Gateway and its
// routes, sets their statuses, and waits until the last of each kind
// answers.
func applyDiffMoreObjects(t *testing.T, s *server, ns, zone string) {
	t.Helper()
	chartKubectlRetrying(t, fmt.Sprintf(diffMoreObjects, ns, zone, strings.Repeat("0123456789", 30)), "apply", "-f", "-")
	setLBStatus(t, ns, "service", "elb", "lb-5678.elb.example.net")
	setLBStatus(t, ns, "service", "mixed", "192.0.2.60", "lb-mixed.example.net")
	setLBStatus(t, ns, "ingress", "apps", "192.0.2.11")

	gatewayClass(t, ns)
	kubectl(t, manifests(
		gateway{namespace: ns, name: "gw", class: ns, listeners: []listener{
			{"http", "HTTP", 80, "*.gw." + zone, ""},
			{"any", "HTTP", 8080, "", ""},
		}},
		route{kind: "HTTPRoute", namespace: ns, name: "app", parent: gwapiParent{gateway: "gw", section: "http"},
			hostnames: []string{"app.gw." + zone}, backend: "web", port: 80},
		route{kind: "HTTPRoute", namespace: ns, name: "catch", parent: gwapiParent{gateway: "gw", section: "http"},
			backend: "web", port: 80},
		route{kind: "HTTPRoute", namespace: ns, name: "multi", parent: gwapiParent{gateway: "gw", section: "any"},
			hostnames: []string{"multi." + zone, "api.apps." + zone}, backend: "web", port: 80},
	), "apply", "-f", "-")
	for _, r := range []struct{ name, section string }{{"app", "http"}, {"catch", "http"}, {"multi", "any"}} {
		setRouteStatus(t, ns, "httproutes", r.name, gwapiParent{gateway: "gw", section: r.section, accepted: "True"})
	}
	setGatewayAddresses(t, ns, "gw", "192.0.2.80", "2001:db8::80")

	z := zone + "."
	s.eventually(t, 10*time.Second, "x.gw."+z, dns.TypeAAAA, positive("x.gw."+z+" 30 IN AAAA 2001:db8::80"))
	s.eventually(t, 5*time.Second, "multi."+z, dns.TypeA, positive("multi."+z+" 30 IN A 192.0.2.80"))
	s.eventually(t, 5*time.Second, "api.apps."+z, dns.TypeA, positive("api.apps."+z+" 30 IN A 192.0.2.11", "api.apps."+z+" 30 IN A 192.0.2.80"))
	s.eventually(t, 5*time.Second, "elb."+ns+"."+z, dns.TypeCNAME, positive("elb."+ns+"."+z+" 30 IN CNAME lb-5678.elb.example.net."))
	s.eventually(t, 5*time.Second, "mixed."+z, dns.TypeA, positive("mixed."+z+" 30 IN A 192.0.2.60"))
	s.eventually(t, 5*time.Second, "twocname."+z, dns.TypeCNAME, positive("twocname."+z+" 30 IN CNAME a.example.net."))
	s.eventually(t, 5*time.Second, "ttl."+z, dns.TypeA, positive("ttl."+z+" 100 IN A 192.0.2.70", "ttl."+z+" 100 IN A 192.0.2.71"))
}

// diffMoreNames are names of the matrix (as diffNames) that those objects
// publish, or that they leave out.
var diffMoreNames = []string{
	"elb.$ns", "mixed", "mixed.$ns", "x.apps", "api.apps", "apps", "app.gw", "x.gw", "a.b.gw", "gw", "multi",
	"twocname", "ttl", "longtxt", "mixed.case", "MIXED.case", "case", "nsa", "x.nsa", "ns.nsa", "nullmx", "_null._tcp",
}
