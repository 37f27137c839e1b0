// Package harness holds what the suites outside the plugin package (test/e2e,
// test/node, test/chaos) share: the real control plane of hack/cluster.sh,
// the coredns binary under test, free loopback ports and a buffer that
// daemons write their logs to.
package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Cluster is one control plane run by hack/cluster.sh, told apart from
// others by its state dir and ports (the K8SGW_* settings it was made with).
type Cluster struct {
	root    string
	env     []string
	started bool // Up started it, or the part of it that was not running

	Kubeconfig string // its admin kubeconfig, once Up
	Kubectl    string // kubectl matching its API server, once Up
}

// NewCluster returns the cluster of the repository at root with settings
// ("K8SGW_CLUSTER_DIR=...", "K8SGW_APISERVER_PORT=...", ...), not started.
func NewCluster(root string, settings ...string) *Cluster {
	return &Cluster{root: root, env: append(os.Environ(), settings...)}
}

// EnvCluster returns the cluster of the repository at root that a suite
// runs its tests on: its state dir and ports come from PREFIX_CLUSTER_DIR,
// PREFIX_APISERVER_PORT and PREFIX_ETCD_PORT (K8SGW_E2E_..., K8SGW_CHAOS_...),
// else dir (under CacheDir), apiPort and etcdPort; settings add to them.
func EnvCluster(root, prefix, dir, apiPort, etcdPort string, settings ...string) *Cluster {
	return NewCluster(root, append([]string{
		"K8SGW_CLUSTER_DIR=" + EnvOr(prefix+"_CLUSTER_DIR", CacheDir()+"/"+dir),
		"K8SGW_APISERVER_PORT=" + EnvOr(prefix+"_APISERVER_PORT", apiPort),
		"K8SGW_ETCD_PORT=" + EnvOr(prefix+"_ETCD_PORT", etcdPort),
	}, settings...)...)
}

// Setting returns the value of a setting the cluster was made with
// (K8SGW_CLUSTER_DIR, K8SGW_ETCD_PORT, ...), or of the environment.
func (c *Cluster) Setting(name string) string {
	for _, kv := range slices.Backward(c.env) {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// Env is the environment hack/cluster.sh runs with for this cluster.
func (c *Cluster) Env() []string { return c.env }

// Up starts the cluster, building what is missing, and reads its kubeconfig
// and kubectl. It notes whether the cluster was already running (Started).
func (c *Cluster) Up() error {
	up := c.command("up")
	up.Stderr = os.Stderr
	said, err := up.Output()
	os.Stderr.Write(said)
	c.started = c.started || !alreadyRunning(said)
	if err != nil {
		return fmt.Errorf("hack/cluster.sh up: %w", err)
	}
	cmd := c.command("env")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("hack/cluster.sh env: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "export ")
		if v, ok := strings.CutPrefix(line, "KUBECONFIG="); ok {
			c.Kubeconfig = strings.Trim(v, `"'`)
		}
		if v, ok := strings.CutPrefix(line, "KUBECTL="); ok {
			c.Kubectl = strings.Trim(v, `"'`)
		}
	}
	if c.Kubeconfig == "" || c.Kubectl == "" {
		return fmt.Errorf("hack/cluster.sh env printed no KUBECONFIG/KUBECTL:\n%s", out)
	}
	return nil
}

// Down stops the cluster and removes its state.
func (c *Cluster) Down() error { return c.Script("down") }

// Started reports whether Up started the cluster, or part of it. It did not
// when hack/cluster.sh found it running: another run's, or one an earlier
// run kept.
func (c *Cluster) Started() bool { return c.started }

// Release is what a suite does with its cluster when it ends: Down, unless
// keep is set or the cluster was already running before Up (it is someone
// else's, and is left running).
func (c *Cluster) Release(keep bool) error {
	if !c.started {
		fmt.Fprintln(os.Stderr, "harness: the cluster was running before the tests; leaving it running")
		return nil
	}
	if keep {
		return nil
	}
	return c.Down()
}

// alreadyRunning reports whether the stdout of `hack/cluster.sh up` says
// that the cluster was running before it (the line "# already running").
func alreadyRunning(stdout []byte) bool {
	for line := range strings.Lines(string(stdout)) {
		if strings.TrimSpace(line) == "# already running" {
			return true
		}
	}
	return false
}

// Script runs hack/cluster.sh with args for this cluster; what it prints
// goes to stderr.
func (c *Cluster) Script(args ...string) error {
	cmd := c.command(args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hack/cluster.sh %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

func (c *Cluster) command(args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.root, "hack/cluster.sh"), args...)
	cmd.Env = c.env
	return cmd
}

// CacheDir is where the built binaries and the clusters' state live:
// $K8SGW_CACHE, else k8s_gateway in the user's cache directory, as
// hack/cluster.sh has it.
func CacheDir() string {
	if d := os.Getenv("K8SGW_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return d + "/k8s_gateway"
	}
	home, _ := os.UserHomeDir()
	return home + "/.cache/k8s_gateway"
}

// EnvOr returns the environment variable name, or def when it is empty.
func EnvOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
