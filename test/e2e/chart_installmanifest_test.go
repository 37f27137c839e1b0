//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestChartInstallManifestCurrent: examples/install-clusterwide.yml is what
// `make manifest` renders from the chart now, and the API server takes it.
func TestChartInstallManifestCurrent(t *testing.T) {
	chartHelm(t)
	const path = "examples/install-clusterwide.yml"
	tmp := filepath.Join(t.TempDir(), "install-clusterwide.yml")
	cmd := exec.Command("make", "--no-print-directory", "-s", "manifest", "MANIFEST="+tmp)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make manifest: %v\n%s", err, out)
	}
	got, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatalf("%v (generate it with make chartManifest)", err)
	}
	if !bytes.Equal(got, have) {
		gl, hl := strings.Split(string(got), "\n"), strings.Split(string(have), "\n")
		i := 0
		for i < len(gl) && i < len(hl) && gl[i] == hl[i] {
			i++
		}
		at := func(l []string) string {
			if i < len(l) {
				return l[i]
			}
			return "<end of file>"
		}
		t.Fatalf("%s is stale: run make chartManifest (line %d is %q, the chart renders %q)", path, i+1, at(hl), at(gl))
	}
	m := parseChartManifest(t, string(have))
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Service", "Deployment"} {
		labels := chartGet[struct {
			Metadata struct{ Labels map[string]string } `json:"metadata"`
		}](t, m, kind, "").Metadata.Labels
		// Applied with kubectl: no label says Helm manages the objects.
		if _, chart := labels["helm.sh/chart"]; chart || labels["app.kubernetes.io/managed-by"] != "" || labels["app.kubernetes.io/instance"] != "k8s-gateway" {
			t.Errorf("%s of the manifest: labels %v, want the release's without Helm's", kind, labels)
		}
	}
	cf := parseChartCorefile(t, chartGet[corev1.ConfigMap](t, m, "ConfigMap", "").Data["Corefile"])
	if _, opts := cf[0].gateway(t); !slices.Equal(cf[0].keys, []string{"example.com:1053"}) || !slices.Equal(opts["apex"], []string{"k8s-gateway.kube-system"}) {
		t.Errorf("install chartManifest Corefile: %+v", cf)
	}
	chartApplyDryRun(t, m.text)
}
