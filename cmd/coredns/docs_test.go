package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
)

// The plugins of this binary are what `coredns -plugins` lists: the ones
// this package registers, which the test binary registers too.
func binaryPlugins() map[string]bool {
	out := map[string]bool{}
	for _, p := range caddy.ListPlugins()["others"] {
		if name, ok := strings.CutPrefix(p, "dns."); ok {
			out[name] = true
		}
	}
	return out
}

// stockPlugins are the names of CoreDNS's plugins (its directives), whether
// this binary has them or not.
func stockPlugins() map[string]bool {
	out := map[string]bool{"kubernetes": true}
	for _, d := range append(slices.Clone(dnsserver.Directives), excluded...) {
		out[d] = true
	}
	delete(out, "k8s_gateway")
	return out
}

// TestDocsPluginsInBinary: a sentence of the docs that says which stock
// plugins the binary has or lacks agrees with the binary. Such a sentence
// names "binary" and the plugins in backticks (or italics); when it says
// "not", "leaves out" or "left out", every plugin it names must be absent,
// otherwise present. (Write one such sentence per claim: "X is in the
// binary; Y is not" is two.) The Corefiles of the docs are checked against
// the binary too: every directive of a "corefile" block is one of its
// plugins.
func TestDocsPluginsInBinary(t *testing.T) {
	has, stock := binaryPlugins(), stockPlugins()
	if !has["k8s_gateway"] || !has["geoip"] || has["kubernetes"] {
		t.Fatalf("the binary's plugins are not what main.go registers: %v", has)
	}
	absent := regexp.MustCompile(`(?i)\b(not|leaves out|left out)\b`)
	name := regexp.MustCompile("`([a-z0-9_]+)`|\\*([a-z0-9_]+)\\*")
	checked := 0
	for _, file := range markdownFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sentences(string(b)) {
			if !strings.Contains(strings.ToLower(s.text), "binary") {
				continue
			}
			missing := absent.MatchString(s.text)
			seen := map[string]bool{}
			for _, m := range name.FindAllStringSubmatch(s.text, -1) {
				p := m[1] + m[2]
				if !stock[p] || seen[p] {
					continue
				}
				seen[p] = true
				checked++
				switch {
				case missing && has[p]:
					t.Errorf("%s:%d: says the binary lacks the %s plugin, which `coredns -plugins` lists: %q", file, s.line, p, s.text)
				case !missing && !has[p]:
					t.Errorf("%s:%d: says the binary has the %s plugin, which `coredns -plugins` does not list: %q", file, s.line, p, s.text)
				}
			}
		}
		for line, corefile := range corefileBlocks(string(b)) {
			for _, d := range directives(corefile) {
				if stock[d] && !has[d] {
					t.Errorf("%s:%d: a Corefile uses the %s plugin, which the binary does not have", file, line, d)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no sentence of the docs names a plugin of the binary: the check checks nothing")
	}
}

// markdownFiles are the Markdown files of the repository (hidden
// directories and the changelog, which tells history, aside).
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	root := "../.."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != root && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".md") && d.Name() != "CHANGELOG.md":
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

type sentence struct {
	line int
	text string
}

// sentences splits the prose of a Markdown text (outside fenced blocks)
// into sentences: paragraphs and list items, each table row apart, are cut
// after a '.', '!' or '?' that a space follows.
func sentences(text string) []sentence {
	var out []sentence
	var para []string
	start, fence := 0, ""
	flush := func() {
		joined := strings.Join(para, " ")
		for joined != "" {
			cut := len(joined)
			for i := 0; i+1 < len(joined); i++ {
				if strings.ContainsRune(".!?", rune(joined[i])) && joined[i+1] == ' ' {
					cut = i + 1
					break
				}
			}
			out = append(out, sentence{start, strings.TrimSpace(joined[:cut])})
			joined = strings.TrimSpace(joined[cut:])
		}
		para = nil
	}
	for i, l := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(l)
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			flush()
			fence = trimmed[:3]
			continue
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		item := strings.HasPrefix(trimmed, "* ") || strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "|") ||
			strings.HasPrefix(trimmed, "#") || regexp.MustCompile(`^\d+\. `).MatchString(trimmed)
		if trimmed == "" || item {
			flush()
		}
		if trimmed != "" {
			if len(para) == 0 {
				start = i + 1
			}
			para = append(para, trimmed)
			if strings.HasPrefix(trimmed, "|") || strings.HasPrefix(trimmed, "#") {
				flush()
			}
		}
	}
	flush()
	return out
}

// corefileBlocks returns the fenced blocks with the info string "corefile",
// by the line they start on.
func corefileBlocks(text string) map[int]string {
	out := map[int]string{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if len(t) < 3 || (t[:3] != "```" && t[:3] != "~~~") || strings.TrimSpace(t[3:]) != "corefile" {
			continue
		}
		start := i + 1
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), t[:3]); i++ {
			body = append(body, lines[i])
		}
		out[start] = strings.Join(body, "\n")
	}
	return out
}

// directives returns the first word of each line of a Corefile inside a
// server block (depth 1): its plugins.
func directives(corefile string) []string {
	var out []string
	depth := 0
	for _, l := range strings.Split(corefile, "\n") {
		l, _, _ = strings.Cut(l, "#")
		if f := strings.Fields(l); len(f) > 0 && depth == 1 {
			out = append(out, f[0])
		}
		depth += strings.Count(l, "{") - strings.Count(l, "}")
	}
	return out
}
