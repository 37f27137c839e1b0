//go:build e2e

package e2e

// The test cluster for the chart tests: server-side dry runs, CRDs, Gateway API.

import (
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// chartApplyDryRun validates a manifest with the API server (admission, schemas,
// RBAC escalation checks) without persisting it.
func chartApplyDryRun(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := kubectlErr(text, "apply", "--dry-run=server", "-f", "-")
		if err == nil {
			return
		}
		// kubectl may not know a CRD's kind right after it was established.
		if !strings.Contains(out, "no matches for kind") || time.Now().After(deadline) {
			t.Fatalf("kubectl apply --dry-run=server: %v\n%s\nmanifest:\n%s", err, out, text)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

var chartCRDMu sync.Mutex

// chartEnsureCRDs applies the CRD files unless all of crds exist, waits until
// they are established and, with remove, deletes them when the test ends
// (only if this call installed them).
func chartEnsureCRDs(t *testing.T, crds []string, remove bool, files ...string) {
	t.Helper()
	chartCRDMu.Lock()
	defer chartCRDMu.Unlock()
	args := []string{"get"}
	for _, c := range crds {
		args = append(args, "crd/"+c)
	}
	if _, err := kubectlErr("", args...); err == nil {
		return
	}
	for _, f := range files {
		kubectl(t, "", "apply", "--server-side", "--force-conflicts", "-f", f)
	}
	var wait []string
	for _, c := range crds {
		wait = append(wait, "crd/"+c)
	}
	waitEstablished(t, wait...)
	if remove {
		t.Cleanup(func() {
			for _, c := range crds {
				kubectlErr("", "delete", "crd/"+c, "--ignore-not-found", "--wait=true", "--timeout=60s")
			}
		})
	}
}

// chartEnsureGatewayAPI installs the standard Gateway API CRDs of the module the
// plugin is built with, unless they are there (and leaves them, as the
// Gateway API tests do).
func chartEnsureGatewayAPI(t *testing.T) {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/gateway-api: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config/crd/standard")
	var files, crds []string
	for _, r := range []string{"gatewayclasses", "gateways", "listenersets", "httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes"} {
		files = append(files, filepath.Join(dir, "gateway.networking.k8s.io_"+r+".yaml"))
		crds = append(crds, r+".gateway.networking.k8s.io")
	}
	chartEnsureCRDs(t, crds, false, files...)
}

// chartKubectlRetrying retries kubectl while it does not know a new CRD's kind yet.
func chartKubectlRetrying(t *testing.T, stdin string, args ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := kubectlErr(stdin, args...)
		if err == nil {
			return
		}
		if time.Now().After(deadline) || !(strings.Contains(out, "no matches for kind") || strings.Contains(out, "the server doesn't have a resource type")) {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
