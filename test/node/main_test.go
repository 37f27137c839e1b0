//go:build e2e

// Package node runs the project as users deploy it, on a real node that
// hack/cluster.sh starts (K8SGW_NODE=1: containerd, kubelet, kube-scheduler,
// kube-proxy, pods on a bridge of its own): the image built from the
// Dockerfile with podman, the chart installed with helm and the manifest
// applied with kubectl, answers checked with dig at the pod IP and at a
// NodePort on the node's bridge address; and a release (make release) pushed
// to a loopback registry, installed from there with helm install oci://.
//
// Run with: go test -tags e2e ./test/node (make e2e-node does). It needs root.
package node

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

const image = "localhost/k8s-gateway:e2e"

var (
	repoRoot   string
	kubeconfig string
	kubectlBin string
	helmBin    string
	nodeAddr   = "10.244.0.1" // hack/node.sh's NODE_ADDR
	nodeDir    string         // hack/node.sh's NODE: the node's state (containerd's config among it)
	cluster    *harness.Cluster
	skipReason string // K8SGW_SKIP_NODE=1: every test skips with it
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if harness.NoTests() {
		return m.Run()
	}
	skip, err := harness.NeedsRoot("the node stage", "K8SGW_SKIP_NODE", "network namespaces, cgroups, iptables, mounts")
	if err != nil {
		return fail(err)
	}
	if skip != "" {
		skipReason = skip
		return m.Run()
	}
	root, err := harness.Root()
	if err != nil {
		return fail(err)
	}
	repoRoot = root
	cache := harness.CacheDir()
	clusterDir := harness.EnvOr("K8SGW_NODE_E2E_CLUSTER_DIR", cache+"/e2e-node-cluster")
	nodeDir = filepath.Join(clusterDir, "node")
	cluster = harness.NewCluster(repoRoot,
		"K8SGW_NODE=1",
		"K8SGW_CLUSTER_DIR="+clusterDir,
		"K8SGW_APISERVER_PORT="+harness.EnvOr("K8SGW_NODE_E2E_APISERVER_PORT", "26943"),
		"K8SGW_ETCD_PORT="+harness.EnvOr("K8SGW_NODE_E2E_ETCD_PORT", "24290"),
		"K8SGW_KCM_PORT="+harness.EnvOr("K8SGW_NODE_E2E_KCM_PORT", "26944"),
		"K8SGW_NODE_PORT_BASE="+harness.EnvOr("K8SGW_NODE_E2E_PORT_BASE", "27250"),
	)
	start := time.Now()
	err = cluster.Up()
	defer cluster.Release(err == nil && os.Getenv("K8SGW_NODE_E2E_KEEP") != "")
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "node e2e: control plane and node Ready in %s\n", time.Since(start).Round(100*time.Millisecond))
	kubeconfig, kubectlBin = cluster.Kubeconfig, cluster.Kubectl
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

// script runs hack/cluster.sh for the node's cluster.
func script(args ...string) error { return cluster.Script(args...) }

// needNode skips a test when the user skipped the node stage on purpose.
func needNode(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "node e2e:", err)
	return 1
}
