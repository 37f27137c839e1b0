//go:build e2e

package e2e

// The Helm chart charts/k8s-gateway, tested with the real Helm CLI
// (hack/helm.sh builds it from the Go module proxy and caches it):
//
//   - TestChartValues: helm lint --strict and helm template over a matrix of
//     values, with assertions on the rendered Corefile (parsed with CoreDNS's
//     own Caddyfile parser) and the exact RBAC rules; every rendered manifest
//     applied with kubectl apply --dry-run=server; and every rendered Corefile
//     run with the coredns binary under test (see chartLocalCorefile), which
//     must get ready and answer the zones' NS (and zone files) as rendered.
//   - TestChartBadValues: values.schema.json and the templates reject bad
//     values with a clear message, at helm template and helm install.
//   - TestChartInstallManifestCurrent: examples/install-clusterwide.yml is
//     what `make manifest` renders now, and the API server accepts it.
//   - TestChartInstall: helm install into the test cluster, then coredns runs
//     with the Corefile of the release's ConfigMap and a token of the release's
//     ServiceAccount: every kind syncs (no kind disabled, nothing forbidden) and
//     answers for an Ingress, a LoadBalancer Service, a DNSEndpoint, an
//     HTTPRoute and the NS glue of the release's own Service, which proves the
//     RBAC suffices; kubectl auth can-i --as the ServiceAccount proves it is
//     no broader than list and watch on those kinds. Also with Gateway API
//     only (the Role for the nameserver Service), and the chart README's
//     two-nameserver walk-through (two releases, each the other's secondary).

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const chartDir = "charts/k8s-gateway"

// ---------------------------------------------------------------- helm ----

var chartHelmBin struct {
	once sync.Once
	path string
	err  error
}

// chartHelm returns the helm binary, building it on first use (minutes, once
// per cache).
func chartHelm(t *testing.T) string {
	t.Helper()
	chartHelmBin.once.Do(func() {
		start := time.Now()
		cmd := exec.Command(filepath.Join(repoRoot, "hack/helm.sh"))
		cmd.Dir, cmd.Stderr = repoRoot, os.Stderr
		out, err := cmd.Output()
		chartHelmBin.path, chartHelmBin.err = strings.TrimSpace(string(out)), err
		if d := time.Since(start); d > 5*time.Second {
			fmt.Fprintf(os.Stderr, "hack/helm.sh built helm in %s\n", d.Round(time.Second))
		}
	})
	if chartHelmBin.err != nil {
		t.Fatalf("hack/helm.sh: %v", chartHelmBin.err)
	}
	return chartHelmBin.path
}

// chartHelmRun runs helm in the repository with private config, cache and data
// directories, against the test cluster.
func chartHelmRun(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(chartHelm(t), args...)
	home, err := os.MkdirTemp("", "k8sgw-helm-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(home)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+home+"/config", "HELM_CACHE_HOME="+home+"/cache", "HELM_DATA_HOME="+home+"/data",
		"KUBECONFIG="+kubeconfig)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

func chartHelmOut(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := chartHelmRun(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// chartValuesFile writes a values file for helm -f.
func chartValuesFile(t *testing.T, values string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// chartRender renders the chart as release k8s-gateway in ns.
func chartRender(t *testing.T, ns, values string) chartManifest {
	t.Helper()
	return parseChartManifest(t, chartHelmOut(t, "template", "k8s-gateway", chartDir, "--namespace", ns, "-f", chartValuesFile(t, values)))
}
