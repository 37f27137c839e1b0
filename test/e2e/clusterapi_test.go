//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// capiModule is the Cluster API release whose Cluster CRD the tests install.
const capiModule = "sigs.k8s.io/cluster-api@v1.14.2"

// installClusterCRD installs Cluster API's Cluster CRD, as the module ships
// it, in the suite's cluster.
func installClusterCRD(t *testing.T) {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", capiModule)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v\n%s", capiModule, err, out)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download -json: %v\n%s", err, out)
	}
	crd := filepath.Join(mod.Dir, "core/config/crd/bases/cluster.x-k8s.io_clusters.yaml")
	kubectl(t, "", "apply", "--server-side", "--force-conflicts", "-f", crd)
	waitEstablished(t, "crd/clusters.cluster.x-k8s.io")
}

// workloadKubeconfig returns a kubeconfig of the cluster of kubecfg that
// authenticates with token.
func workloadKubeconfig(t *testing.T, kubecfg, token string) string {
	t.Helper()
	view := func(path string) string {
		return kubectlAt(t, kubecfg, "", "config", "view", "--raw", "--flatten", "-o", "jsonpath={"+path+"}")
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: work
  cluster: {server: %q, certificate-authority-data: %s}
users:
- name: work
  user: {token: %q}
contexts:
- name: work
  context: {cluster: work, user: work}
current-context: work
`, view(".clusters[0].cluster.server"), view(".clusters[0].cluster.certificate-authority-data"), token)
}

// capiClusterAndSecret creates or changes the Cluster ns/name and its
// kubeconfig Secret, whose value is kubeconfig.
func capiClusterAndSecret(t *testing.T, ns, name, kubeconfig string) {
	t.Helper()
	kubectl(t, fmt.Sprintf(`
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: %[1]s, namespace: %[2]s}
spec: {paused: true}
---
apiVersion: v1
kind: Secret
metadata:
  name: %[1]s-kubeconfig
  namespace: %[2]s
  labels: {cluster.x-k8s.io/cluster-name: %[1]s}
type: cluster.x-k8s.io/secret
data: {value: %[3]s}
`, name, ns, base64.StdEncoding.EncodeToString([]byte(kubeconfig))), "apply", "-f", "-")
}

// waitOutput waits until the server has logged a line containing s.
func waitOutput(t *testing.T, srv *server, s string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(srv.output(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q after %s", s, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestClusterAPI: with the real Cluster CRD in the management cluster, a
// Cluster whose kubeconfig Secret points at the second API server is read
// under <cluster>.example.com; a rotated Secret (a new token) reconnects; a
// Cluster with a broken kubeconfig is logged and changes nothing else; a
// deleted Cluster's names are NXDOMAIN.
func TestClusterAPI(t *testing.T) {
	kc2 := secondCluster(t)
	installClusterCRD(t)
	mgmt := namespace(t)
	s := startServer(t, "test/e2e/testdata/Corefile.clusterapi", kubeconfig, "K8SGW_CAPI_NAMESPACE="+mgmt)

	ns := fleetNamespace(t, kc2)
	lbServiceAt(t, kc2, ns, "web", "", "192.0.2.141")
	web := "web." + ns + ".work.example.com."
	admin := kubectlAt(t, kc2, "", "config", "view", "--raw", "-o", "jsonpath={.users[0].user.token}")
	start := time.Now()
	capiClusterAndSecret(t, mgmt, "work", workloadKubeconfig(t, kc2, admin))
	s.eventually(t, 20*time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.141"))
	t.Logf("Cluster and Secret created → its names answered: %s", time.Since(start).Round(time.Millisecond))

	// Rotation: a token of a ServiceAccount of the workload cluster.
	kubectlAt(t, kc2, "", "-n", ns, "create", "serviceaccount", "k8sgw")
	kubectlAt(t, kc2, "", "create", "clusterrolebinding", ns+"-k8sgw", "--clusterrole=cluster-admin", "--serviceaccount="+ns+":k8sgw")
	t.Cleanup(func() { harnessKubectl(kc2, "delete", "clusterrolebinding", ns+"-k8sgw") })
	token := strings.TrimSpace(kubectlAt(t, kc2, "", "-n", ns, "create", "token", "k8sgw"))
	capiClusterAndSecret(t, mgmt, "work", workloadKubeconfig(t, kc2, token))
	waitOutput(t, s, "Cluster "+mgmt+"/work: its kubeconfig Secret changed; reconnected", 20*time.Second)
	lbServiceAt(t, kc2, ns, "web", "", "192.0.2.142")
	s.eventually(t, 20*time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.142"))

	// A broken kubeconfig: a clear log line; the other cluster is unaffected.
	capiClusterAndSecret(t, mgmt, "broken", "this is not a kubeconfig")
	waitOutput(t, s, "clusterapi: Cluster "+mgmt+"/broken: kubeconfig Secret "+mgmt+"/broken-kubeconfig:", 20*time.Second)
	s.eventually(t, time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.142"))

	// Deleted: its names go.
	kubectl(t, "", "-n", mgmt, "delete", "cluster.cluster.x-k8s.io", "work")
	s.eventually(t, 20*time.Second, web, dns.TypeA, nxdomain)
}

// harnessKubectl runs kubectl against kubecfg, ignoring the outcome (cleanups).
func harnessKubectl(kubecfg string, args ...string) {
	exec.Command(kubectlBin, append([]string{"--kubeconfig", kubecfg}, args...)...).Run()
}
