package gateway

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The chart's metadata (Chart.yaml) is what Artifact Hub and helm show:
// its icon, links and the install notes' links name files of this
// repository, its image is the release's, and the chart README's table of
// tested Kubernetes versions says what hack/cluster.sh runs.

// repoFileURL matches a URL of a file of this repository on GitHub.
var repoFileURL = regexp.MustCompile(`^https://(?:raw\.githubusercontent\.com/seed-e581d630/k8s_gateway/main|github\.com/seed-e581d630/k8s_gateway/blob/main)/(.+)$`)

func TestChartMetadata(t *testing.T) {
	b, err := os.ReadFile("charts/k8s-gateway/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		AppVersion  string                  `json:"appVersion"`
		KubeVersion string                  `json:"kubeVersion"`
		Icon        string                  `json:"icon"`
		Maintainers []struct{ Name string } `json:"maintainers"`
		Annotations map[string]string       `json:"annotations"`
	}
	if err := yaml.Unmarshal(b, &chart); err != nil {
		t.Fatal(err)
	}
	exists := func(what, url string) {
		t.Helper()
		m := repoFileURL.FindStringSubmatch(url)
		if m == nil {
			t.Errorf("%s %q is not a file of this repository on its main branch", what, url)
			return
		}
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("%s %q: %v", what, url, err)
		}
	}
	exists("icon", chart.Icon)
	if len(chart.Maintainers) == 0 || chart.Maintainers[0].Name == "" {
		t.Errorf("Chart.yaml: no maintainers")
	}
	for _, key := range []string{"artifacthub.io/license", "artifacthub.io/category", "artifacthub.io/links", "artifacthub.io/images"} {
		if chart.Annotations[key] == "" {
			t.Errorf("Chart.yaml: no annotation %s", key)
		}
	}
	var links []struct{ Name, URL string }
	if err := yaml.Unmarshal([]byte(chart.Annotations["artifacthub.io/links"]), &links); err != nil || len(links) == 0 {
		t.Errorf("artifacthub.io/links: %v %v", links, err)
	}
	for _, l := range links {
		exists("link "+l.Name, l.URL)
	}
	var images []struct{ Name, Image string }
	if err := yaml.Unmarshal([]byte(chart.Annotations["artifacthub.io/images"]), &images); err != nil || len(images) != 1 {
		t.Fatalf("artifacthub.io/images: %v %v", images, err)
	}
	if want := "ghcr.io/seed-e581d630/k8s_gateway:" + chart.AppVersion; images[0].Image != want {
		t.Errorf("artifacthub.io/images names %s, want the release's %s", images[0].Image, want)
	}

	// The install notes link the installed release's docs: files that exist.
	notes, err := os.ReadFile("charts/k8s-gateway/templates/NOTES.txt")
	if err != nil {
		t.Fatal(err)
	}
	linked := regexp.MustCompile(`\{\{ \$docs \}\}/(\S+)`).FindAllStringSubmatch(string(notes), -1)
	if len(linked) < 3 {
		t.Errorf("NOTES.txt links %d documents by URL, want at least 3", len(linked))
	}
	for _, m := range linked {
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("NOTES.txt links %s: %v", m[1], err)
		}
	}

	// The README's table: the floor of kubeVersion, the control plane of the tests.
	readme, err := os.ReadFile("charts/k8s-gateway/README.md")
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := os.ReadFile("hack/cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	k8s := regexp.MustCompile(`(?m)^K8S_VERSION=v((1\.(\d+))\.\d+)`).FindStringSubmatch(string(cluster)) // full, minor, minor's number
	if k8s == nil {
		t.Fatal("hack/cluster.sh: no K8S_VERSION")
	}
	floor := strings.TrimSuffix(strings.TrimPrefix(chart.KubeVersion, ">="), ".0-0")
	for _, want := range []string{
		"needs Kubernetes " + floor + " or later",
		"| " + k8s[2] + " (`hack/cluster.sh`, v" + k8s[1] + ")",
		"| " + floor + " and " + k8s[2] + " (no control plane)",
	} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("charts/k8s-gateway/README.md: no %q (Chart.yaml kubeVersion %s, hack/cluster.sh %s)", want, chart.KubeVersion, k8s[0])
		}
	}
	suite, err := os.ReadFile("charts/k8s-gateway/tests/kubeversions_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, minor := range []string{strings.TrimPrefix(floor, "1."), k8s[3]} {
		if !strings.Contains(string(suite), `minorVersion: "`+minor+`"`) {
			t.Errorf("tests/kubeversions_test.yaml renders no case at 1.%s", minor)
		}
	}
}
