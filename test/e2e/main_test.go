//go:build e2e

// Package e2e tests the built coredns binary against a real kube-apiserver and
// etcd on loopback (started by hack/cluster.sh), with real dig and a Go client.
//
// Run with: go test -tags e2e ./test/e2e (make test does).
// K8SGW_E2E_KUBECONFIG and K8SGW_E2E_KUBECTL reuse a running cluster instead.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

var (
	repoRoot   string // the repository
	kubeconfig string // admin kubeconfig of the test cluster
	kubectlBin string // kubectl matching the API server
	corednsBin string // the binary under test
	digBin     string // Debian's dig
	cluster    *harness.Cluster
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if harness.NoTests() {
		return m.Run()
	}
	var err error
	if digBin, err = exec.LookPath("dig"); err != nil {
		return fail(fmt.Errorf("dig not found (apt-get install bind9-dnsutils): %w", err))
	}
	root, bin, cleanup, err := harness.Binary("e2e")
	if err != nil {
		return fail(err)
	}
	defer cleanup()
	repoRoot, corednsBin = root, bin

	kubeconfig, kubectlBin = os.Getenv("K8SGW_E2E_KUBECONFIG"), os.Getenv("K8SGW_E2E_KUBECTL")
	if kubeconfig == "" || kubectlBin == "" {
		// A cluster of its own, apart from the one `make demo` uses.
		// K8SGW_E2E_CLUSTER_DIR and the two ports let several runs coexist.
		cluster = harness.EnvCluster(repoRoot, "K8SGW_E2E", "e2e-cluster", "26543", "23890")
		err := cluster.Up()
		defer cluster.Release(os.Getenv("K8SGW_E2E_KEEP_CLUSTER") != "")
		if err != nil {
			return fail(err)
		}
		kubeconfig, kubectlBin = cluster.Kubeconfig, cluster.Kubectl
	}
	defer stopSecondCluster()
	return m.Run()
}

// clusterScript runs hack/cluster.sh for the suite's own cluster (nil when
// it runs against one given by K8SGW_E2E_KUBECONFIG).
func clusterScript(args ...string) error { return cluster.Script(args...) }

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "e2e:", err)
	return 1
}
