package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeScript is a hack/cluster.sh that logs its arguments to $FAKE_LOG and,
// for up, says the cluster was already running when $FAKE_RUNNING is set and
// exits with $FAKE_UP_RC.
const fakeScript = `#!/bin/sh
echo "$*" >>"$FAKE_LOG"
case $1 in
up)
	[ -z "$FAKE_RUNNING" ] || echo "# already running"
	echo "export KUBECONFIG=/state/kubeconfig"
	echo "export KUBECTL=/bin/kubectl"
	exit "${FAKE_UP_RC:-0}" ;;
env)
	echo "export KUBECONFIG=/state/kubeconfig"
	echo "export KUBECTL=/bin/kubectl" ;;
esac
`

func TestClusterRelease(t *testing.T) {
	for _, tc := range []struct {
		name    string
		running bool // the cluster runs before Up
		upFails bool
		keep    bool
		calls   string // what the suite ran, in order
	}{
		{name: "started here", calls: "up env down"},
		{name: "started here, kept", keep: true, calls: "up env"},
		{name: "already running", running: true, calls: "up env"},
		{name: "already running, kept", running: true, keep: true, calls: "up env"},
		{name: "up failed", upFails: true, calls: "up down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "hack"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "hack/cluster.sh"), []byte(fakeScript), 0o755); err != nil {
				t.Fatal(err)
			}
			log := filepath.Join(root, "calls")
			settings := []string{"FAKE_LOG=" + log, "FAKE_RUNNING=", "FAKE_UP_RC=0"}
			if tc.running {
				settings = append(settings, "FAKE_RUNNING=1")
			}
			if tc.upFails {
				settings = append(settings, "FAKE_UP_RC=1")
			}
			c := NewCluster(root, settings...)
			err := c.Up()
			if (err != nil) != tc.upFails {
				t.Fatalf("Up() = %v, want failure %v", err, tc.upFails)
			}
			if c.Started() == tc.running {
				t.Errorf("Started() = %v with the cluster running before: %v", c.Started(), tc.running)
			}
			if err := c.Release(tc.keep); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(strings.Fields(string(b)), " "); got != tc.calls {
				t.Errorf("hack/cluster.sh ran %q, want %q", got, tc.calls)
			}
		})
	}
}

// The line Up looks for is the one hack/cluster.sh prints.
func TestClusterScriptSaysAlreadyRunning(t *testing.T) {
	b, err := os.ReadFile("../../../hack/cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `echo "# already running"`) {
		t.Error(`hack/cluster.sh no longer prints "# already running" when up finds the cluster running`)
	}
}

// TestEnvCluster: a suite's variables move its cluster; without them, the
// defaults hold; Setting reads the settings back.
func TestEnvCluster(t *testing.T) {
	t.Setenv("K8SGW_CACHE", "/cache")
	t.Setenv("K8SGW_X_CLUSTER_DIR", "")
	t.Setenv("K8SGW_X_APISERVER_PORT", "27000")
	t.Setenv("K8SGW_X_ETCD_PORT", "")
	c := EnvCluster("/repo", "K8SGW_X", "x-cluster", "26000", "24000", "K8SGW_NODE=1")
	for name, want := range map[string]string{
		"K8SGW_CLUSTER_DIR":    "/cache/x-cluster",
		"K8SGW_APISERVER_PORT": "27000",
		"K8SGW_ETCD_PORT":      "24000",
		"K8SGW_NODE":           "1",
		"K8SGW_CACHE":          "/cache", // from the environment
		"K8SGW_UNSET":          "",
	} {
		if got := c.Setting(name); got != want {
			t.Errorf("Setting(%s) = %q, want %q", name, got, want)
		}
	}
}
