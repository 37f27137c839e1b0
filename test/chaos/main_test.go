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
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	repoRoot   string
	kubeconfig string
	kubectlBin string
	corednsBin string
	clusterEnv []string
	clusterDir string
	etcdPort   string
	client     kubernetes.Interface
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	root, err := filepath.Abs("../..")
	if err != nil {
		return fail(err)
	}
	repoRoot = root
	tmp, err := os.MkdirTemp("", "k8sgw-chaos-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	corednsBin = filepath.Join(tmp, "coredns")
	build := exec.Command("go", "build", "-o", corednsBin, "./cmd/coredns")
	build.Dir, build.Stdout, build.Stderr = repoRoot, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fail(fmt.Errorf("building coredns: %w", err))
	}
	// A control plane of its own: the scenarios kill and pause it.
	clusterDir = envOr("K8SGW_CHAOS_CLUSTER_DIR", cacheDir()+"/chaos-cluster")
	etcdPort = envOr("K8SGW_CHAOS_ETCD_PORT", "24190")
	clusterEnv = append(os.Environ(),
		"K8SGW_CLUSTER_DIR="+clusterDir,
		"K8SGW_APISERVER_PORT="+envOr("K8SGW_CHAOS_APISERVER_PORT", "26843"),
		"K8SGW_ETCD_PORT="+etcdPort,
	)
	if err := clusterScript("up"); err != nil {
		return fail(err)
	}
	if os.Getenv("K8SGW_CHAOS_KEEP_CLUSTER") == "" {
		defer clusterScript("down")
	}
	out, err := exec.Command(filepath.Join(repoRoot, "hack/cluster.sh"), "env").Output()
	if err != nil {
		return fail(err)
	}
	_ = out
	cmd := exec.Command(filepath.Join(repoRoot, "hack/cluster.sh"), "env")
	cmd.Env = clusterEnv
	if out, err = cmd.Output(); err != nil {
		return fail(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "export ")
		if v, ok := strings.CutPrefix(line, "KUBECONFIG="); ok {
			kubeconfig = strings.Trim(v, `"'`)
		}
		if v, ok := strings.CutPrefix(line, "KUBECTL="); ok {
			kubectlBin = strings.Trim(v, `"'`)
		}
	}
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

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func cacheDir() string {
	if d := os.Getenv("K8SGW_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return d + "/k8s_gateway"
	}
	home, _ := os.UserHomeDir()
	return home + "/.cache/k8s_gateway"
}

func clusterScript(args ...string) error {
	cmd := exec.Command(filepath.Join(repoRoot, "hack/cluster.sh"), args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = clusterEnv, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hack/cluster.sh %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

func kubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := kubectlErr(stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func kubectlErr(stdin string, args ...string) (string, error) {
	cmd := exec.Command(kubectlBin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "chaos:", err)
	return 1
}
