//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
)

// tokenKubeconfig writes a kubeconfig that authenticates as a ServiceAccount.
func tokenKubeconfig(t *testing.T, ns, sa string) string {
	t.Helper()
	token := strings.TrimSpace(kubectl(t, "", "-n", ns, "create", "token", sa, "--duration=1h"))
	server := kubectl(t, "", "config", "view", "--raw", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}")
	ca := kubectl(t, "", "config", "view", "--raw", "--minify", "-o", "jsonpath={.clusters[0].cluster.certificate-authority-data}")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, certificate-authority-data: %q}}]
users: [{name: %s, user: {token: %q}}]
contexts: [{name: c, context: {cluster: c, user: %s}}]
current-context: c
`, server, ca, sa, token, sa)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestShippedRBACSuffices runs the plugin as the ServiceAccount of
// examples/install-clusterwide.yml (the chart rendered by `make manifest`):
// its rules must be enough, and no broader than reading. Only the RBAC
// objects are applied (no Deployment or Service in kube-system).
func TestShippedRBACSuffices(t *testing.T) {
	// can-i names the Gateway API kinds: their CRDs must be there, whatever
	// ran before.
	chartEnsureGatewayAPI(t)
	text, err := os.ReadFile(filepath.Join(repoRoot, "examples/install-clusterwide.yml"))
	if err != nil {
		t.Fatal(err)
	}
	rbac := parseChartManifest(t, string(text)).only("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
	kubectl(t, rbac, "apply", "-f", "-")
	sa := "system:serviceaccount:kube-system:k8s-gateway"
	for _, check := range []struct {
		verb, resource string
		want           string
	}{
		{"list", "services", "yes"},
		{"watch", "ingresses.networking.k8s.io", "yes"},
		{"list", "httproutes.gateway.networking.k8s.io", "yes"},
		{"get", "secrets", "no"},
		{"update", "services", "no"},
		{"patch", "ingresses.networking.k8s.io/status", "no"},
		{"create", "configmaps", "no"},
	} {
		out, _ := kubectlErr("", "auth", "can-i", check.verb, check.resource, "--as", sa, "-A")
		if got := strings.TrimSpace(out); got != check.want {
			t.Errorf("can-i %s %s: got %q, want %q", check.verb, check.resource, got, check.want)
		}
	}

	s := startServer(t, "test/e2e/testdata/Corefile", tokenKubeconfig(t, "kube-system", "k8s-gateway"))
	ns := namespace(t)
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
	setLBStatus(t, ns, "ingress", "web", "192.0.2.40")
	setLBStatus(t, ns, "service", "lb", "192.0.2.41")
	web, lb := "web."+ns+".example.com.", "lb."+ns+".example.com."
	s.eventually(t, 5*time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.40"))
	s.eventually(t, 5*time.Second, lb, dns.TypeA, positive(lb+" 30 IN A 192.0.2.41"))
}

// TestForbiddenKindIsDisabled: a kind that RBAC forbids is disabled; the
// plugin still becomes ready and answers for the kinds it may read.
func TestForbiddenKindIsDisabled(t *testing.T) {
	ns := namespace(t)
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: ServiceAccount
metadata: {name: services-only, namespace: %[1]s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[1]s-services-only}
rules: [{apiGroups: [""], resources: [services], verbs: [list, watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[1]s-services-only}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[1]s-services-only}
subjects: [{kind: ServiceAccount, name: services-only, namespace: %[1]s}]
`, ns), "apply", "-f", "-")
	t.Cleanup(func() {
		kubectlErr("", "delete", "clusterrole,clusterrolebinding", ns+"-services-only")
	})
	s := startServer(t, "test/e2e/testdata/Corefile", tokenKubeconfig(t, ns, "services-only"))
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: %[1]s}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, ns), "apply", "-f", "-")
	setLBStatus(t, ns, "service", "lb", "192.0.2.42")
	lb := "lb." + ns + ".example.com."
	s.eventually(t, 5*time.Second, lb, dns.TypeA, positive(lb+" 30 IN A 192.0.2.42"))
	if out := s.output(); !strings.Contains(out, "Ingress disabled") {
		t.Errorf("no log line about the disabled Ingress kind:\n%s", out)
	}
}

// TestNamespaceScopedRBACSuffices runs the plugin with the namespaces option
// as the ServiceAccount of the chart rendered for it: Roles in the two listed
// namespaces (and on the nameserver Service in its own), no ClusterRole.
// Services, Ingresses and an HTTPRoute there are published, the route
// through a Gateway of the other listed namespace that admits it by its
// Namespace's labels (labelled while the plugin runs); a Service of a third
// namespace is not. No kind is
// disabled or refused. It sets up everything it needs, whatever ran before.
func TestNamespaceScopedRBACSuffices(t *testing.T) {
	chartEnsureGatewayAPI(t)
	ns, a, b, c := namespace(t), namespace(t), namespace(t), namespace(t)
	// Routes read the listed Namespaces by name: the Roles grant that too.
	m, sa := namespaceScopedRBAC(t, ns, fmt.Sprintf(`domain: example.com
watchedResources: [Ingress, Service, HTTPRoute]
filters:
  namespaces: [%s, %s]
`, a, b))
	checkCanI(t, sa, []canI{
		{"list", "services", []string{"-n", a}, "yes"},
		{"watch", "httproutes.gateway.networking.k8s.io", []string{"-n", b}, "yes"},
		{"list", "services", []string{"-n", c}, "no"},
		{"list", "services", []string{"-A"}, "no"},
		{"list", "namespaces", nil, "no"},
		{"get", "namespaces/" + a, []string{"-n", a}, "yes"},
		{"get", "namespaces/" + c, []string{"-n", c}, "no"},
	})

	cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "")
	s := startServer(t, chartLocalCorefile(t, cm.Data), tokenKubeconfig(t, ns, "k8s-gateway"))

	class := "rbac-" + ns
	t.Cleanup(func() { kubectlErr("", "delete", "gatewayclass", class, "--ignore-not-found", "--wait=false") })
	chartKubectlRetrying(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: %[1]s}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: www, namespace: %[1]s}
spec:
  parentRefs: [{name: gw, namespace: %[2]s}]
  hostnames: [www.%[1]s.example.com]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: %[2]s}
spec: {rules: [{host: web.%[2]s.example.com}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: %[4]s}
spec: {controllerName: example.com/rbac-e2e}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[2]s}
spec:
  gatewayClassName: %[4]s
  listeners:
  - name: http
    protocol: HTTP
    port: 80
    hostname: "*.example.com"
    allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {rbac-e2e: %[1]s}}}}
---
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: %[3]s}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, a, b, c, class), "apply", "-f", "-")
	setLBStatus(t, c, "service", "lb", "192.0.2.144")
	setLBStatus(t, a, "service", "lb", "192.0.2.141")
	setLBStatus(t, b, "ingress", "web", "192.0.2.142")
	kubectl(t, "", "-n", b, "patch", "gateways.gateway.networking.k8s.io", "gw", "--subresource=status", "--type=merge",
		"-p", `{"status":{"addresses":[{"type":"IPAddress","value":"192.0.2.143"}]}}`)
	kubectl(t, "", "-n", a, "patch", "httproutes.gateway.networking.k8s.io", "www", "--subresource=status", "--type=merge",
		"-p", fmt.Sprintf(`{"status":{"parents":[{"parentRef":{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw","namespace":%q},
"controllerName":"example.com/rbac-e2e","conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"rbac e2e",
"lastTransitionTime":%q,"observedGeneration":1}]}]}}`, b, time.Now().UTC().Format(time.RFC3339)))

	lb, web, www := "lb."+a+".example.com.", "web."+b+".example.com.", "www."+a+".example.com."
	s.eventually(t, 10*time.Second, lb, dns.TypeA, positive(lb+" 60 IN A 192.0.2.141"))
	s.eventually(t, 10*time.Second, web, dns.TypeA, positive(web+" 60 IN A 192.0.2.142"))
	// The route's Namespace gets the label its Gateway selects only now:
	// the watch of that Namespace, by name, brings it.
	s.eventually(t, 5*time.Second, www, dns.TypeA, nxdomain)
	kubectl(t, "", "label", "namespace", a, "rbac-e2e="+a)
	s.eventually(t, 10*time.Second, www, dns.TypeA, positive(www+" 60 IN A 192.0.2.143"))
	// The third namespace's Service had its address before the others.
	s.eventually(t, 5*time.Second, "lb."+c+".example.com.", dns.TypeA, nxdomain)

	noRBACErrors(t, s)
}

// TestNamespaceScopedRBACEvents runs the plugin with namespaces, ownership
// delegated and events as the ServiceAccount of the chart rendered for them:
// Roles in the two listed namespaces (and on the nameserver Service in its
// own), no ClusterRole. A Service in each listed namespace claims a name of
// the other's domain; each rejection gives a DNSNameRejected Event in the
// Service's own namespace, and the same rejection again counts that Event
// up, which is a patch. Nothing is refused: not the Events, not the
// Namespaces read for their domains.
func TestNamespaceScopedRBACEvents(t *testing.T) {
	ns, a, b, c := namespace(t), namespace(t), namespace(t), namespace(t)
	m, sa := namespaceScopedRBAC(t, ns, fmt.Sprintf(`domain: example.com
watchedResources: [Service]
filters:
  namespaces: [%[1]s, %[2]s]
tenancy:
  ownership: delegated
  delegate: {%[1]s: [%[1]s.example.com], %[2]s: [%[2]s.example.com]}
  events: true
`, a, b))
	checkCanI(t, sa, []canI{
		{"create", "events", []string{"-n", a}, "yes"},
		{"patch", "events", []string{"-n", b}, "yes"},
		{"update", "events", []string{"-n", a}, "no"},
		{"create", "events", []string{"-n", c}, "no"},
		{"create", "events", []string{"-A"}, "no"},
		{"get", "namespaces/" + a, []string{"-n", a}, "yes"},
		{"list", "namespaces", nil, "no"},
	})

	cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "")
	s := startServer(t, chartLocalCorefile(t, cm.Data), tokenKubeconfig(t, ns, "k8s-gateway"))
	ips := map[string]string{a: "192.0.2.145", b: "192.0.2.146"}
	for own, other := range map[string]string{a: b, b: a} {
		claimingService(t, own, "thief", "www."+other+".example.com", ips[own])
	}
	for own, other := range map[string]string{a: b, b: a} {
		// The Service's automatic name is inside its namespace's domain.
		thief := "thief." + own + ".example.com."
		s.eventually(t, 10*time.Second, thief, dns.TypeA, positive(thief+" 60 IN A "+ips[own]))
		s.eventually(t, time.Second, "www."+other+".example.com.", dns.TypeA, nxdomain)
		rejectedEvents(t, own, "thief", "www."+other+".example.com", "outside the domains delegated to this namespace")
	}

	// The claim ends (the annotation names a name of a's own domain,
	// published) and comes back: the same Event again, counted up.
	other := "other." + a + ".example.com"
	kubectl(t, "", "-n", a, "annotate", "--overwrite", "service", "thief", "coredns.io/hostname="+other)
	s.eventually(t, 5*time.Second, other+".", dns.TypeA, positive(other+". 60 IN A "+ips[a]))
	kubectl(t, "", "-n", a, "annotate", "--overwrite", "service", "thief", "coredns.io/hostname=www."+b+".example.com")
	s.eventually(t, 5*time.Second, other+".", dns.TypeA, nxdomain)
	eventCount(t, a, "thief", "DNSNameRejected", "www."+b+".example.com", 2)

	noRBACErrors(t, s)
}

// namespaceScopedRBAC renders the chart for release namespace ns with values
// that set filters.namespaces, checks that it has no ClusterRole, applies its
// RBAC objects and returns the manifest and the ServiceAccount's user name.
func namespaceScopedRBAC(t *testing.T, ns, values string) (chartManifest, string) {
	t.Helper()
	chartHelm(t)
	m := chartRender(t, ns, values)
	if kinds := m.kinds(); slices.ContainsFunc(kinds, func(k string) bool { return strings.HasPrefix(k, "ClusterRole") }) {
		t.Errorf("a ClusterRole with namespaces and no ingressClasses: %q", kinds)
	}
	kubectl(t, m.only("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"), "apply", "-f", "-")
	return m, "system:serviceaccount:" + ns + ":k8s-gateway"
}

// canI is a question to kubectl auth can-i and its expected answer.
type canI struct {
	verb, resource string
	scope          []string
	want           string
}

func checkCanI(t *testing.T, sa string, checks []canI) {
	t.Helper()
	for _, check := range checks {
		if got := chartCanI(t, sa, check.verb, check.resource, check.scope...); got != check.want {
			t.Errorf("can-i %s %s %q: got %q, want %q", check.verb, check.resource, check.scope, got, check.want)
		}
	}
}

// noRBACErrors fails on log lines of a disabled or refused kind and on
// Events the API server refused (the plugin logs each as "not written").
func noRBACErrors(t *testing.T, s *server) {
	t.Helper()
	for _, line := range strings.Split(s.output(), "\n") {
		for _, bad := range []string{"disabled", "refuses", "orbidden", "not written"} {
			if strings.Contains(line, bad) {
				t.Errorf("a kind or an Event was refused: %s", line)
				break
			}
		}
	}
}

// eventCount waits until the Event with reason on the Service ns/name about
// host has counted up to want.
func eventCount(t *testing.T, ns, name, reason, host string, want int) {
	t.Helper()
	waitServiceEvent(t, ns, name, reason, fmt.Sprintf("for %s counted %d times", host, want), func(e serviceEvent) bool {
		return e.count >= want && strings.HasPrefix(e.message, "DNS name "+host+" ")
	})
}
