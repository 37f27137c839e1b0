package gateway

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsIndex: every page under docs/, in whatever folder, is listed
// (linked) in docs/README.md, as the README says.
func TestDocsIndex(t *testing.T) {
	const index = "docs/README.md"
	b, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	// A link's text may run over two lines.
	for _, m := range mdLink.FindAllStringSubmatch(strings.Join(proseLines(string(b)), "\n"), -1) {
		path, _, _ := strings.Cut(m[1], "#")
		if path != "" && !strings.Contains(path, "://") {
			listed[filepath.Clean(filepath.Join(filepath.Dir(index), path))] = true
		}
	}
	pages := 0
	err = filepath.WalkDir("docs", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") || path == filepath.Clean(index) {
			return err
		}
		pages++
		if !listed[path] {
			t.Errorf("%s is not listed in %s", path, index)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pages < 10 {
		t.Fatalf("only %d pages under docs/", pages)
	}
}
