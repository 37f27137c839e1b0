package gateway

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The release the docs tell users to install is the one the chart describes:
// make release VERSION=<appVersion> REGISTRY=<the default image's registry and
// path> pushes the chart to oci://REGISTRY/charts/k8s-gateway (chart version:
// appVersion without its "v") and the image to REGISTRY/k8s_gateway:<appVersion>,
// which is the chart's default image.

var (
	docChartRef = regexp.MustCompile(`oci://([^\s/]+(?:/[^\s/]+)*)/charts/k8s-gateway(?:\s+--version\s+(\S+))?`)
	docImageRef = regexp.MustCompile(`\b([a-z0-9.-]+\.[a-z]+(?::[0-9]+)?/[a-z0-9._/-]+/k8s_gateway):(v[0-9][^\s` + "`" + `]*)`)
)

// yamlField returns the value of the first line "indent+key: value" of text.
func yamlField(t *testing.T, text, indent, key string) string {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, indent+key+":"); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	t.Fatalf("no %q", indent+key)
	return ""
}

func TestReleaseVersionsInDocs(t *testing.T) {
	chart, err := os.ReadFile("charts/k8s-gateway/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	values, err := os.ReadFile("charts/k8s-gateway/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	version := yamlField(t, string(chart), "", "version")
	appVersion := yamlField(t, string(chart), "", "appVersion")
	if appVersion != "v"+version {
		t.Fatalf("Chart.yaml: appVersion %q, version %q: a release sets both (v%s and %s)", appVersion, version, version, version)
	}
	_, imageBlock, _ := strings.Cut(string(values), "\nimage:\n")
	if yamlField(t, imageBlock, "  ", "tag") != "" {
		t.Errorf("values.yaml: image.tag is set; the default image must follow the chart's appVersion")
	}
	repo := yamlField(t, imageBlock, "  ", "repository")
	if path.Base(repo) != "k8s_gateway" {
		t.Fatalf("values.yaml: image.repository %q is not where make release pushes (REGISTRY/k8s_gateway)", repo)
	}
	registry := yamlField(t, imageBlock, "  ", "registry") + "/" + path.Dir(repo)
	image := registry + "/k8s_gateway"

	found := 0
	for _, file := range markdownFiles(t) {
		if strings.HasPrefix(file, "dist/") {
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, m := range docChartRef.FindAllStringSubmatch(text, -1) {
			if m[1] != registry || m[2] == "" {
				continue // another registry (a user's own), or no version named
			}
			found++
			if m[2] != version {
				t.Errorf("%s: %q: the chart's version is %s", file, m[0], version)
			}
		}
		for _, m := range docImageRef.FindAllStringSubmatch(text, -1) {
			if m[1] != image {
				continue
			}
			found++
			if m[2] != appVersion {
				t.Errorf("%s: %s:%s: the release's image is %s:%s", file, m[1], m[2], image, appVersion)
			}
		}
	}
	if found == 0 {
		t.Errorf("no Markdown file names oci://%s/charts/k8s-gateway --version %s or %s:%s", registry, version, image, appVersion)
	}
}

// The release workflow takes the GitHub release's notes from CHANGELOG.md
// with hack/release.sh notes: the version's section, without the next one,
// and an error for a version the changelog does not have.
func TestReleaseNotes(t *testing.T) {
	changelog := filepath.Join(t.TempDir(), "CHANGELOG.md")
	if err := os.WriteFile(changelog, []byte("# Changelog\n\n## [Unreleased]\n\n- next\n\n## [v1.2.0] - 2026-01-02\n\n### Added\n\n- a\n\n### Fixed\n\n- b\n\n## [v1.1.0] - 2025-01-01\n\n- old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notes := func(version string) (string, error) {
		cmd := exec.Command("hack/release.sh", "notes", version)
		cmd.Env = append(os.Environ(), "CHANGELOG="+changelog)
		out, err := cmd.Output()
		return string(out), err
	}
	for version, want := range map[string]string{
		"v1.2.0": "### Added\n\n- a\n\n### Fixed\n\n- b\n",
		"v1.1.0": "- old\n",
	} {
		if got, err := notes(version); err != nil || got != want {
			t.Errorf("notes %s: %q, %v; want %q", version, got, err, want)
		}
	}
	for _, version := range []string{"v1.3.0", "v1.2"} {
		if got, err := notes(version); err == nil {
			t.Errorf("notes %s: %q, want an error", version, got)
		}
	}
}

// docs/guides/install.md tells users to verify a release by the identity of the
// workflow that signed it: the release workflow of this repository, at the
// tag of the release the docs name (appVersion), which signs keyless.
func TestReleaseVerifyIdentity(t *testing.T) {
	doc, err := os.ReadFile("docs/guides/install.md")
	if err != nil {
		t.Fatal(err)
	}
	chart, err := os.ReadFile("charts/k8s-gateway/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	appVersion := yamlField(t, string(chart), "", "appVersion")
	const workflow = ".github/workflows/release.yml"
	want := "https://github.com/seed-e581d630/k8s_gateway/" + workflow + "@refs/tags/" + appVersion
	ids := regexp.MustCompile(`--certificate-identity (\S+)`).FindAllStringSubmatch(string(doc), -1)
	if len(ids) < 3 {
		t.Fatalf("docs/guides/install.md: %d cosign commands with --certificate-identity, want the image's, the chart's and the provenance's", len(ids))
	}
	for _, m := range ids {
		if m[1] != want {
			t.Errorf("docs/guides/install.md: --certificate-identity %s, want %s", m[1], want)
		}
	}
	if n := strings.Count(string(doc), "--certificate-oidc-issuer https://token.actions.githubusercontent.com"); n != len(ids) {
		t.Errorf("docs/guides/install.md: %d commands name GitHub's OIDC issuer, want %d", n, len(ids))
	}
	wf, err := os.ReadFile(workflow)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"    tags: ['v*.*.*']", "      id-token: write   # cosign keyless: the workflow's OIDC token",
		`        run: make release VERSION="$TAG" REGISTRY="$REGISTRY" SIGN=keyless`} {
		if !strings.Contains(string(wf), line+"\n") {
			t.Errorf("%s: no line %q (the release of a tag, signed keyless)", workflow, line)
		}
	}
}
