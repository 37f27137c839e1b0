//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestIngressLifecycle follows an Ingress from creation to deletion: every
// change made through the API shows in DNS within a bounded time.
func TestIngressLifecycle(t *testing.T) {
	s := startServer(t, "test/e2e/testdata/Corefile", kubeconfig)
	ns := namespace(t)
	app, secure := "app."+ns+".example.com.", "secure."+ns+".example.com."
	kubectl(t, fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: %s}
spec:
  ingressClassName: nginx
  tls: [{hosts: [secure.%[1]s.example.com]}]
  rules:
  - host: app.%[1]s.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
  - host: outside.example.org
`, ns), "apply", "-f", "-")

	// Without a load balancer address there is nothing to publish.
	s.eventually(t, 5*time.Second, app, dns.TypeA, nxdomain)

	setLBStatus(t, ns, "ingress", "web", "192.0.2.10")
	d := s.eventually(t, 5*time.Second, app, dns.TypeA, positive(app+" 30 IN A 192.0.2.10"))
	t.Logf("create → answer: %s", d)
	s.eventually(t, time.Second, secure, dns.TypeA, positive(secure+" 30 IN A 192.0.2.10"))
	s.eventually(t, time.Second, app, dns.TypeAAAA, nodata)
	s.eventually(t, time.Second, app, dns.TypeMX, nodata)
	s.eventually(t, time.Second, "other."+ns+".example.com.", dns.TypeA, nxdomain)
	// The namespace label exists only as an empty non-terminal.
	s.eventually(t, time.Second, ns+".example.com.", dns.TypeA, nodata)

	setLBStatus(t, ns, "ingress", "web", "192.0.2.11", "2001:db8::11")
	d = s.eventually(t, 5*time.Second, app, dns.TypeA, positive(app+" 30 IN A 192.0.2.11"))
	t.Logf("update → answer: %s", d)
	s.eventually(t, time.Second, app, dns.TypeAAAA, positive(app+" 30 IN AAAA 2001:db8::11"))

	// A hostname address (a cloud load balancer) is a CNAME, never a lookup.
	setLBStatus(t, ns, "ingress", "web", "lb-1234.elb.example.net")
	s.eventually(t, 5*time.Second, app, dns.TypeA, positive(app+" 30 IN CNAME lb-1234.elb.example.net."))

	kubectl(t, "", "-n", ns, "delete", "ingress", "web")
	d = s.eventually(t, 5*time.Second, app, dns.TypeA, nxdomain)
	t.Logf("delete → NXDOMAIN: %s", d)
	s.eventually(t, time.Second, ns+".example.com.", dns.TypeA, nxdomain)
}

// TestIngressIgnored checks the opt-out label and annotations on Ingresses.
func TestIngressAnnotations(t *testing.T) {
	s := startServer(t, "test/e2e/testdata/Corefile", kubeconfig)
	ns := namespace(t)
	kubectl(t, fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ignored
  namespace: %[1]s
  labels: {k8s-gateway.dns/ignore: "true"}
spec:
  rules: [{host: ignored.%[1]s.example.com}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: targeted
  namespace: %[1]s
  annotations:
    external-dns.alpha.kubernetes.io/target: 198.51.100.7
    external-dns.alpha.kubernetes.io/ttl: "120"
spec:
  rules: [{host: targeted.%[1]s.example.com}]
---
# The GA prefix wins over the alpha one; an invalid value under one prefix
# does not hide a valid one under the other.
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: both
  namespace: %[1]s
  annotations:
    external-dns.kubernetes.io/hostname: ga.%[1]s
    external-dns.alpha.kubernetes.io/hostname: alpha.%[1]s
    coredns.io/hostname: own.%[1]s
    external-dns.kubernetes.io/target: 198.51.100.8
    external-dns.alpha.kubernetes.io/target: 198.51.100.7
    external-dns.kubernetes.io/ttl: soon
    external-dns.alpha.kubernetes.io/ttl: "90"
spec:
  rules: [{host: both.%[1]s.example.com}]
`, ns), "apply", "-f", "-")
	setLBStatus(t, ns, "ingress", "ignored", "192.0.2.20")
	setLBStatus(t, ns, "ingress", "targeted", "192.0.2.21")
	name := "targeted." + ns + ".example.com."
	s.eventually(t, 5*time.Second, name, dns.TypeA, positive(name+" 120 IN A 198.51.100.7"))
	s.eventually(t, time.Second, "ignored."+ns+".example.com.", dns.TypeA, nxdomain)
	for _, host := range []string{"both", "ga", "own"} {
		name := host + "." + ns + ".example.com."
		s.eventually(t, 5*time.Second, name, dns.TypeA, positive(name+" 90 IN A 198.51.100.8"))
	}
	s.eventually(t, time.Second, "alpha."+ns+".example.com.", dns.TypeA, nxdomain)
}

// TestIngressDefaultClass: with ingressClasses set, an Ingress without a class
// has the cluster's default IngressClass: it is published while that class
// is the default, and withdrawn when it no longer is.
func TestIngressDefaultClass(t *testing.T) {
	ns := namespace(t)
	class := "e2e-" + ns
	s := startServer(t, tempCorefile(t, fmt.Sprintf(`example.com:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    errors
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    k8s_gateway example.com {
        kubeconfig {$KUBECONFIG}
        resources Ingress
        ingressClasses %s
        ttl 30
    }
}
`, class)), kubeconfig)
	// Created while there is no default class, so the admission plugin leaves it class-less.
	kubectl(t, fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: %[1]s}
spec: {rules: [{host: web.%[1]s.example.com}]}
`, ns), "apply", "-f", "-")
	setLBStatus(t, ns, "ingress", "web", "192.0.2.140")
	web := "web." + ns + ".example.com."
	s.eventually(t, 5*time.Second, web, dns.TypeA, nxdomain)

	kubectl(t, fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: %s
  annotations: {ingressclass.kubernetes.io/is-default-class: "true"}
spec: {controller: example.com/ingress}
`, class), "apply", "-f", "-")
	t.Cleanup(func() { kubectlErr("", "delete", "ingressclass", class) })
	s.eventually(t, 5*time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.140"))

	kubectl(t, "", "annotate", "--overwrite", "ingressclass", class, "ingressclass.kubernetes.io/is-default-class=false")
	s.eventually(t, 5*time.Second, web, dns.TypeA, nxdomain)
}
