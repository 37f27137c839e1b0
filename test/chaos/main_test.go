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
	"strings"
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
	root, err := harness.Root()
	if err != nil {
		return fail(err)
	}
	repoRoot = root
	tmp, err := os.MkdirTemp("", "k8sgw-chaos-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	if corednsBin, err = harness.BuildCoreDNS(repoRoot, tmp); err != nil {
		return fail(err)
	}
	// A control plane of its own: the scenarios kill and pause it.
	clusterDir = harness.EnvOr("K8SGW_CHAOS_CLUSTER_DIR", harness.CacheDir()+"/chaos-cluster")
	etcdPort = harness.EnvOr("K8SGW_CHAOS_ETCD_PORT", "24190")
	cluster = harness.NewCluster(repoRoot,
		"K8SGW_CLUSTER_DIR="+clusterDir,
		"K8SGW_APISERVER_PORT="+harness.EnvOr("K8SGW_CHAOS_APISERVER_PORT", "26843"),
		"K8SGW_ETCD_PORT="+etcdPort,
	)
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
	code := m.Run()
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
	out, err := kubectlErr(stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func kubectlErr(stdin string, args ...string) (string, error) {
	return harness.Kubectl(kubectlBin, kubeconfig, stdin, args...)
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "chaos:", err)
	return 1
}
