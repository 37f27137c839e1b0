//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// TestColdStartRefusedAtFirst: the plugin starts as a ServiceAccount that
// the API server refuses (403: no binding yet, as while a starting API
// server's authorizer loads its rules); a few seconds later the binding
// exists. Meanwhile the plugin is not ready and never answers NXDOMAIN for
// the Service's name; then it answers the name.
func TestColdStartRefusedAtFirst(t *testing.T) {
	ns := namespace(t)
	role := "k8sgw-coldstart-" + ns
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: ServiceAccount
metadata: {name: coldstart, namespace: %[1]s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[2]s}
rules: [{apiGroups: [""], resources: [services], verbs: [list, watch]}]
---
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: %[1]s}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, ns, role), "apply", "-f", "-")
	t.Cleanup(func() { kubectlErr("", "delete", "clusterrole,clusterrolebinding", role, "--ignore-not-found") })
	setLBStatus(t, ns, "service", "lb", "192.0.2.70")
	lb := "lb." + ns + ".example.com."
	want := positive(lb + " 30 IN A 192.0.2.70")

	s := launchServer(t, corednsBin, "test/e2e/testdata/Corefile.coldstart", tokenKubeconfig(t, ns, "coldstart"))
	const refused = 4 * time.Second
	bound := time.Now().Add(refused)
	answered := false
	for deadline := time.Now().Add(refused + 30*time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !bound.IsZero() && time.Now().After(bound) {
			kubectl(t, fmt.Sprintf(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[2]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[2]s}
subjects: [{kind: ServiceAccount, name: coldstart, namespace: %[1]s}]
`, ns, role), "apply", "-f", "-")
			t.Logf("bound after %s", refused)
			bound = time.Time{}
		}
		r, err := s.query(lb, dns.TypeA)
		if err != nil {
			continue // not listening yet
		}
		if r.Rcode == "NXDOMAIN" || r.Rcode == "NOERROR" && len(r.Answer) == 0 {
			t.Fatalf("%s denied while the API server refused to list: %s", lb, r)
		}
		if want.check(r) == nil {
			answered = true
			break
		}
		if !bound.IsZero() && harness.WaitOK(fmt.Sprintf("http://127.0.0.1:%d/ready", s.readyPort), time.Millisecond, time.Millisecond) {
			t.Fatal("ready while the API server refuses every list")
		}
	}
	if !answered {
		t.Fatalf("%s never answered", lb)
	}
	s.waitReady(5 * time.Second)
	s.eventually(t, 5*time.Second, lb, dns.TypeA, want)
}
