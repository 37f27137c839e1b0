//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// The health option against the real API server: Services without selectors
// (kube-controller-manager writes no EndpointSlices for them), whose
// EndpointSlices the test writes as an endpoint controller would.

// healthServer starts coredns with the health option and returns it with
// its metrics port.
func healthServer(t *testing.T) (*server, int) {
	t.Helper()
	metrics := freePort(t)
	s := startServer(t, "test/e2e/testdata/Corefile.health", kubeconfig, "K8S_GATEWAY_METRICS_PORT="+strconv.Itoa(metrics))
	return s, metrics
}

// healthSlice writes the EndpointSlice name of Service svc with one endpoint.
func healthSlice(t *testing.T, ns, name, svc string, ready bool) {
	t.Helper()
	kubectl(t, fmt.Sprintf(`
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %s, namespace: %s, labels: {kubernetes.io/service-name: %s}}
addressType: IPv4
ports: [{name: http, port: 80, protocol: TCP}]
endpoints: [{addresses: ["10.1.0.1"], conditions: {ready: %t}}]
`, name, ns, svc, ready), "apply", "-f", "-")
}

// metric returns the sum of the samples of a metric whose labels contain match.
func metric(t *testing.T, port int, name, match string) float64 {
	t.Helper()
	v, err := harness.Metric(fmt.Sprintf("http://127.0.0.1:%d/metrics", port), name, match)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestHealthServices: two LoadBalancer Services publish one name; their
// EndpointSlices decide which answer.
func TestHealthServices(t *testing.T) {
	s, metrics := healthServer(t)
	ns := namespace(t)
	shop := "shop." + ns + ".example.com."
	for _, svc := range []string{"a", "b"} {
		kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: %s, namespace: %s, annotations: {coredns.io/hostname: %q}}
spec: {type: LoadBalancer, ports: [{name: http, port: 80}]}
`, svc, ns, strings.TrimSuffix(shop, ".")), "apply", "-f", "-")
	}
	setLBStatus(t, ns, "service", "a", "192.0.2.41")
	setLBStatus(t, ns, "service", "b", "192.0.2.42")
	both := positive(shop+" 30 IN A 192.0.2.41", shop+" 30 IN A 192.0.2.42")
	onlyA, onlyB := positive(shop+" 30 IN A 192.0.2.41"), positive(shop+" 30 IN A 192.0.2.42")
	// No EndpointSlices yet: unknown is not down.
	s.eventually(t, 5*time.Second, shop, dns.TypeA, both)

	healthSlice(t, ns, "a-1", "a", true)
	healthSlice(t, ns, "b-1", "b", true)
	healthSlice(t, ns, "a-1", "a", false)
	d := s.eventually(t, 5*time.Second, shop, dns.TypeA, onlyB)
	t.Logf("a unready → only b answers: %s", d)

	// Both unhealthy: fail open, and the metrics say so.
	healthSlice(t, ns, "b-1", "b", false)
	s.eventually(t, 5*time.Second, shop, dns.TypeA, both)
	if v := metric(t, metrics, "coredns_k8s_gateway_health_failopen_names", `zone="example.com."`); v < 1 {
		t.Errorf("health_failopen_names %v, want at least 1", v)
	}
	if v := metric(t, metrics, "coredns_k8s_gateway_health_unhealthy_targets", `zone="example.com."`); v < 2 {
		t.Errorf("health_unhealthy_targets %v, want at least 2", v)
	}
	healthSlice(t, ns, "a-1", "a", true)
	s.eventually(t, 5*time.Second, shop, dns.TypeA, onlyA)
	healthSlice(t, ns, "b-1", "b", true)
	s.eventually(t, 5*time.Second, shop, dns.TypeA, both)

	// One Normal Event when a's addresses were withdrawn, one when they came back.
	events := waitEvents(t, ns, "a", 2)
	if !slices.Contains(events, "DNSTargetsUnhealthy") || !slices.Contains(events, "DNSTargetsHealthy") {
		t.Errorf("Events on Service a: %q", events)
	}

	// The time from an EndpointSlice write (kubectl started; it takes about
	// 100 ms itself) to the answer, over 20 flips.
	var took []time.Duration
	for i := range 20 {
		ready := i%2 == 1
		want := onlyB
		if ready {
			want = both
		}
		start := time.Now()
		healthSlice(t, ns, "a-1", "a", ready)
		took = append(took, s.until(t, start, 5*time.Second, shop, dns.TypeA, want))
	}
	slices.Sort(took)
	t.Logf("EndpointSlice write → answer over %d flips: median %s, max %s", len(took), took[len(took)/2], took[len(took)-1])
	if took[len(took)/2] > time.Second || took[len(took)-1] > 2*time.Second {
		t.Errorf("median %s, max %s: want within 1 s and 2 s", took[len(took)/2], took[len(took)-1])
	}
}

// until polls name/qtype with the Go client alone (dig, a process per query,
// would add its own start to the measure) and returns how long after start
// the answer was want; it checks that answer with dig too.
func (s *server) until(t *testing.T, start time.Time, timeout time.Duration, name string, qtype uint16, want expectation) time.Duration {
	t.Helper()
	for time.Since(start) < timeout {
		if r, err := s.query(name, qtype); err == nil && want.check(r) == nil {
			d := time.Since(start)
			s.eventually(t, time.Second, name, qtype, want)
			return d
		}
		time.Sleep(2 * time.Millisecond)
	}
	s.eventually(t, time.Millisecond, name, qtype, want) // fails with the last answer
	return timeout
}

// waitEvents returns the reasons of the Events on the Service name, once
// there are at least n.
func waitEvents(t *testing.T, ns, name string, n int) []string {
	t.Helper()
	var reasons []string
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(100 * time.Millisecond) {
		out := kubectl(t, "", "-n", ns, "get", "events", "--field-selector", "involvedObject.name="+name, "-o", "json")
		var list struct {
			Items []struct {
				Reason string `json:"reason"`
				Type   string `json:"type"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatal(err)
		}
		reasons = reasons[:0]
		for _, e := range list.Items {
			reasons = append(reasons, e.Reason)
		}
		if len(reasons) >= n {
			break
		}
	}
	return reasons
}

// TestHealthGateway: a Gateway whose Programmed condition is False gives no
// healthy addresses; a route whose backend Service has no ready endpoint
// neither.
func TestHealthGateway(t *testing.T) {
	installGatewayAPI(t, false)
	s, _ := healthServer(t)
	ns := namespace(t)
	gatewayClass(t, ns)
	host := "app.g." + ns + ".example.com"
	var objs []manifest
	for _, gw := range []string{"gw1", "gw2"} {
		objs = append(objs, gateway{namespace: ns, name: gw, class: ns, listeners: []listener{{"http", "HTTP", 80, "*.g." + ns + ".example.com", ""}}},
			route{kind: "HTTPRoute", namespace: ns, name: "r-" + gw, parent: gwapiParent{gateway: gw, section: "http"},
				hostnames: []string{host}, backend: "web-" + gw, port: 80})
	}
	kubectl(t, manifests(objs...), "apply", "-f", "-")
	setGatewayAddresses(t, ns, "gw1", "192.0.2.51")
	setGatewayAddresses(t, ns, "gw2", "192.0.2.52")
	for _, gw := range []string{"gw1", "gw2"} {
		setProgrammed(t, ns, gw, "True")
		setRouteStatus(t, ns, "httproutes", "r-"+gw, gwapiParent{gateway: gw, section: "http", accepted: "True"})
	}
	name := host + "."
	both := positive(name+" 30 IN A 192.0.2.51", name+" 30 IN A 192.0.2.52")
	s.eventually(t, 10*time.Second, name, dns.TypeA, both)

	setProgrammed(t, ns, "gw1", "False")
	d := s.eventually(t, 5*time.Second, name, dns.TypeA, positive(name+" 30 IN A 192.0.2.52"))
	t.Logf("gw1 Programmed=False → withdrawn: %s", d)
	setProgrammed(t, ns, "gw1", "True")
	s.eventually(t, 5*time.Second, name, dns.TypeA, both)

	// One route through both Gateways: gw1's address alone is withdrawn.
	shared := "both.g." + ns + ".example.com"
	kubectl(t, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: both, namespace: %s}
spec:
  parentRefs: [{name: gw1, sectionName: http}, {name: gw2, sectionName: http}]
  hostnames: [%q]
  rules: [{backendRefs: [{name: web-both, port: 80}]}]
`, ns, shared), "apply", "-f", "-")
	setRouteStatus(t, ns, "httproutes", "both", gwapiParent{gateway: "gw1", section: "http", accepted: "True"}, gwapiParent{gateway: "gw2", section: "http", accepted: "True"})
	s.eventually(t, 5*time.Second, shared+".", dns.TypeA, positive(shared+". 30 IN A 192.0.2.51", shared+". 30 IN A 192.0.2.52"))
	setProgrammed(t, ns, "gw1", "False")
	d = s.eventually(t, 5*time.Second, shared+".", dns.TypeA, positive(shared+". 30 IN A 192.0.2.52"))
	t.Logf("gw1 Programmed=False → its address withdrawn from a route of both Gateways: %s", d)
	setProgrammed(t, ns, "gw1", "True")
	s.eventually(t, 5*time.Second, shared+".", dns.TypeA, positive(shared+". 30 IN A 192.0.2.51", shared+". 30 IN A 192.0.2.52"))

	// The backend of r-gw2 has no ready endpoint: only gw1 answers.
	healthSlice(t, ns, "web-gw2-1", "web-gw2", false)
	d = s.eventually(t, 5*time.Second, name, dns.TypeA, positive(name+" 30 IN A 192.0.2.51"))
	t.Logf("backend unready → route withdrawn: %s", d)
	healthSlice(t, ns, "web-gw2-1", "web-gw2", true)
	s.eventually(t, 5*time.Second, name, dns.TypeA, both)
}

// setProgrammed writes a Gateway's Programmed condition, as its controller would.
func setProgrammed(t *testing.T, ns, name, status string) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []map[string]any{{
		"type": "Programmed", "status": status, "reason": "Programmed", "message": "set by the e2e test",
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339), "observedGeneration": 1,
	}}}})
	kubectl(t, "", "-n", ns, "patch", "gateways.gateway.networking.k8s.io", name, "--subresource=status", "--type=merge", "-p", string(patch))
}

// TestHealthIngressHosts: an Ingress's host whose backend Service has no
// ready endpoint is withdrawn where another Ingress answers; its other host
// stays.
func TestHealthIngressHosts(t *testing.T) {
	s, _ := healthServer(t)
	ns := namespace(t)
	a, b := "a."+ns+".example.com", "b."+ns+".example.com"
	kubectl(t, fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: multi, namespace: %[1]s}
spec:
  rules:
  - host: %[2]s
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: svc-a, port: {number: 80}}}}]}
  - host: %[3]s
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: svc-b, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: other, namespace: %[1]s}
spec:
  rules:
  - host: %[2]s
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: svc-o, port: {number: 80}}}}]}
`, ns, a, b), "apply", "-f", "-")
	setLBStatus(t, ns, "ingress", "multi", "192.0.2.71")
	setLBStatus(t, ns, "ingress", "other", "192.0.2.72")
	s.eventually(t, 5*time.Second, a+".", dns.TypeA, positive(a+". 30 IN A 192.0.2.71", a+". 30 IN A 192.0.2.72"))
	healthSlice(t, ns, "svc-a-1", "svc-a", false)
	d := s.eventually(t, 5*time.Second, a+".", dns.TypeA, positive(a+". 30 IN A 192.0.2.72"))
	t.Logf("svc-a unready → multi's host a withdrawn: %s", d)
	s.eventually(t, time.Second, b+".", dns.TypeA, positive(b+". 30 IN A 192.0.2.71"))
	healthSlice(t, ns, "svc-a-1", "svc-a", true)
	s.eventually(t, 5*time.Second, a+".", dns.TypeA, positive(a+". 30 IN A 192.0.2.71", a+". 30 IN A 192.0.2.72"))
}

// TestHealthPerType: a DNSEndpoint's TXT at the name of an unhealthy
// Service neither withdraws the Service's address (fail open: A answers)
// nor is withdrawn itself.
func TestHealthPerType(t *testing.T) {
	chartEnsureCRDs(t, []string{"dnsendpoints.externaldns.k8s.io"}, false, filepath.Join(repoRoot, "test/e2e/testdata/dnsendpoint-crd.yaml"))
	s, metrics := healthServer(t)
	ns := namespace(t)
	shop := "shop." + ns + ".example.com."
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: a, namespace: %[1]s, annotations: {coredns.io/hostname: %[2]q}}
spec: {type: LoadBalancer, ports: [{name: http, port: 80}]}
---
apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata: {name: txt, namespace: %[1]s}
spec:
  endpoints: [{dnsName: %[2]s, recordType: TXT, targets: ["v=shop"]}]
`, ns, strings.TrimSuffix(shop, ".")), "apply", "-f", "-")
	setLBStatus(t, ns, "service", "a", "192.0.2.43")
	addr, txt := positive(shop+" 30 IN A 192.0.2.43"), positive(shop+` 30 IN TXT "v=shop"`)
	s.eventually(t, 5*time.Second, shop, dns.TypeA, addr)
	s.eventually(t, 5*time.Second, shop, dns.TypeTXT, txt)
	unhealthy := func() float64 {
		return metric(t, metrics, "coredns_k8s_gateway_health_unhealthy_targets", `zone="example.com."`)
	}
	before := unhealthy()
	healthSlice(t, ns, "a-1", "a", false)
	for deadline := time.Now().Add(5 * time.Second); unhealthy() <= before; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the Service never counted as unhealthy")
		}
	}
	s.eventually(t, time.Second, shop, dns.TypeA, addr)
	s.eventually(t, time.Second, shop, dns.TypeTXT, txt)
}
