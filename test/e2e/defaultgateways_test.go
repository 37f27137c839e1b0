//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestGatewayAPIDefaultGateways: on the experimental CRDs of the release the
// plugin is built with (GEP-3793, Gateway API v1.6), a route that sets
// spec.useDefaultGateways and has no parentRefs publishes through the
// Gateway that its status.parents names as Accepted, while that Gateway's
// spec.defaultScope matches. The e2e test plays the Gateway controller, which
// writes the binding into status.parents only.
func TestGatewayAPIDefaultGateways(t *testing.T) {
	useGatewayAPI(t, gwapiSet{gwapiModuleVersion(t), "experimental"})
	s := startServer(t, "test/e2e/testdata/Corefile", kubeconfig)
	infra, app := namespace(t), namespace(t)
	gatewayClass(t, infra)
	zone := infra + ".example.com"
	kubectlRetry(t, 30*time.Second, defaultGatewayObjects(infra, zone, app), "apply", "-f", "-")
	// The API server kept the experimental field, and the routes have no parentRefs.
	if got := kubectl(t, "", "-n", app, "get", "httproutes.gateway.networking.k8s.io", "web",
		"-o", "jsonpath={.spec.useDefaultGateways}|{.spec.parentRefs}"); got != "All|" {
		t.Fatalf("the HTTPRoute as stored: %q, want useDefaultGateways All and no parentRefs", got)
	}
	// Addresses: an IP, and a type the plugin does not publish.
	kubectl(t, "", "-n", infra, "patch", "gateways.gateway.networking.k8s.io", "edge", "--subresource=status", "--type=merge", "-p",
		`{"status":{"addresses":[{"type":"IPAddress","value":"192.0.2.140"},{"type":"NamedAddress","value":"edge-pool"}]}}`)
	setGatewayAddresses(t, infra, "plain", "192.0.2.141")
	edge := gwapiParent{gateway: "edge", namespace: infra, accepted: "True"}
	start := time.Now()
	setRouteStatus(t, app, "httproutes", "web", edge)
	setRouteStatus(t, app, "httproutes", "optout", edge)
	setRouteStatus(t, app, "httproutes", "plain", gwapiParent{gateway: "plain", namespace: infra, accepted: "True"})

	web := "web." + zone + "."
	s.eventually(t, 5*time.Second, web, dns.TypeA, gwapiA(web, "192.0.2.140"))
	t.Logf("default Gateway binding in status → answer: %s", time.Since(start).Round(time.Millisecond))
	// The listener rules apply: "local" admits routes of its own namespace
	// only; a route that opted out, or bound to a Gateway that is no
	// default Gateway, publishes nothing.
	for _, name := range []string{"local-" + zone + ".", "optout." + zone + ".", "plain." + zone + "."} {
		s.eventually(t, time.Second, name, dns.TypeA, nxdomain)
	}
	if n := strings.Count(s.output(), `"edge-pool" of type NamedAddress ignored`); n != 1 {
		t.Errorf("the NamedAddress was logged %d times, want once:\n%s", n, s.output())
	}

	// The Gateway stops being a default Gateway: the route goes, and comes back.
	start = time.Now()
	kubectl(t, "", "-n", infra, "patch", "gateways.gateway.networking.k8s.io", "edge", "--type=merge", "-p", `{"spec":{"defaultScope":"None"}}`)
	s.eventually(t, 5*time.Second, web, dns.TypeA, nxdomain)
	t.Logf("defaultScope None → NXDOMAIN: %s", time.Since(start).Round(time.Millisecond))
	kubectl(t, "", "-n", infra, "patch", "gateways.gateway.networking.k8s.io", "edge", "--type=merge", "-p", `{"spec":{"defaultScope":"All"}}`)
	s.eventually(t, 5*time.Second, web, dns.TypeA, gwapiA(web, "192.0.2.140"))

	// The Gateway's address follows; the binding withdrawn, the name goes.
	setGatewayAddresses(t, infra, "edge", "192.0.2.142")
	s.eventually(t, 5*time.Second, web, dns.TypeA, gwapiA(web, "192.0.2.142"))
	setRouteStatus(t, app, "httproutes", "web", gwapiParent{gateway: "edge", namespace: infra, accepted: "False"})
	s.eventually(t, 5*time.Second, web, dns.TypeA, nxdomain)
}

// defaultGatewayObjects are the objects of TestGatewayAPIDefaultGateways:
// the default Gateway edge in infra (an HTTP listener for *.zone that admits
// every namespace, and one for local-zone that admits its own), the Gateway
// plain that is no default Gateway, and in app the routes web (default
// Gateways, no parentRefs), optout (useDefaultGateways: None) and plain.
func defaultGatewayObjects(infra, zone, app string) string {
	return fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: %[1]s}
spec:
  gatewayClassName: %[1]s
  defaultScope: All
  listeners:
  - {name: http, protocol: HTTP, port: 80, hostname: "*.%[2]s", allowedRoutes: {namespaces: {from: All}}}
  - {name: local, protocol: HTTP, port: 8080, hostname: "local-%[2]s"}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: plain, namespace: %[1]s}
spec:
  gatewayClassName: %[1]s
  listeners:
  - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: %[3]s}
spec:
  useDefaultGateways: All
  hostnames: ["web.%[2]s", "local-%[2]s"]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: optout, namespace: %[3]s}
spec:
  useDefaultGateways: None
  hostnames: ["optout.%[2]s"]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: plain, namespace: %[3]s}
spec:
  useDefaultGateways: All
  hostnames: ["plain.%[2]s"]
  rules: [{backendRefs: [{name: web, port: 80}]}]
`, infra, zone, app)
}
