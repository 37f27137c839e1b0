package gateway

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The docs are part of the product: every relative link of the Markdown files
// resolves, to a file and, for a #fragment, to a heading of the Markdown file
// it names (GitHub's anchors).

// markdownFiles are the repository's Markdown files (hidden directories aside).
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != "." && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".md"):
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var (
	mdLink    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#*$`)
)

// proseLines returns the lines of a Markdown text outside fenced code blocks,
// and blanks in place of the others (so that indexes are line numbers - 1).
func proseLines(text string) []string {
	var out []string
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		out = append(out, "")
		trimmed := strings.TrimSpace(line)
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
		case fence != "" && strings.HasPrefix(trimmed, fence):
			fence = ""
		case fence == "":
			out[len(out)-1] = line
		}
	}
	return out
}

// anchors returns the anchors GitHub gives the headings of a Markdown text.
func anchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(strings.Join(proseLines(text), "\n"), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func TestDocsLinks(t *testing.T) {
	for _, file := range markdownFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		own := anchors(string(b))
		for n, line := range proseLines(string(b)) {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, frag, _ := strings.Cut(target, "#")
				anchorsOf := own
				if path != "" {
					full := filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(full); err != nil {
						t.Errorf("%s:%d: link %q: %v", file, n+1, target, err)
						continue
					}
					if frag == "" || !strings.HasSuffix(path, ".md") {
						continue
					}
					tb, _ := os.ReadFile(full)
					anchorsOf = anchors(string(tb))
				}
				if frag != "" && !anchorsOf[frag] {
					t.Errorf("%s:%d: link %q: no heading with the anchor #%s", file, n+1, target, frag)
				}
			}
		}
	}
}
