//go:build e2e

package e2e

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// The fleet tests need a second control plane (kube-apiserver and etcd of
// its own), started by hack/cluster.sh on the first test that asks for it and
// stopped when the tests end. K8SGW_E2E_CLUSTER2_DIR, K8SGW_E2E_APISERVER2_PORT,
// K8SGW_E2E_ETCD2_PORT and K8SGW_E2E_KCM2_PORT let several runs coexist.
var (
	cluster2Once sync.Once
	cluster2Err  error
	cluster2     *harness.Cluster
)

// secondCluster starts the second control plane once and returns its admin kubeconfig.
func secondCluster(t *testing.T) string {
	t.Helper()
	cluster2Once.Do(func() {
		settings := []string{
			"K8SGW_CLUSTER_DIR=" + harness.EnvOr("K8SGW_E2E_CLUSTER2_DIR", harness.EnvOr("K8SGW_E2E_CLUSTER_DIR", harness.CacheDir()+"/e2e-cluster")+"-2"),
			"K8SGW_APISERVER_PORT=" + harness.EnvOr("K8SGW_E2E_APISERVER2_PORT", "27043"),
			"K8SGW_ETCD_PORT=" + harness.EnvOr("K8SGW_E2E_ETCD2_PORT", "24390"),
		}
		if p := os.Getenv("K8SGW_E2E_KCM2_PORT"); p != "" {
			settings = append(settings, "K8SGW_KCM_PORT="+p)
		}
		cluster2 = harness.NewCluster(repoRoot, settings...)
		cluster2Err = cluster2.Up()
	})
	if cluster2Err != nil {
		t.Fatalf("second cluster: %v", cluster2Err)
	}
	return cluster2.Kubeconfig
}

// stopSecondCluster stops the second control plane if a test started it
// (and it was not running before).
func stopSecondCluster() {
	if cluster2 != nil {
		cluster2.Release(os.Getenv("K8SGW_E2E_KEEP_CLUSTER") != "")
	}
}

// kubectlAt runs kubectl against the cluster of kubecfg, with stdin when not empty.
func kubectlAt(t *testing.T, kubecfg, stdin string, args ...string) string {
	t.Helper()
	out, err := harness.Kubectl(kubectlBin, kubecfg, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// fleetNamespace creates a namespace of the same name in each cluster of
// kubecfgs and deletes them when the test ends.
func fleetNamespace(t *testing.T, kubecfgs ...string) string {
	t.Helper()
	ns := fmt.Sprintf("e2e-fleet-%04d", rand.IntN(10000))
	for _, k := range kubecfgs {
		kubectlAt(t, k, "", "create", "namespace", ns)
		t.Cleanup(func() {
			exec.Command(kubectlBin, "--kubeconfig", k, "delete", "namespace", ns, "--wait=false").Run()
		})
	}
	return ns
}

// lbServiceAt creates, or changes, the LoadBalancer Service ns/name in the
// cluster of kubecfg, with the hostnames annotation when not empty, and sets
// its load balancer address to ip.
func lbServiceAt(t *testing.T, kubecfg, ns, name, hostnames, ip string) {
	t.Helper()
	annotations := ""
	if hostnames != "" {
		annotations = fmt.Sprintf("\n  annotations: {coredns.io/hostname: %q}", hostnames)
	}
	kubectlAt(t, kubecfg, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata:
  name: %s
  namespace: %s%s
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, name, ns, annotations), "apply", "-f", "-")
	if net.ParseIP(ip) == nil {
		t.Fatalf("not an IP: %s", ip)
	}
	kubectlAt(t, kubecfg, "", "-n", ns, "patch", "service", name, "--subresource=status", "--type=merge",
		"-p", fmt.Sprintf(`{"status":{"loadBalancer":{"ingress":[{"ip":%q}]}}}`, ip))
}
