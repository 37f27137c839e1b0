package gateway

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestReadmeShape: the README is a CoreDNS plugin README, its sections those
// of CoreDNS's plugins in their order (Delegate the zone after Install), and
// short enough to read: under 400 lines, the rest in docs/.
func TestReadmeShape(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) >= 400 {
		t.Errorf("README.md has %d lines; keep it under 400 (details go to a page of docs/)", len(lines))
	}
	var sections []string
	for _, l := range proseLines(string(b)) {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			sections = append(sections, strings.TrimSpace(h))
		}
	}
	want := []string{"Name", "Description", "Install", "Delegate the zone", "Syntax", "Examples", "Metrics", "Ready", "See Also", "Bugs"}
	if !slices.Equal(sections, want) {
		t.Errorf("README.md's sections are %q, want %q", sections, want)
	}
}
