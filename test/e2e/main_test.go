//go:build e2e

// Package e2e tests the built coredns binary against a real kube-apiserver and
// etcd on loopback (started by hack/cluster.sh), with real dig and a Go client.
//
// Run with: go test -tags e2e ./test/e2e (make test does).
// K8SGW_E2E_KUBECONFIG and K8SGW_E2E_KUBECTL reuse a running cluster instead.
package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var (
	repoRoot   string // the repository
	kubeconfig string // admin kubeconfig of the test cluster
	kubectlBin string // kubectl matching the API server
	corednsBin string // the binary under test
	digBin     string // Debian's dig
	clusterEnv []string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	root, err := filepath.Abs("../..")
	if err != nil {
		return fail(err)
	}
	repoRoot = root
	if digBin, err = exec.LookPath("dig"); err != nil {
		return fail(fmt.Errorf("dig not found (apt-get install bind9-dnsutils): %w", err))
	}

	tmp, err := os.MkdirTemp("", "k8sgw-e2e-")
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

	kubeconfig, kubectlBin = os.Getenv("K8SGW_E2E_KUBECONFIG"), os.Getenv("K8SGW_E2E_KUBECTL")
	if kubeconfig == "" || kubectlBin == "" {
		// A cluster of its own, apart from the one `make demo` uses.
		// K8SGW_E2E_CLUSTER_DIR and the two ports let several runs coexist.
		clusterEnv = append(os.Environ(),
			"K8SGW_CLUSTER_DIR="+envOr("K8SGW_E2E_CLUSTER_DIR", cacheDir()+"/e2e-cluster"),
			"K8SGW_APISERVER_PORT="+envOr("K8SGW_E2E_APISERVER_PORT", "26543"),
			"K8SGW_ETCD_PORT="+envOr("K8SGW_E2E_ETCD_PORT", "23890"),
		)
		if err := clusterScript("up"); err != nil {
			return fail(err)
		}
		if os.Getenv("K8SGW_E2E_KEEP_CLUSTER") == "" {
			defer clusterScript("down")
		}
		out, err := clusterScriptOutput("env")
		if err != nil {
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
		if kubeconfig == "" || kubectlBin == "" {
			return fail(fmt.Errorf("hack/cluster.sh env printed no KUBECONFIG/KUBECTL:\n%s", out))
		}
	}
	return m.Run()
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

func clusterScriptOutput(args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(repoRoot, "hack/cluster.sh"), args...)
	cmd.Env, cmd.Stderr = clusterEnv, os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("hack/cluster.sh %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "e2e:", err)
	return 1
}
