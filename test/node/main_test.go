//go:build e2e

// Package node runs the project as users deploy it, on a real node that
// hack/cluster.sh starts (K8SGW_NODE=1: containerd, kubelet, kube-scheduler,
// kube-proxy, pods on a bridge of its own): the image built from the
// Dockerfile with podman, the chart installed with helm and the manifest
// applied with kubectl, answers checked with dig at the pod IP and at a
// NodePort on the node's bridge address.
//
// Run with: go test -tags e2e ./test/node (make e2e-node does). It needs root.
package node

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"testing"
)

const image = "localhost/k8s-gateway:e2e"

var (
	repoRoot   string
	kubeconfig string
	kubectlBin string
	helmBin    string
	nodeAddr   = "10.244.0.1" // hack/node.sh's NODE_ADDR
	clusterEnv []string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "node e2e: SKIPPED: a node needs root (network namespaces, cgroups, iptables, mounts); this runs as uid", os.Geteuid())
		return 0
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		return fail(err)
	}
	repoRoot = root
	cache := cacheDir()
	clusterEnv = append(os.Environ(),
		"K8SGW_NODE=1",
		"K8SGW_CLUSTER_DIR="+envOr("K8SGW_NODE_E2E_CLUSTER_DIR", cache+"/e2e-node-cluster"),
		"K8SGW_APISERVER_PORT="+envOr("K8SGW_NODE_E2E_APISERVER_PORT", "26943"),
		"K8SGW_ETCD_PORT="+envOr("K8SGW_NODE_E2E_ETCD_PORT", "24290"),
		"K8SGW_KCM_PORT="+envOr("K8SGW_NODE_E2E_KCM_PORT", "26944"),
		"K8SGW_NODE_PORT_BASE="+envOr("K8SGW_NODE_E2E_PORT_BASE", "27250"),
	)
	start := time.Now()
	if err := script("up"); err != nil {
		script("down")
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "node e2e: control plane and node Ready in %s\n", time.Since(start).Round(100*time.Millisecond))
	if os.Getenv("K8SGW_NODE_E2E_KEEP") == "" {
		defer script("down")
	}
	kubeconfig = strings.TrimSpace(envFrom("KUBECONFIG"))
	kubectlBin = strings.TrimSpace(envFrom("KUBECTL"))
	helmBin = filepath.Join(filepath.Dir(kubectlBin), "helm")
	if out, err := exec.Command(filepath.Join(repoRoot, "hack/helm.sh")).Output(); err == nil && len(out) > 0 {
		helmBin = strings.TrimSpace(string(out))
	}

	// The image, from the project's Dockerfile as it stands, on local
	// stand-ins for its base images (no registry here).
	start = time.Now()
	if err := script("image-bases"); err != nil {
		return fail(err)
	}
	if err := script("podman", "build", "--pull=never", "--network=none", "--build-arg", "VERSION=e2e",
		"-t", image, "-f", filepath.Join(repoRoot, "Dockerfile"), repoRoot); err != nil {
		return fail(err)
	}
	if err := script("load-image", image); err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "node e2e: image built from the Dockerfile and loaded in %s\n", time.Since(start).Round(100*time.Millisecond))
	return m.Run()
}

func script(args ...string) error {
	cmd := exec.Command(filepath.Join(repoRoot, "hack/cluster.sh"), args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = clusterEnv, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hack/cluster.sh %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// envFrom returns a variable that `hack/cluster.sh env` exports.
func envFrom(name string) string {
	cmd := exec.Command(filepath.Join(repoRoot, "hack/cluster.sh"), "env")
	cmd.Env = clusterEnv
	out, _ := cmd.Output()
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimPrefix(line, "export "), name+"="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
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

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "node e2e:", err)
	return 1
}
