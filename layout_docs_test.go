package gateway

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The docs that describe the repository's layout list exactly what is there:
// CONTRIBUTING's Architecture table every package of the module, hack/README
// every entry of hack/.

// tableNames returns the code spans of the first column of the first table
// after the line heading in the Markdown file path, one slice per row.
func tableNames(t *testing.T, path, heading string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := proseLines(string(data))
	start := slices.Index(lines, heading)
	if start < 0 {
		t.Fatalf("%s: no line %q", path, heading)
	}
	var rows [][]string
	inTable := false
	for i, line := range lines[start+1:] {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), "|")
		switch {
		case !inTable: // the header
			inTable = true
		case strings.Trim(cells[0], " -:") == "": // the delimiter row
		default:
			var names []string
			for _, m := range codeSpan.FindAllStringSubmatch(cells[0], -1) {
				names = append(names, m[1])
			}
			if len(names) == 0 {
				t.Errorf("%s:%d: a row names nothing in `code` in its first column: %s", path, start+i+2, line)
			}
			rows = append(rows, names)
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no table after %q", path, heading)
	}
	return rows
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// compareNames reports the names missing from listed, those listed that
// are not in want, and those listed twice.
func compareNames(t *testing.T, where string, listed, want []string) {
	t.Helper()
	seen := map[string]int{}
	for _, n := range listed {
		seen[n]++
		if seen[n] == 2 {
			t.Errorf("%s lists %s twice", where, n)
		}
		if !slices.Contains(want, n) {
			t.Errorf("%s lists %s, which does not exist", where, n)
		}
	}
	for _, n := range want {
		if seen[n] == 0 {
			t.Errorf("%s does not list %s", where, n)
		}
	}
}

// TestArchitecturePackages: the package table of CONTRIBUTING's
// Architecture lists each package of the module once (`go list ./...` but
// cmd/, test/ and hack/), the root as `.`.
func TestArchitecturePackages(t *testing.T) {
	const module = "github.com/seed-e581d630/k8s_gateway"
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var want []string
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		switch {
		case rel == "":
			want = append(want, ".")
		case rel == "cmd" || rel == "test" || rel == "hack",
			strings.HasPrefix(rel, "cmd/"), strings.HasPrefix(rel, "test/"), strings.HasPrefix(rel, "hack/"):
		default:
			want = append(want, rel)
		}
	}
	var listed []string
	for _, row := range tableNames(t, "CONTRIBUTING.md", "## Architecture") {
		listed = append(listed, row...)
	}
	compareNames(t, "CONTRIBUTING.md's Architecture table", listed, want)
}

// TestHackReadme: the table at the top of hack/README.md lists each entry
// of hack/ once, a directory with a trailing slash.
func TestHackReadme(t *testing.T) {
	entries, err := os.ReadDir("hack")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range entries {
		switch {
		case e.Name() == "README.md":
		case e.IsDir():
			want = append(want, e.Name()+"/")
		default:
			want = append(want, e.Name())
		}
	}
	var listed []string
	for _, row := range tableNames(t, "hack/README.md", "# hack/: the developer's scripts and tools") {
		if len(row) > 0 {
			listed = append(listed, row[0])
		}
	}
	compareNames(t, "hack/README.md's table", listed, want)
}
