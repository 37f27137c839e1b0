//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// The objects of TestForkDifferential, in the test's namespace ($ns) and
// zone ($zone): Services of every type and the fork's annotations,
// Ingresses, Gateway API routes, DNSEndpoints. Addresses are documentation
// ranges; hostnames of load balancers end in .invalid, which never resolves
// (the fork looks them up when asked).
const forkObjects = `
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: $ns}
spec: {type: LoadBalancer, ports: [{name: http, port: 80, protocol: TCP}]}
---
apiVersion: v1
kind: Service
metadata: {name: lb4, namespace: $ns}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: lbhost, namespace: $ns}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: lbpending, namespace: $ns}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: cip, namespace: $ns}
spec: {type: ClusterIP, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: headless, namespace: $ns}
spec: {clusterIP: None, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: np, namespace: $ns}
spec: {type: NodePort, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: extname, namespace: $ns}
spec: {type: ExternalName, externalName: db.example.net}
---
apiVersion: v1
kind: Service
metadata: {name: extip, namespace: $ns}
spec: {type: LoadBalancer, externalIPs: [192.0.2.7], ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: cipext, namespace: $ns}
spec: {type: ClusterIP, externalIPs: [192.0.2.9], ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata:
  name: annot
  namespace: $ns
  annotations: {coredns.io/hostname: "app1.$zone, App2"}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata:
  name: annotext
  namespace: $ns
  annotations: {external-dns.alpha.kubernetes.io/hostname: ext1.$zone}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata:
  name: annotboth
  namespace: $ns
  annotations: {coredns.io/hostname: c1.$zone, external-dns.alpha.kubernetes.io/hostname: e1.$zone}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata:
  name: annotga
  namespace: $ns
  annotations: {external-dns.kubernetes.io/hostname: ga1.$zone}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata:
  name: wildsvc
  namespace: $ns
  annotations: {coredns.io/hostname: "*.wild.$zone"}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata:
  name: ignored
  namespace: $ns
  labels: {k8s-gateway.dns/ignore: "true"}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata:
  name: resolve
  namespace: $ns
  annotations: {k8s-gateway.dns/resolve-endpoints: "true"}
spec: {clusterIP: None, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata:
  name: resolvelb
  namespace: $ns
  annotations: {k8s-gateway.dns/resolve-endpoints: "true"}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: resolve-1
  namespace: $ns
  labels: {kubernetes.io/service-name: resolve}
addressType: IPv4
endpoints:
  - addresses: [10.0.0.5]
    conditions: {ready: true}
  - addresses: [10.0.0.6]
    conditions: {ready: false}
ports: [{port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: resolvelb-1
  namespace: $ns
  labels: {kubernetes.io/service-name: resolvelb}
addressType: IPv4
endpoints:
  - addresses: [10.0.0.16]
ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata:
  name: target
  namespace: $ns
  annotations: {external-dns.alpha.kubernetes.io/target: 192.0.2.17}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata:
  name: ttlsvc
  namespace: $ns
  annotations: {external-dns.alpha.kubernetes.io/ttl: "120"}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: sel-a, namespace: $ns, labels: {app: a}}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: sel-b, namespace: $ns, labels: {tier: b}}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: sel-ab, namespace: $ns, labels: {app: a, tier: b}}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: sel-none, namespace: $ns, labels: {app: c}}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata:
  name: sharedsvc
  namespace: $ns
  annotations: {coredns.io/hostname: shared.$zone}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: exdns-k8s-gateway, namespace: $ns}
spec: {type: LoadBalancer, ports: [{name: dns, port: 53, protocol: UDP}]}
---
apiVersion: v1
kind: Service
metadata: {name: exdns2-k8s-gateway, namespace: $ns}
spec: {type: LoadBalancer, ports: [{name: dns, port: 53, protocol: UDP}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: $ns}
spec:
  ingressClassName: nginx
  rules: [{host: shop.$zone}, {host: www2.$zone}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ingwild, namespace: $ns}
spec:
  ingressClassName: nginx
  rules: [{host: "*.apps.$zone"}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: inghost, namespace: $ns}
spec:
  ingressClassName: nginx
  rules: [{host: inghost.$zone}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ingother, namespace: $ns}
spec:
  ingressClassName: other
  rules: [{host: other.$zone}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ingnoclass, namespace: $ns}
spec:
  rules: [{host: noclass.$zone}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ingignored
  namespace: $ns
  labels: {k8s-gateway.dns/ignore: "true"}
spec:
  ingressClassName: nginx
  rules: [{host: ignored-ing.$zone}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ingtls, namespace: $ns}
spec:
  ingressClassName: nginx
  tls: [{hosts: [tlsonly.$zone]}]
  rules: [{host: tlsrule.$zone}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shared, namespace: $ns}
spec:
  ingressClassName: nginx
  rules: [{host: shared.$zone}]
`

// forkGatewayObjects are the Gateway API objects.
const forkGatewayObjects = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: $ns}
spec:
  gatewayClassName: fork-class
  listeners:
    - {name: http, port: 80, protocol: HTTP}
    - {name: tls, port: 443, protocol: TLS, tls: {mode: Passthrough}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gwhost, namespace: $ns}
spec:
  gatewayClassName: fork-class
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gwother, namespace: $ns}
spec:
  gatewayClassName: other-class
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: $ns}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [web.gw.$zone]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wildroute, namespace: $ns}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: ["*.wgw.$zone"]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: nostatus, namespace: $ns}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [nostatus.gw.$zone]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: tohost, namespace: $ns}
spec:
  parentRefs: [{name: gwhost}]
  hostnames: [tohost.gw.$zone]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: toother, namespace: $ns}
spec:
  parentRefs: [{name: gwother}]
  hostnames: [toother.gw.$zone]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: grpc, namespace: $ns}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [grpc.gw.$zone]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: tls, namespace: $ns}
spec:
  parentRefs: [{name: gw, sectionName: tls}]
  hostnames: [tls.gw.$zone]
  rules: [{backendRefs: [{name: lb, port: 80}]}]
`

// forkEndpointObjects are the DNSEndpoints.
const forkEndpointObjects = `
apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata: {name: dep, namespace: $ns}
spec:
  endpoints:
    - {dnsName: dep.$zone, recordType: A, targets: [192.0.2.50]}
    - {dnsName: dep6.$zone, recordType: AAAA, targets: ["2001:db8::50"]}
    - {dnsName: txt.$zone, recordType: TXT, targets: ["hello world"]}
    - {dnsName: cname.$zone, recordType: CNAME, targets: [target.example.net]}
    - {dnsName: ttl.$zone, recordType: A, targets: [192.0.2.51], recordTTL: 120}
    - {dnsName: mx.$zone, recordType: MX, targets: ["10 mail.example.net"]}
---
apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata:
  name: depignored
  namespace: $ns
  labels: {k8s-gateway.dns/ignore: "true"}
spec:
  endpoints:
    - {dnsName: depignored.$zone, recordType: A, targets: [192.0.2.52]}
`

// applyForkObjects creates the objects and gives them their status, as the
// controllers of a cluster would.
func applyForkObjects(t *testing.T, ns, zone string) {
	t.Helper()
	expand := func(s string) string {
		return strings.NewReplacer("$ns", ns, "$zone", zone).Replace(s)
	}
	kubectl(t, expand(forkObjects), "apply", "-f", "-")
	chartKubectlRetrying(t, expand(forkGatewayObjects), "apply", "-f", "-")
	chartKubectlRetrying(t, expand(forkEndpointObjects), "apply", "-f", "-")
	// The load balancers' status, four kubectl at a time.
	type lbStatus struct {
		resource, name string
		addrs          []string
	}
	var statuses []lbStatus
	for name, addrs := range map[string][]string{
		"lb": {"192.0.2.1", "2001:db8::1"}, "lb4": {"192.0.2.2"}, "lbhost": {"lb.elb.invalid"},
		"extip": {"192.0.2.8"}, "annot": {"192.0.2.10"}, "annotext": {"192.0.2.11"}, "annotboth": {"192.0.2.12"},
		"annotga": {"192.0.2.13"}, "wildsvc": {"192.0.2.14"}, "ignored": {"192.0.2.15"}, "resolvelb": {"192.0.2.16"},
		"target": {"192.0.2.18"}, "ttlsvc": {"192.0.2.19"}, "sel-a": {"192.0.2.21"}, "sel-b": {"192.0.2.22"},
		"sel-ab": {"192.0.2.24"}, "sel-none": {"192.0.2.23"}, "sharedsvc": {"192.0.2.37"},
		"exdns-k8s-gateway": {"192.0.2.53", "2001:db8::53"}, "exdns2-k8s-gateway": {"192.0.2.54"},
	} {
		statuses = append(statuses, lbStatus{"service", name, addrs})
	}
	for name, addrs := range map[string][]string{
		"shop": {"192.0.2.30", "2001:db8::30"}, "ingwild": {"192.0.2.31"}, "inghost": {"ing.elb.invalid"},
		"ingother": {"192.0.2.32"}, "ingnoclass": {"192.0.2.33"}, "ingignored": {"192.0.2.34"},
		"ingtls": {"192.0.2.35"}, "shared": {"192.0.2.36"},
	} {
		statuses = append(statuses, lbStatus{"ingress", name, addrs})
	}
	errs := make(chan error, len(statuses))
	sem := make(chan struct{}, 4)
	for _, st := range statuses {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			var items []string
			for _, a := range st.addrs {
				key := "hostname"
				if net.ParseIP(a) != nil {
					key = "ip"
				}
				items = append(items, fmt.Sprintf(`{%q: %q}`, key, a))
			}
			patch := fmt.Sprintf(`{"status": {"loadBalancer": {"ingress": [%s]}}}`, strings.Join(items, ", "))
			out, err := kubectlErr("", "-n", ns, "patch", st.resource, st.name, "--subresource=status", "--type=merge", "-p", patch)
			if err != nil {
				err = fmt.Errorf("status of %s %s: %v\n%s", st.resource, st.name, err, out)
			}
			errs <- err
		}()
	}
	for range statuses {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	setGatewayAddresses(t, ns, "gw", "192.0.2.40", "2001:db8::40")
	setGatewayAddresses(t, ns, "gwhost", "gw.elb.invalid")
	setGatewayAddresses(t, ns, "gwother", "192.0.2.41")
	accepted := func(gw, section string) gwapiParent {
		return gwapiParent{gateway: gw, section: section, accepted: "True"}
	}
	setRouteStatus(t, ns, "httproutes", "web", accepted("gw", "http"))
	setRouteStatus(t, ns, "httproutes", "wildroute", accepted("gw", "http"))
	setRouteStatus(t, ns, "httproutes", "tohost", accepted("gwhost", ""))
	setRouteStatus(t, ns, "httproutes", "toother", accepted("gwother", ""))
	setRouteStatus(t, ns, "grpcroutes", "grpc", accepted("gw", "http"))
	setRouteStatus(t, ns, "tlsroutes", "tls", accepted("gw", "tls"))
}

// forkName is one name the comparison asks about, relative to the zone
// ("@" is the apex; $ns the namespace), and what it is.
type forkName struct {
	rel, what string
}

// forkNames are the names the objects make, and names around them.
var forkNames = []forkName{
	{"@", "the apex"},
	{"exdns-k8s-gateway.$ns", "the nameserver's name (apex), from its Service"},
	{"exdns2-k8s-gateway.$ns", "the secondary nameserver's name, from its Service"},
	{"exdns-1-k8s-gateway.kube-system", "the README's apex"},
	{"x.exdns-k8s-gateway.$ns", "below the nameserver's name"},
	{"nope", "a name that does not exist"},
	{"static", "a name of the zone file only"},
	{"a.b.nope", "a deeper name that does not exist"},
	{"$ns", "the namespace: an empty non-terminal above Services"},
	{"lb.$ns", "LoadBalancer Service, IPv4 and IPv6"},
	{"LB.$ns", "LoadBalancer Service, asked in upper case"},
	{"_http._tcp.lb.$ns", "SRV name of a named port"},
	{"lb4.$ns", "LoadBalancer Service, IPv4 only"},
	{"lbhost.$ns", "LoadBalancer Service whose load balancer address is a hostname"},
	{"lbpending.$ns", "LoadBalancer Service without an address yet"},
	{"cip.$ns", "ClusterIP Service"},
	{"headless.$ns", "headless Service"},
	{"np.$ns", "NodePort Service"},
	{"extname.$ns", "ExternalName Service"},
	{"extip.$ns", "LoadBalancer Service with spec.externalIPs"},
	{"cipext.$ns", "ClusterIP Service with spec.externalIPs"},
	{"annot.$ns", "Service with a coredns.io/hostname annotation, its own name"},
	{"app1", "coredns.io/hostname, absolute name"},
	{"app2", "coredns.io/hostname, relative name in upper case"},
	{"annotext.$ns", "Service with an external-dns hostname annotation, its own name"},
	{"ext1", "external-dns.alpha.kubernetes.io/hostname"},
	{"c1", "coredns.io/hostname beside an external-dns hostname"},
	{"e1", "external-dns hostname beside coredns.io/hostname"},
	{"ga1", "external-dns.kubernetes.io/hostname (the GA prefix)"},
	{"wild", "the parent of a wildcard Service name"},
	{"x.wild", "a name under a wildcard Service name"},
	{"x.y.wild", "two labels under a wildcard Service name"},
	{"ignored.$ns", "Service with the ignore label"},
	{"resolve.$ns", "headless Service with resolve-endpoints"},
	{"resolvelb.$ns", "LoadBalancer Service with resolve-endpoints"},
	{"target.$ns", "Service with an external-dns target annotation"},
	{"ttlsvc.$ns", "Service with an external-dns ttl annotation"},
	{"sel-a.$ns", "Service labelled app=a"},
	{"sel-b.$ns", "Service labelled tier=b"},
	{"sel-ab.$ns", "Service labelled app=a and tier=b"},
	{"sel-none.$ns", "Service labelled app=c"},
	{"shared", "a name of an Ingress and of a Service"},
	{"shop", "Ingress rule host"},
	{"www2", "Ingress, second rule host"},
	{"x.apps", "a name under an Ingress wildcard host"},
	{"x.y.apps", "two labels under an Ingress wildcard host"},
	{"apps", "the parent of an Ingress wildcard host"},
	{"inghost", "Ingress whose load balancer address is a hostname"},
	{"other", "Ingress of another class"},
	{"noclass", "Ingress without a class"},
	{"ignored-ing", "Ingress with the ignore label"},
	{"tlsonly", "Ingress spec.tls host without a rule"},
	{"tlsrule", "Ingress rule host beside spec.tls"},
	{"gw", "an empty non-terminal above routes"},
	{"web.gw", "HTTPRoute"},
	{"x.wgw", "a name under an HTTPRoute wildcard hostname"},
	{"x.y.wgw", "two labels under an HTTPRoute wildcard hostname"},
	{"nostatus.gw", "HTTPRoute that no controller accepted"},
	{"tohost.gw", "HTTPRoute to a Gateway whose address is a hostname"},
	{"toother.gw", "HTTPRoute to a Gateway of another class"},
	{"grpc.gw", "GRPCRoute"},
	{"tls.gw", "TLSRoute"},
	{"dep", "DNSEndpoint A endpoint"},
	{"dep6", "DNSEndpoint AAAA endpoint"},
	{"txt", "DNSEndpoint TXT endpoint"},
	{"cname", "DNSEndpoint CNAME endpoint"},
	{"ttl", "DNSEndpoint endpoint with a recordTTL"},
	{"mx", "DNSEndpoint MX endpoint"},
	{"depignored", "DNSEndpoint with the ignore label"},
}

// forkTypes are the types asked at every name.
var forkTypes = []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeCNAME, dns.TypeTXT, dns.TypeMX, dns.TypeSRV, dns.TypeNS, dns.TypeSOA}

// absolute returns the name of rel in zone, with the namespace ns.
func (n forkName) absolute(ns, zone string) string {
	if n.rel == "@" {
		return zone + "."
	}
	return fmt.Sprintf("%s.%s.", strings.ReplaceAll(n.rel, "$ns", ns), zone)
}
