package gateway

import (
	"os"
	"strings"
	"testing"
)

// TestChangelogEntries: every entry of CHANGELOG.md (a "- " line and the
// indented lines that continue it) ends a sentence, so an edit that cuts an
// entry off mid-sentence, or drops its continuation lines, fails.
func TestChangelogEntries(t *testing.T) {
	b, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	var entry []string
	entries := 0
	end := func() {
		if entry == nil {
			return
		}
		entries++
		if text := strings.Join(entry, " "); !strings.HasSuffix(text, ".") {
			t.Errorf("CHANGELOG.md: an entry that does not end a sentence (cut off?): %q", text)
		}
		entry = nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "- "):
			end()
			entry = []string{strings.TrimSpace(line)}
		case entry != nil && strings.HasPrefix(line, "  ") && strings.TrimSpace(line) != "":
			entry = append(entry, strings.TrimSpace(line))
		default:
			end()
		}
	}
	end()
	if entries < 20 {
		t.Fatalf("CHANGELOG.md: %d entries; is the check still reading them?", entries)
	}
}
