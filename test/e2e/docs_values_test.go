//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Every fenced block of the Markdown files whose info string is "yaml values"
// holds chart values a user may paste: helm template renders the chart with
// them (over `domain: example.com`, which a snippet may replace), so the
// chart's values.schema.json and its template checks accept them. A "yaml"
// block whose top-level keys are all values of the chart and that is not a
// Kubernetes object must be marked so (CONTRIBUTING.md, "Docs").

// valuesSnippet is a fenced YAML block of a Markdown file.
type valuesSnippet struct {
	where  string // file:line
	body   string
	marked bool // its info string is "yaml values"
}

// yamlSnippets returns the fenced blocks of a Markdown text whose info string
// starts with "yaml".
func yamlSnippets(file, text string) []valuesSnippet {
	var out []valuesSnippet
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if len(t) < 3 || (t[:3] != "```" && t[:3] != "~~~") {
			continue
		}
		fence, info := t[:3], strings.Fields(t[3:])
		indent := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " "))]
		start := i + 1
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		if len(info) > 0 && info[0] == "yaml" {
			out = append(out, valuesSnippet{
				where:  fmt.Sprintf("%s:%d", file, start),
				body:   strings.Join(body, "\n") + "\n",
				marked: len(info) > 1 && info[1] == "values",
			})
		}
	}
	return out
}

// repoMarkdown returns the Markdown files of the repository, relative to it
// (hidden directories aside).
func repoMarkdown(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != repoRoot && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".md"):
			rel, _ := filepath.Rel(repoRoot, path)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// chartValueNames returns the top-level properties of the chart's schema.
func chartValueNames(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for k := range schema.Properties {
		names[k] = true
	}
	return names
}

// looksLikeValues: the YAML is one mapping, not a Kubernetes object, whose
// keys are all values of the chart.
func looksLikeValues(body string, names map[string]bool) bool {
	var m map[string]any
	if strings.Contains(body, "\n---") || yaml.Unmarshal([]byte(body), &m) != nil || len(m) == 0 {
		return false
	}
	if _, ok := m["apiVersion"]; ok {
		return false
	}
	for k := range m {
		if !names[k] {
			return false
		}
	}
	return true
}

func TestDocsValuesSnippets(t *testing.T) {
	chartHelm(t)
	names := chartValueNames(t)
	base := chartValuesFile(t, "domain: example.com\n")
	n := 0
	for _, file := range repoMarkdown(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range yamlSnippets(file, string(b)) {
			if !s.marked {
				if looksLikeValues(s.body, names) {
					t.Errorf("%s: chart values fenced as plain yaml: fence them as \"yaml values\" so that they are tested", s.where)
				}
				continue
			}
			n++
			path := filepath.Join(t.TempDir(), "values.yaml")
			writeFile(t, path, s.body)
			if out, errOut, err := chartHelmRun(t, "template", "k8s-gateway", chartDir, "--namespace", "kube-system", "-f", base, "-f", path); err != nil {
				t.Errorf("%s: helm template rejects the values: %v\n%s%s\nvalues:\n%s", s.where, err, errOut, out, s.body)
			}
		}
	}
	if n == 0 {
		t.Fatal("no \"yaml values\" snippet found")
	}
	t.Logf("%d values snippets rendered", n)
}

// helmCommands returns the helm install, upgrade and template commands of a
// Markdown text (continuation lines joined), by the line they start on.
func helmCommands(text string) map[int]string {
	out := map[int]string{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.Contains(l, "helm install ") && !strings.Contains(l, "helm upgrade ") && !strings.Contains(l, "helm template ") &&
			!strings.Contains(l, "helm.sh install ") {
			continue
		}
		start := i
		cmd := strings.TrimSpace(l)
		for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, "\\") + " " + strings.TrimSpace(lines[i])
		}
		out[start+1] = cmd
	}
	return out
}

// TestDocsHelmSets: the --set values of every helm command in the Markdown
// files render the chart (helm template, over `domain: example.com`).
func TestDocsHelmSets(t *testing.T) {
	chartHelm(t)
	base := chartValuesFile(t, "domain: example.com\n")
	n := 0
	for _, file := range repoMarkdown(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		for line, cmd := range helmCommands(string(b)) {
			args := []string{"template", "k8s-gateway", chartDir, "--namespace", "kube-system", "-f", base}
			f := strings.Fields(cmd)
			sets := 0
			for i := 0; i+1 < len(f); i++ {
				if f[i] == "--set" || f[i] == "--set-string" {
					args = append(args, f[i], strings.Trim(f[i+1], `"'`))
					sets++
				}
			}
			if sets == 0 {
				continue
			}
			n++
			if out, errOut, err := chartHelmRun(t, args...); err != nil {
				t.Errorf("%s:%d: helm template rejects the --set values of %q: %v\n%s%s", file, line, cmd, err, errOut, out)
			}
		}
	}
	if n == 0 {
		t.Fatal("no helm command with --set found")
	}
	t.Logf("%d helm commands rendered", n)
}
