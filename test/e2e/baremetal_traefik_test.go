//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// traefikGatewayController is the controllerName of Traefik's Gateway API
// provider; traefikIngressController the controller of its IngressClasses.
const (
	traefikGatewayController = "traefik.io/gateway-controller"
	traefikIngressController = "traefik.io/ingress-controller"
)

// traefikStack is two Traefik instances: a, the Ingress controller and the
// controller of the GatewayClass traefik-a-NS (its Service asks MetalLB for
// 192.0.2.10), and b, the controller of traefik-b-NS (an address of the pool).
// Each handles the GatewayClasses its label selector picks; both write
// status.parents of the route that names a Gateway of each.
type traefikStack struct {
	a, b       *controller
	addrA      string
	addrB      string
	portHTTP   int // the entry points of a, b: a Gateway listener's port names one
	portTLS    int
	portHTTPB  int
	ingressCls string
}

func (bm *bareMetal) startTraefik(t *testing.T) *traefikStack {
	ns := bm.ns
	ts := &traefikStack{portHTTP: freePort(t), portTLS: freePort(t), portHTTPB: freePort(t), ingressCls: "traefik-" + ns}
	kubectl(t, lbServiceYAML(ns, "traefik", "metallb.universe.tf/loadBalancerIPs: 192.0.2.10", 80)+
		lbServiceYAML(ns, "traefik-b", "", 80)+fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: %[1]s}
spec: {ports: [{name: http, port: 80}, {name: https, port: 443}]}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: %[2]s}
spec: {controller: %[3]s}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: traefik-a-%[1]s, labels: {k8sgw-e2e: %[1]s-a}}
spec: {controllerName: %[4]s}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: traefik-b-%[1]s, labels: {k8sgw-e2e: %[1]s-b}}
spec: {controllerName: %[4]s}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw-a, namespace: %[1]s}
spec:
  gatewayClassName: traefik-a-%[1]s
  listeners:
  - {name: web, protocol: HTTP, port: %[5]d, hostname: "*.%[1]s.example.com"}
  - {name: tls, protocol: TLS, port: %[6]d, hostname: "*.%[1]s.example.com", tls: {mode: Passthrough}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw-b, namespace: %[1]s}
spec:
  gatewayClassName: traefik-b-%[1]s
  listeners:
  - {name: web, protocol: HTTP, port: %[7]d, hostname: "*.b.%[1]s.example.com"}
`, ns, ts.ingressCls, traefikIngressController, traefikGatewayController, ts.portHTTP, ts.portTLS, ts.portHTTPB), "apply", "-f", "-")
	t.Cleanup(func() {
		kubectlErr("", "delete", "ingressclass", ts.ingressCls, "--ignore-not-found", "--wait=false")
		kubectlErr("", "delete", "gatewayclass", "traefik-a-"+ns, "traefik-b-"+ns, "--ignore-not-found", "--wait=false")
	})
	ts.addrA = waitLB(t, ns, "traefik", bm.metallb)
	ts.addrB = waitLB(t, ns, "traefik-b", bm.metallb)
	ts.a = startTraefik(t, "traefik-a",
		"--namespaces="+ns,
		"--providers.kubernetesingress", "--providers.kubernetesingress.ingressclass="+ts.ingressCls,
		"--providers.kubernetesingress.ingressendpoint.publishedservice="+ns+"/traefik",
		"--providers.kubernetesgateway", "--providers.kubernetesgateway.labelselector=k8sgw-e2e="+ns+"-a",
		"--providers.kubernetesgateway.statusaddress.service="+ns+"/traefik",
		fmt.Sprintf("--entrypoint=web=127.0.0.1:%d", ts.portHTTP), fmt.Sprintf("--entrypoint=tls=127.0.0.1:%d", ts.portTLS))
	ts.b = startTraefik(t, "traefik-b",
		"--namespaces="+ns,
		"--providers.kubernetesgateway", "--providers.kubernetesgateway.labelselector=k8sgw-e2e="+ns+"-b",
		"--providers.kubernetesgateway.statusaddress.service="+ns+"/traefik-b",
		fmt.Sprintf("--entrypoint=web=127.0.0.1:%d", ts.portHTTPB))
	return ts
}

// routesYAML: an Ingress, an HTTPRoute, a GRPCRoute and a TLSRoute on gw-a,
// a route gw-a rejects (its hostname is no listener's), a route on both
// Gateways that only gw-a accepts, and one that gw-b accepts.
func routesYAML(ns, ingressClass string) string {
	return fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ing, namespace: %[1]s}
spec:
  ingressClassName: %[2]s
  rules: [{host: ing.%[1]s.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: http, namespace: %[1]s}
spec:
  parentRefs: [{name: gw-a}]
  hostnames: [http.%[1]s.example.com]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: grpc, namespace: %[1]s}
spec:
  parentRefs: [{name: gw-a}]
  hostnames: [grpc.%[1]s.example.com]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: tls, namespace: %[1]s}
spec:
  parentRefs: [{name: gw-a, sectionName: tls}]
  hostnames: [tls.%[1]s.example.com]
  rules: [{backendRefs: [{name: web, port: 443}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rejected, namespace: %[1]s}
spec:
  parentRefs: [{name: gw-a}]
  hostnames: [rejected.elsewhere.example.com]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: both, namespace: %[1]s}
spec:
  parentRefs: [{name: gw-a}, {name: gw-b}]
  hostnames: [both.%[1]s.example.com]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bee, namespace: %[1]s}
spec:
  parentRefs: [{name: gw-b}]
  hostnames: [bee.b.%[1]s.example.com]
  rules: [{backendRefs: [{name: web, port: 80}]}]
`, ns, ingressClass)
}

// routeParents returns "GATEWAY=Accepted-status", sorted, for each status.parents
// entry of a route written by Traefik.
func routeParents(t *testing.T, ns, kind, name string) string {
	t.Helper()
	out, _ := kubectlErr("", "-n", ns, "get", kind, name, "-o",
		`go-template={{range .status.parents}}{{if eq .controllerName "`+traefikGatewayController+`"}}{{.parentRef.name}}={{range .conditions}}{{if eq .type "Accepted"}}{{.status}}{{end}}{{end}} {{end}}{{end}}`)
	f := strings.Fields(out)
	slices.Sort(f)
	return strings.Join(f, " ")
}

// waitParents waits until Traefik wrote want as the route's parents.
func waitParents(t *testing.T, ns, kind, name, want string, ts *traefikStack) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := routeParents(t, ns, kind, name)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: Traefik wrote parents %q, want %q\ntraefik-a:\n%s\ntraefik-b:\n%s", kind, name, got, want, ts.a.output(), ts.b.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// testTraefik: the names of an Ingress and of HTTP, gRPC and TLS routes
// whose status Traefik wrote resolve, validated, to the address MetalLB gave
// Traefik's Service; a route Traefik rejects is not published; of a route
// with parents from two controllers only the accepting Gateway's address
// counts; Traefik rewrites a lost status when it restarts.
func (bm *bareMetal) testTraefik(t *testing.T) {
	ns, ts := bm.ns, bm.traefik
	chartKubectlRetrying(t, routesYAML(ns, ts.ingressCls), "apply", "-f", "-")

	waitParents(t, ns, "httproute", "http", "gw-a=True", ts)
	waitParents(t, ns, "grpcroute", "grpc", "gw-a=True", ts)
	waitParents(t, ns, "tlsroute", "tls", "gw-a=True", ts)
	waitParents(t, ns, "httproute", "rejected", "gw-a=False", ts)
	for _, label := range []string{"ing", "http", "grpc", "tls", "both"} {
		bm.atResolver(t, bm.name(label), "A", ts.addrA)
	}
	bm.atResolver(t, "rejected.elsewhere.example.com.", "A")

	// Two controllers wrote the parents of both: a accepted it, b did not.
	waitParents(t, ns, "httproute", "both", "gw-a=True gw-b=False", ts)
	bm.atResolver(t, bm.name("both"), "A", ts.addrA)
	waitParents(t, ns, "httproute", "bee", "gw-b=True", ts)
	bm.atResolver(t, "bee.b."+ns+".example.com.", "A", ts.addrB)

	t.Run("restart-rewrites-status", func(t *testing.T) {
		ts.a.stop()
		kubectl(t, "", "-n", ns, "patch", "httproute", "http", "--subresource=status", "--type=merge", "-p", `{"status":{"parents":[]}}`)
		bm.atPlugin(t, bm.name("http"), "A")
		ts.a.start(t)
		waitParents(t, ns, "httproute", "http", "gw-a=True", ts)
		bm.atResolver(t, bm.name("http"), "A", ts.addrA)
	})
}
