//go:build chaos

// Package chaos is the fault suite: the built coredns binary against a real
// kube-apiserver and etcd on loopback (hack/cluster.sh), under a steady,
// bounded query load, while the control plane, the plugin's permissions, its
// Corefile and its input are broken and repaired. Each scenario reports the
// queries sent and how they were answered, and the time from each change
// (made once the API server answers again) to its answer; it fails on any
// wrong answer, a lost change, a crash, or a recovery slower than the targets.
//
// Run with: make chaos (make test does).
package chaos

import (
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

var (
	repoRoot   string
	kubeconfig string
	kubectlBin string
	corednsBin string
	cluster    *harness.Cluster
	clusterDir string
	etcdPort   string
	client     kubernetes.Interface
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if harness.NoTests() {
		return m.Run()
	}
	root, bin, cleanup, err := harness.Binary("chaos")
	if err != nil {
		return fail(err)
	}
	defer cleanup()
	repoRoot, corednsBin = root, bin
	// A control plane of its own: the scenarios kill and pause it.
	cluster = harness.EnvCluster(repoRoot, "K8SGW_CHAOS", "chaos-cluster", "26843", "24190")
	clusterDir, etcdPort = cluster.Setting("K8SGW_CLUSTER_DIR"), cluster.Setting("K8SGW_ETCD_PORT")
	err = cluster.Up()
	defer cluster.Release(os.Getenv("K8SGW_CHAOS_KEEP_CLUSTER") != "")
	if err != nil {
		return fail(err)
	}
	kubeconfig, kubectlBin = cluster.Kubeconfig, cluster.Kubectl
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fail(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	if client, err = kubernetes.NewForConfig(cfg); err != nil {
		return fail(err)
	}
	mach := watchMachine()
	code := m.Run()
	machineLine = mach.line()
	printReport(os.Stdout)
	if path := os.Getenv("K8SGW_CHAOS_REPORT"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			printReport(f)
			f.Close()
		}
	}
	return code
}

// clusterScript runs hack/cluster.sh for the suite's control plane.
func clusterScript(args ...string) error { return cluster.Script(args...) }

func kubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	return harness.MustKubectl(t, kubectlBin, kubeconfig, stdin, args...)
}

func kubectlErr(stdin string, args ...string) (string, error) {
	return harness.Kubectl(kubectlBin, kubeconfig, stdin, args...)
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "chaos:", err)
	return 1
}
