//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
)

// chartCanI asks the API server whether sa may verb resource (scope: -n NS or -A).
func chartCanI(t *testing.T, sa, verb, resource string, scope ...string) string {
	t.Helper()
	out, _ := kubectlErr("", append([]string{"auth", "can-i", verb, resource, "--as", sa}, scope...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1]) // after warnings about unknown types
}

// chartCheckPermissions proves the ServiceAccount may list and watch exactly
// readable (in namespace ns, which includes its cluster-wide rights), and do
// nothing else: `kubectl auth can-i --list` shows no other resource rule than
// the ones every authenticated user has, and spot checks of what a
// compromised DNS server would want are all "no".
func chartCheckPermissions(t *testing.T, sa, ns string, readable []string) {
	t.Helper()
	out := kubectl(t, "", "auth", "can-i", "--list", "--as", sa, "-n", ns)
	// What every authenticated user may do: system:basic-user and
	// system:cluster-trust-bundle-discovery (bound to system:authenticated).
	everyone := map[string]string{
		"selfsubjectreviews.authentication.k8s.io":      "[create]",
		"selfsubjectaccessreviews.authorization.k8s.io": "[create]",
		"selfsubjectrulesreviews.authorization.k8s.io":  "[create]",
		"clustertrustbundles.certificates.k8s.io":       "[get list watch]",
	}
	row := regexp.MustCompile(`^(\S*)\s+.*?(\[[^\]]*\])\s*$`)
	var got []string
	for _, line := range strings.Split(out, "\n")[1:] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		m := row.FindStringSubmatch(line)
		switch {
		case m == nil:
			t.Errorf("can-i --list: cannot read %q", line)
		case m[1] == "": // non-resource URLs (discovery, health): get only
			if m[2] != "[get]" {
				t.Errorf("can-i --list: non-resource rule %q", line)
			}
		case everyone[m[1]] == m[2]:
		case m[2] == "[list watch]":
			got = append(got, m[1])
		default:
			t.Errorf("can-i --list: rule beyond list/watch: %q", line)
		}
	}
	slices.Sort(got)
	got = slices.Compact(got)
	want := slices.Sorted(slices.Values(readable))
	if !slices.Equal(got, want) {
		t.Errorf("can-i --list -n %s: list/watch on\n got %q\nwant %q\n%s", ns, got, want, out)
	}

	// Four kubectl processes at a time.
	var wg sync.WaitGroup
	limit := make(chan struct{}, 4)
	for _, c := range []struct{ verb, resource string }{
		{"get", "secrets"}, {"list", "secrets"}, {"watch", "secrets"}, {"list", "configmaps"},
		{"get", "services"}, {"update", "services"}, {"patch", "services"}, {"delete", "services"},
		{"patch", "services/status"}, {"update", "services/status"},
		{"patch", "ingresses.networking.k8s.io/status"}, {"update", "httproutes.gateway.networking.k8s.io/status"},
		{"patch", "gateways.gateway.networking.k8s.io/status"}, {"delete", "ingresses.networking.k8s.io"},
		{"create", "configmaps"}, {"create", "pods"}, {"create", "services"}, {"create", "serviceaccounts/token"},
		{"create", "dnsendpoints.externaldns.k8s.io"}, {"create", "*"}, {"*", "*"},
		{"list", "customresourcedefinitions.apiextensions.k8s.io"}, {"list", "endpointslices.discovery.k8s.io"},
		{"list", "nodes"}, {"list", "pods"},
	} {
		for _, scope := range [][]string{{"-n", ns}, {"-A"}} {
			wg.Add(1)
			limit <- struct{}{}
			go func() {
				defer func() { <-limit; wg.Done() }()
				if got := chartCanI(t, sa, c.verb, c.resource, scope...); got != "no" {
					t.Errorf("can-i %s %s %s: %q, want no", c.verb, c.resource, strings.Join(scope, " "), got)
				}
			}()
		}
	}
	wg.Wait()
}

// chartGatewayAPIObjects creates a GatewayClass, a Gateway whose address is addr and
// an HTTPRoute for host attached to it, accepted, as a Gateway controller would.
func chartGatewayAPIObjects(t *testing.T, ns, host, addr string) {
	t.Helper()
	class := "chart-" + ns
	chartKubectlRetrying(t, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: %[2]s}
spec: {controllerName: example.com/chart-e2e}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: %[2]s
  listeners:
  - {name: http, protocol: HTTP, port: 80, hostname: "*.example.com", allowedRoutes: {namespaces: {from: Same}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route, namespace: %[1]s}
spec:
  parentRefs: [{name: gw}]
  hostnames: [%[3]s]
`, ns, class, host), "apply", "-f", "-")
	t.Cleanup(func() { kubectlErr("", "delete", "gatewayclass", class, "--ignore-not-found", "--wait=false") })
	kubectl(t, "", "-n", ns, "patch", "gateways.gateway.networking.k8s.io", "gw", "--subresource=status", "--type=merge",
		"-p", fmt.Sprintf(`{"status":{"addresses":[{"type":"IPAddress","value":%q}]}}`, addr))
	now := time.Now().UTC().Format(time.RFC3339)
	kubectl(t, "", "-n", ns, "patch", "httproutes.gateway.networking.k8s.io", "route", "--subresource=status", "--type=merge",
		"-p", fmt.Sprintf(`{"status":{"parents":[{"parentRef":{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw"},
"controllerName":"example.com/chart-e2e","conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"chart e2e",
"lastTransitionTime":%q,"observedGeneration":1}]}]}}`, now))
}

// TestChartInstall installs the chart with helm and runs the plugin with the
// release's Corefile as the release's ServiceAccount: its RBAC must be
// enough for every watched kind (nothing disabled or forbidden, answers for
// each kind and the NS glue of the release's Service) and no broader.
func TestChartInstall(t *testing.T) {
	chartHelm(t)
	chartEnsureGatewayAPI(t)
	chartEnsureCRDs(t, []string{"dnsendpoints.externaldns.k8s.io"}, true, filepath.Join(repoRoot, "test/e2e/testdata/dnsendpoint-crd.yaml"))

	// install installs release (fullname name) in ns and runs its Corefile
	// as its ServiceAccount.
	install := func(t *testing.T, ns, release, name, values string) *server {
		t.Helper()
		start := time.Now()
		notes := chartHelmOut(t, "install", release, chartDir, "--namespace", ns, "-f", chartValuesFile(t, values))
		t.Cleanup(func() { chartHelmRun(t, "uninstall", release, "--namespace", ns) })
		// NOTES.txt shows the delegation records.
		if !strings.Contains(notes, " IN NS  "+name+"."+ns+".") {
			t.Errorf("helm install printed no NS record for %s.%s:\n%s", name, ns, notes)
		}
		var cm corev1.ConfigMap
		if err := json.Unmarshal([]byte(kubectl(t, "", "-n", ns, "get", "configmap", name, "-o", "json")), &cm); err != nil {
			t.Fatal(err)
		}
		t.Logf("helm install %s in %s; Corefile:\n%s", release, time.Since(start).Round(time.Millisecond), cm.Data["Corefile"])
		s := startServer(t, chartLocalCorefile(t, cm.Data), tokenKubeconfig(t, ns, name))
		t.Logf("plugin ready as the ServiceAccount %s %s after helm install", name, time.Since(start).Round(time.Millisecond))
		out := s.output()
		for _, bad := range []string{"disabled", "forbidden", "Forbidden", "Unauthorized"} {
			if strings.Contains(out, bad) {
				t.Errorf("the plugin logged %q: the chart's RBAC does not cover a watched kind:\n%s", bad, out)
			}
		}
		return s
	}

	t.Run("all-kinds", func(t *testing.T) {
		ns := namespace(t)
		s := install(t, ns, "k8s-gateway", "k8s-gateway", "domain: example.com\nttl: 30\n")
		chartCheckPermissions(t, "system:serviceaccount:"+ns+":k8s-gateway", ns, []string{
			"services", "namespaces", "ingresses.networking.k8s.io", "dnsendpoints.externaldns.k8s.io",
			"gateways.gateway.networking.k8s.io", "httproutes.gateway.networking.k8s.io", "grpcroutes.gateway.networking.k8s.io",
			"tlsroutes.gateway.networking.k8s.io", "tcproutes.gateway.networking.k8s.io", "udproutes.gateway.networking.k8s.io",
			"listenersets.gateway.networking.k8s.io", "xlistenersets.gateway.networking.x-k8s.io",
		})

		kubectl(t, fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: %[1]s}
spec: {rules: [{host: web.%[1]s.example.com}]}
---
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: %[1]s}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, ns), "apply", "-f", "-")
		chartKubectlRetrying(t, fmt.Sprintf(`
apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata: {name: ep, namespace: %[1]s}
spec:
  endpoints: [{dnsName: ep.%[1]s.example.com, recordType: A, targets: [192.0.2.73]}]
`, ns), "apply", "-f", "-")
		route := "route." + ns + ".example.com"
		chartGatewayAPIObjects(t, ns, route, "192.0.2.74")
		setLBStatus(t, ns, "service", "k8s-gateway", "192.0.2.70")
		setLBStatus(t, ns, "ingress", "web", "192.0.2.71")
		setLBStatus(t, ns, "service", "lb", "192.0.2.72")

		web, lb, ep, nsName := "web."+ns+".example.com.", "lb."+ns+".example.com.", "ep."+ns+".example.com.", "k8s-gateway."+ns+".example.com."
		d := s.eventually(t, 5*time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.71"))
		s.eventually(t, 5*time.Second, lb, dns.TypeA, positive(lb+" 30 IN A 192.0.2.72"))
		s.eventually(t, 5*time.Second, ep, dns.TypeA, positive(ep+" 30 IN A 192.0.2.73"))
		s.eventually(t, 5*time.Second, route+".", dns.TypeA, positive(route+". 30 IN A 192.0.2.74"))
		s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, expectation{
			Rcode:  "NOERROR",
			Answer: []string{"example.com. 30 IN NS " + nsName},
			Extra:  []string{nsName + " 30 IN A 192.0.2.70"},
		})
		t.Logf("Ingress status → answer in %s", d)
	})

	t.Run("gateway-api-only", func(t *testing.T) {
		ns := namespace(t)
		s := install(t, ns, "k8s-gateway", "k8s-gateway", "domain: example.com\nttl: 30\nwatchedResources: [HTTPRoute]\n")
		// Cluster-wide: gateways, httproutes and namespaces; in the release's
		// namespace also services (the Role for the nameserver Service).
		sa := "system:serviceaccount:" + ns + ":k8s-gateway"
		chartCheckPermissions(t, sa, ns, []string{
			"services", "namespaces", "gateways.gateway.networking.k8s.io", "httproutes.gateway.networking.k8s.io",
			"listenersets.gateway.networking.k8s.io", "xlistenersets.gateway.networking.x-k8s.io",
		})
		for _, c := range []struct{ verb, resource, scope, want string }{
			{"list", "services", "-A", "no"},
			{"watch", "services", "-A", "no"},
			{"list", "ingresses.networking.k8s.io", "-A", "no"},
			{"list", "tlsroutes.gateway.networking.k8s.io", "-A", "no"},
			{"list", "httproutes.gateway.networking.k8s.io", "-A", "yes"},
		} {
			if got := chartCanI(t, sa, c.verb, c.resource, c.scope); got != c.want {
				t.Errorf("can-i %s %s %s: %q, want %s", c.verb, c.resource, c.scope, got, c.want)
			}
		}

		kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: %[1]s}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, ns), "apply", "-f", "-")
		route := "route." + ns + ".example.com"
		chartGatewayAPIObjects(t, ns, route, "192.0.2.84")
		setLBStatus(t, ns, "service", "k8s-gateway", "192.0.2.80")
		setLBStatus(t, ns, "service", "lb", "192.0.2.82")

		nsName := "k8s-gateway." + ns + ".example.com."
		s.eventually(t, 5*time.Second, route+".", dns.TypeA, positive(route+". 30 IN A 192.0.2.84"))
		s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, expectation{
			Rcode:  "NOERROR",
			Answer: []string{"example.com. 30 IN NS " + nsName},
			Extra:  []string{nsName + " 30 IN A 192.0.2.80"},
		})
		// Services are not published, only the nameserver's own.
		s.eventually(t, time.Second, "lb."+ns+".example.com.", dns.TypeA, nxdomain)
	})
	// filters.ingressClasses: the ClusterRole gains ingressclasses, and the
	// plugin, as the release's ServiceAccount, publishes a class-less Ingress
	// under the default IngressClass.
	t.Run("ingress-classes", func(t *testing.T) {
		ns := namespace(t)
		class := "e2e-" + ns
		s := install(t, ns, "k8s-gateway", "k8s-gateway", fmt.Sprintf("domain: example.com\nttl: 30\nwatchedResources: [Ingress, Service]\nfilters: {ingressClasses: [%s]}\n", class))
		chartCheckPermissions(t, "system:serviceaccount:"+ns+":k8s-gateway", ns, []string{
			"services", "ingresses.networking.k8s.io", "ingressclasses.networking.k8s.io",
		})
		kubectl(t, fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: %[1]s}
spec: {rules: [{host: web.%[1]s.example.com}]}
`, ns), "apply", "-f", "-")
		setLBStatus(t, ns, "ingress", "web", "192.0.2.75")
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
		s.eventually(t, 5*time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.75"))
	})
	// The chart README's walk-through: two releases, each the other's
	// secondary; each answers both NS records with both glue records.
	t.Run("dual-nameserver", func(t *testing.T) {
		ns := namespace(t)
		zone := "k8s.example.com."
		servers := map[string]*server{}
		for _, pair := range [][2]string{{"dns1", "dns2"}, {"dns2", "dns1"}} {
			servers[pair[0]] = install(t, ns, pair[0], pair[0], fmt.Sprintf("domain: k8s.example.com\nfullnameOverride: %s\nsecondary: %s.%s\n", pair[0], pair[1], ns))
		}
		setLBStatus(t, ns, "service", "dns1", "203.0.113.10")
		setLBStatus(t, ns, "service", "dns2", "203.0.113.20")
		ns1, ns2 := "dns1."+ns+"."+zone, "dns2."+ns+"."+zone
		for name, s := range servers {
			s.eventually(t, 5*time.Second, zone, dns.TypeNS, expectation{
				Rcode:  "NOERROR",
				Answer: []string{zone + " 60 IN NS " + ns1, zone + " 60 IN NS " + ns2},
				Extra:  []string{ns1 + " 60 IN A 203.0.113.10", ns2 + " 60 IN A 203.0.113.20"},
			})
			r, err := s.query(zone, dns.TypeSOA)
			if err != nil || len(r.Answer) != 1 || strings.Fields(r.Answer[0])[4] != name+"."+ns+"."+zone {
				t.Errorf("%s: SOA %v %v, want MNAME %s.%s.%s", name, r, err, name, ns, zone)
			}
		}
	})
}
