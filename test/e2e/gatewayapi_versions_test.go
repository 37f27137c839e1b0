//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// gwapiRoutes creates an HTTPRoute, GRPCRoute, TLSRoute, TCPRoute and
// UDPRoute tagged tag on the Gateway "gw" of gwapiVersionsGateway, with the
// TLSRoute, TCPRoute and UDPRoute at the versions given, accepts them, and
// returns the names they publish.
func gwapiRoutes(t *testing.T, ns, tag, tlsVersion, tcpVersion, udpVersion string) []string {
	t.Helper()
	kubectlRetry(t, 30*time.Second, manifests(
		route{kind: "HTTPRoute", namespace: ns, name: "h-" + tag, parent: gwapiParent{gateway: "gw", section: "http"},
			hostnames: []string{"h-" + tag + ".gw." + ns + ".example.com"}, backend: "web", port: 80},
		route{kind: "GRPCRoute", namespace: ns, name: "g-" + tag, parent: gwapiParent{gateway: "gw", section: "http"},
			hostnames: []string{"g-" + tag + ".gw." + ns + ".example.com"}, backend: "grpc", port: 9000},
		route{kind: "TLSRoute", version: tlsVersion, namespace: ns, name: "t-" + tag, parent: gwapiParent{gateway: "gw", section: "tls"},
			hostnames: []string{"t-" + tag + ".tls." + ns + ".example.com"}, backend: "tls", port: 443},
		route{kind: "TCPRoute", version: tcpVersion, namespace: ns, name: "c-" + tag, annotation: "c-" + tag + "." + ns + ".example.com",
			parent: gwapiParent{gateway: "gw", section: "tcp"}, backend: "db", port: 5432},
		route{kind: "UDPRoute", version: udpVersion, namespace: ns, name: "u-" + tag, annotation: "u-" + tag + "." + ns + ".example.com",
			parent: gwapiParent{gateway: "gw", section: "udp"}, backend: "dns", port: 53},
	), "apply", "-f", "-")
	for _, r := range []struct{ resource, name, section string }{
		{"httproutes", "h-" + tag, "http"}, {"grpcroutes", "g-" + tag, "http"}, {"tlsroutes", "t-" + tag, "tls"},
		{"tcproutes", "c-" + tag, "tcp"}, {"udproutes", "u-" + tag, "udp"},
	} {
		setRouteStatus(t, ns, r.resource, r.name, gwapiParent{gateway: "gw", section: r.section, accepted: "True"})
	}
	return []string{
		"h-" + tag + ".gw." + ns + ".example.com.", "g-" + tag + ".gw." + ns + ".example.com.",
		"t-" + tag + ".tls." + ns + ".example.com.", "c-" + tag + "." + ns + ".example.com.", "u-" + tag + "." + ns + ".example.com.",
	}
}

// gwapiWatch queries names until stop is called and reports every answer
// that was not an A record of ip.
type gwapiWatch struct {
	done   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	misses []string
	rounds int
}

func watchAnswers(s *server, ip string, names []string) *gwapiWatch {
	w := &gwapiWatch{done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			for _, name := range names {
				r, err := s.ask(name, dns.TypeA)
				if err == nil {
					err = gwapiA(name, ip).check(r)
				}
				if err != nil {
					w.mu.Lock()
					w.misses = append(w.misses, fmt.Sprintf("%s %s: %v", time.Now().Format("15:04:05.000"), name, err))
					w.mu.Unlock()
				}
			}
			w.rounds++
			select {
			case <-w.done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *gwapiWatch) stop(t *testing.T, what string) {
	t.Helper()
	close(w.done)
	w.wg.Wait()
	if len(w.misses) > 0 {
		t.Errorf("%s: %d of the answers were wrong, e.g. %s", what, len(w.misses), strings.Join(w.misses[:min(5, len(w.misses))], "; "))
	}
	t.Logf("%s: %d rounds of queries, every answer published", what, w.rounds)
}

// TestGatewayAPIVersions: with the CRDs of Gateway API v1.2 and v1.4
// (experimental channel: TLSRoute, TCPRoute and UDPRoute at v1alpha2, TLSRoute
// also at v1alpha3) and v1.6 (standard channel: every kind at v1), every
// route kind answers. The CRDs are upgraded under one running plugin, which
// reads each kind at its newest version without a restart and keeps every
// record published meanwhile.
func TestGatewayAPIVersions(t *testing.T) {
	useGatewayAPI(t, gwapiSet{"v1.2.1", "experimental"})
	s := startServer(t, "test/e2e/testdata/Corefile", kubeconfig)
	ns := namespace(t)
	gatewayClass(t, ns)
	kubectlRetry(t, 30*time.Second, manifests(gateway{namespace: ns, name: "gw", class: ns, listeners: []listener{
		{"http", "HTTP", 80, "*.gw." + ns + ".example.com", ""},
		{"tls", "TLS", 443, "*.tls." + ns + ".example.com", passthrough},
		{"tcp", "TCP", 5432, "", ""},
		{"udp", "UDP", 5353, "", ""},
	}}), "apply", "-f", "-")
	setGatewayAddresses(t, ns, "gw", "192.0.2.120")
	names := gwapiRoutes(t, ns, "v12", "v1alpha2", "v1alpha2", "v1alpha2")
	for _, name := range names {
		s.eventually(t, 5*time.Second, name, dns.TypeA, gwapiA(name, "192.0.2.120"))
	}
	for _, line := range []string{
		"TLSRoute read at gateway.networking.k8s.io/v1alpha2", "TCPRoute read at gateway.networking.k8s.io/v1alpha2",
		"UDPRoute read at gateway.networking.k8s.io/v1alpha2", "GRPCRoute read at gateway.networking.k8s.io/v1",
	} {
		if !strings.Contains(s.output(), line) {
			t.Errorf("the plugin did not log %q", line)
		}
	}

	// v1.2 → v1.4: TLSRoute gains v1alpha3.
	w := watchAnswers(s, "192.0.2.120", names)
	start := time.Now()
	useGatewayAPI(t, gwapiSet{"v1.4.1", "experimental"})
	names14 := gwapiRoutes(t, ns, "v14", "v1alpha3", "v1alpha2", "v1alpha2")
	for _, name := range names14 {
		s.eventually(t, 5*time.Second, name, dns.TypeA, gwapiA(name, "192.0.2.120"))
	}
	waitLog(t, s, 20*time.Second, "TLSRoute read at gateway.networking.k8s.io/v1alpha3 (was gateway.networking.k8s.io/v1alpha2)")
	t.Logf("v1.4 CRDs applied → TLSRoute read at v1alpha3: %s", time.Since(start).Round(time.Millisecond))
	w.stop(t, "upgrade to v1.4")
	names = append(names, names14...)

	// v1.4's experimental XListenerSet: read while it is the only kind of
	// ListenerSet served.
	waitLog(t, s, 20*time.Second, "ListenerSet enabled")
	kubectl(t, "", "-n", ns, "patch", "gateways.gateway.networking.k8s.io", "gw", "--type=merge",
		"-p", `{"spec":{"allowedListeners":{"namespaces":{"from":"Same"}}}}`)
	kubectlRetry(t, 30*time.Second, manifests(
		listenerSet{namespace: ns, name: "xls", parent: "gw", experimental: true, listeners: []listener{
			{"web", "HTTP", 80, "*.x." + ns + ".example.com", ""},
		}},
		route{kind: "HTTPRoute", namespace: ns, name: "x", parent: gwapiParent{gateway: "xls", kind: "XListenerSet"},
			hostnames: []string{"app.x." + ns + ".example.com"}, backend: "web", port: 80},
	), "apply", "-f", "-")
	kubectl(t, "", "-n", ns, "patch", "xlistenersets.gateway.networking.x-k8s.io", "xls", "--subresource=status", "--type=merge",
		"-p", fmt.Sprintf(`{"status":{"conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"set by the e2e test","lastTransitionTime":%q,"observedGeneration":1}]}}`,
			time.Now().UTC().Format(time.RFC3339)))
	setRouteStatus(t, ns, "httproutes", "x", gwapiParent{gateway: "xls", kind: "XListenerSet", accepted: "True"})
	xapp := "app.x." + ns + ".example.com."
	s.eventually(t, 5*time.Second, xapp, dns.TypeA, gwapiA(xapp, "192.0.2.120"))
	if !strings.Contains(s.output(), "ListenerSet read at gateway.networking.x-k8s.io/v1alpha1") {
		t.Errorf("the plugin did not log that ListenerSets are read as XListenerSets")
	}

	// v1.4 → v1.6: TCPRoute and UDPRoute go from v1alpha2, no longer
	// served, to v1; TLSRoute to v1.
	w = watchAnswers(s, "192.0.2.120", names)
	start = time.Now()
	useGatewayAPI(t, gwapiSet{gwapiModuleVersion(t), "standard"})
	for _, k := range []string{"TCPRoute", "UDPRoute"} {
		waitLog(t, s, 20*time.Second, k+" read at gateway.networking.k8s.io/v1 (was gateway.networking.k8s.io/v1alpha2)")
	}
	waitLog(t, s, 20*time.Second, "TLSRoute read at gateway.networking.k8s.io/v1 (was gateway.networking.k8s.io/v1alpha3)")
	// ListenerSet v1 replaces the XListenerSet, another kind of object:
	// routes through XListenerSets no longer publish.
	waitLog(t, s, 20*time.Second, "ListenerSet read at gateway.networking.k8s.io/v1 (was gateway.networking.x-k8s.io/v1alpha1)")
	s.eventually(t, time.Second, xapp, dns.TypeA, nxdomain)
	t.Logf("v1.6 CRDs applied → every kind read at v1: %s", time.Since(start).Round(time.Millisecond))
	w.stop(t, "upgrade to v1.6")
	names16 := gwapiRoutes(t, ns, "v16", "v1", "v1", "v1")
	for _, name := range names16 {
		s.eventually(t, 5*time.Second, name, dns.TypeA, gwapiA(name, "192.0.2.120"))
	}
	names = append(names, names16...)

	// The new informers follow changes: of the Gateway, and of a route.
	setGatewayAddresses(t, ns, "gw", "192.0.2.121")
	for _, name := range names {
		s.eventually(t, 5*time.Second, name, dns.TypeA, gwapiA(name, "192.0.2.121"))
	}
	kubectl(t, "", "-n", ns, "delete", "tcproutes.gateway.networking.k8s.io", "c-v12")
	s.eventually(t, 5*time.Second, "c-v12."+ns+".example.com.", dns.TypeA, nxdomain)
}

// waitLog waits until the plugin has logged line.
func waitLog(t *testing.T, s *server, timeout time.Duration, line string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(s.output(), line) {
		if time.Now().After(deadline) {
			t.Fatalf("the plugin did not log %q within %s:\n%s", line, timeout, s.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestGatewayAPIListenerSet: a tenant's ListenerSet attached to a shared
// Gateway in another namespace publishes the tenant's routes, narrowed to
// the ListenerSet's listener hostname, while the Gateway admits it.
func TestGatewayAPIListenerSet(t *testing.T) {
	installGatewayAPI(t, false)
	s := startServer(t, "test/e2e/testdata/Corefile", kubeconfig)
	gwNS, tenant := namespace(t), namespace(t)
	gatewayClass(t, gwNS)
	label := "e2e.example.com/shared-" + gwNS
	kubectl(t, "", "label", "namespace", tenant, label+"=yes")
	kubectlRetry(t, 30*time.Second, manifests(
		gateway{namespace: gwNS, name: "shared", class: gwNS, allowedListeners: "{namespaces: {from: All}}", listeners: []listener{
			{"http", "HTTP", 80, "*.shared." + gwNS + ".example.com", ""},
		}},
		listenerSet{namespace: tenant, name: "tenant", parent: "shared", parentNamespace: gwNS, listeners: []listener{
			{"web", "HTTP", 80, "*." + tenant + ".example.com", ""},
		}},
		route{kind: "HTTPRoute", namespace: tenant, name: "app", annotation: "alias." + tenant + ".example.com, alias.elsewhere.example.com",
			parent:    gwapiParent{gateway: "tenant", kind: "ListenerSet"},
			hostnames: []string{"app." + tenant + ".example.com", "app.shared." + gwNS + ".example.com"}, backend: "app", port: 80},
	), "apply", "-f", "-")
	setGatewayAddresses(t, gwNS, "shared", "192.0.2.130")
	setRouteStatus(t, tenant, "httproutes", "app", gwapiParent{gateway: "tenant", kind: "ListenerSet", accepted: "True"})
	app, alias := "app."+tenant+".example.com.", "alias."+tenant+".example.com."
	// Not yet Accepted by the Gateway's controller: nothing.
	s.eventually(t, 5*time.Second, app, dns.TypeA, nxdomain)

	start := time.Now()
	setListenerSetAccepted(t, tenant, "tenant", "True")
	s.eventually(t, 5*time.Second, app, dns.TypeA, gwapiA(app, "192.0.2.130"))
	t.Logf("ListenerSet accepted → route answers: %s", time.Since(start).Round(time.Millisecond))
	s.eventually(t, time.Second, alias, dns.TypeA, gwapiA(alias, "192.0.2.130"))
	// Outside the ListenerSet listener's hostname: never published.
	for _, name := range []string{"app.shared." + gwNS + ".example.com.", "alias.elsewhere.example.com."} {
		s.eventually(t, time.Second, name, dns.TypeA, nxdomain)
	}

	// The Gateway's addresses reach the route through the ListenerSet.
	setGatewayAddresses(t, gwNS, "shared", "192.0.2.131")
	s.eventually(t, 5*time.Second, app, dns.TypeA, gwapiA(app, "192.0.2.131"))

	// allowedListeners None: the names go within a second.
	start = time.Now()
	kubectl(t, "", "-n", gwNS, "patch", "gateways.gateway.networking.k8s.io", "shared", "--type=merge",
		"-p", `{"spec":{"allowedListeners":{"namespaces":{"from":"None"}}}}`)
	s.eventually(t, time.Second, app, dns.TypeA, nxdomain)
	s.eventually(t, time.Second, alias, dns.TypeA, nxdomain)
	t.Logf("allowedListeners None → NXDOMAIN: %s", time.Since(start).Round(time.Millisecond))

	// Selector on namespace labels: admitted while the tenant's namespace has the label.
	kubectl(t, "", "-n", gwNS, "patch", "gateways.gateway.networking.k8s.io", "shared", "--type=merge",
		"-p", fmt.Sprintf(`{"spec":{"allowedListeners":{"namespaces":{"from":"Selector","selector":{"matchLabels":{%q:"yes"}}}}}}`, label))
	s.eventually(t, time.Second, app, dns.TypeA, gwapiA(app, "192.0.2.131"))
	start = time.Now()
	kubectl(t, "", "label", "namespace", tenant, label+"=no", "--overwrite")
	s.eventually(t, time.Second, app, dns.TypeA, nxdomain)
	t.Logf("namespace label changed → NXDOMAIN: %s", time.Since(start).Round(time.Millisecond))
	kubectl(t, "", "label", "namespace", tenant, label+"=yes", "--overwrite")
	s.eventually(t, time.Second, app, dns.TypeA, gwapiA(app, "192.0.2.131"))

	// A target annotation on the ListenerSet wins over the Gateway's addresses.
	kubectl(t, "", "-n", tenant, "annotate", "listenersets.gateway.networking.k8s.io", "tenant",
		"external-dns.kubernetes.io/target=198.51.100.13")
	s.eventually(t, time.Second, app, dns.TypeA, gwapiA(app, "198.51.100.13"))

	// The ListenerSet withdrawn from the Gateway (not Accepted), or deleted.
	setListenerSetAccepted(t, tenant, "tenant", "False")
	s.eventually(t, time.Second, app, dns.TypeA, nxdomain)
	setListenerSetAccepted(t, tenant, "tenant", "True")
	s.eventually(t, time.Second, app, dns.TypeA, gwapiA(app, "198.51.100.13"))
	kubectl(t, "", "-n", tenant, "delete", "listenersets.gateway.networking.k8s.io", "tenant")
	s.eventually(t, time.Second, app, dns.TypeA, nxdomain)
	if !strings.Contains(s.output(), "ListenerSet read at gateway.networking.k8s.io/v1") {
		t.Errorf("the plugin did not log the version ListenerSets are read at")
	}
}

// setListenerSetAccepted writes a ListenerSet's Accepted condition, as the
// Gateway's controller would.
func setListenerSetAccepted(t *testing.T, ns, name, status string) {
	t.Helper()
	reason := "Accepted"
	if status != "True" {
		reason = "NotAllowed"
	}
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Accepted","status":%q,"reason":%q,"message":"set by the e2e test","lastTransitionTime":%q,"observedGeneration":1}]}}`,
		status, reason, time.Now().UTC().Format(time.RFC3339))
	kubectl(t, "", "-n", ns, "patch", "listenersets.gateway.networking.k8s.io", name, "--subresource=status", "--type=merge", "-p", patch)
}
