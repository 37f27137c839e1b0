//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
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

	s := startServer(t, "examples/Corefile", tokenKubeconfig(t, "kube-system", "k8s-gateway"))
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
	s := startServer(t, "examples/Corefile", tokenKubeconfig(t, ns, "services-only"))
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
