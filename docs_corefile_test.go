package gateway

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/caddy/caddyfile"
	"github.com/coredns/coredns/core/dnsserver"
)

// Every fenced block of the Markdown files whose info string is "corefile"
// is a Corefile a user may paste: it parses with CoreDNS's directives, and
// each k8s_gateway block in it passes the plugin's own parser. Files the
// block names (kubeconfig, TSIG key files, persist directories) are made in
// a temporary directory first. A block that is not meant to parse is fenced
// without the "corefile" info string.

// corefileSnippets returns the "corefile" blocks of a Markdown text, by the
// line they start on.
func corefileSnippets(text string) map[int]string {
	out := map[int]string{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if len(t) < 3 || (t[:3] != "```" && t[:3] != "~~~") || strings.TrimSpace(t[3:]) != "corefile" {
			continue
		}
		indent := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " "))]
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), t[:3]); i++ {
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		out[i-len(body)] = strings.Join(body, "\n") + "\n"
	}
	return out
}

// pluginBlocks returns each "k8s_gateway ..." line with its block, as written.
func pluginBlocks(corefile string) []string {
	var out []string
	lines := strings.Split(corefile, "\n")
	for i, l := range lines {
		if f := strings.Fields(l); len(f) == 0 || f[0] != PluginName {
			continue
		}
		depth, j := 0, i
		for ; j < len(lines); j++ {
			depth += strings.Count(lines[j], "{") - strings.Count(lines[j], "}")
			if depth <= 0 {
				break
			}
		}
		out = append(out, strings.Join(lines[i:min(j+1, len(lines))], "\n"))
	}
	return out
}

// withFiles rewrites the absolute paths of a k8s_gateway block into dir and
// makes what the plugin reads there: a kubeconfig (with the context named
// after it, if any), a TSIG secret; a persist directory is made by the plugin.
func withFiles(t *testing.T, block, dir string) string {
	var out []string
	for _, line := range strings.Split(block, "\n") {
		f := strings.Fields(line)
		for i, tok := range f {
			if !strings.HasPrefix(tok, "/") || i == 0 {
				continue
			}
			path := filepath.Join(dir, tok)
			line = strings.Replace(line, tok, path, 1)
			if f[i-1] == "persist" {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			content := "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0\n"
			if f[i-1] == "kubeconfig" {
				ctx := "default"
				if i+1 < len(f) && f[i+1] != "{" && f[i+1] != "}" {
					ctx = f[i+1]
				}
				content = fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"+
					"users: [{name: u, user: {token: t}}]\ncontexts: [{name: %s, context: {cluster: c, user: u}}]\ncurrent-context: %s\n", ctx, ctx)
			}
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

func TestDocsCorefiles(t *testing.T) {
	n := 0
	for _, file := range markdownFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for line, snippet := range corefileSnippets(string(b)) {
			n++
			checkCorefile(t, fmt.Sprintf("%s:%d", file, line), snippet)
		}
	}
	if n == 0 {
		t.Fatal("no corefile snippet found")
	}
	t.Logf("%d Corefile snippets parsed", n)
}

// TestDocsCorefilesMarked: a fenced block that holds a k8s_gateway block
// with neither placeholders ("...", <...>) nor the "corefile" info string is
// a Corefile left out of TestDocsCorefiles: it must be fenced "corefile".
func TestDocsCorefilesMarked(t *testing.T) {
	for _, file := range markdownFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			tr := strings.TrimSpace(lines[i])
			if len(tr) < 3 || (tr[:3] != "```" && tr[:3] != "~~~") {
				continue
			}
			fence, info, start := tr[:3], strings.TrimSpace(tr[3:]), i+1
			var body []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
				body = append(body, lines[i])
			}
			text := strings.Join(body, "\n")
			if info == "corefile" || strings.Contains(text, "...") || strings.Contains(text, "<") || len(pluginBlocks(text)) == 0 {
				continue
			}
			t.Errorf("%s:%d: a Corefile fenced %q: fence it \"corefile\" so that it is tested", file, start, info)
		}
	}
}

// TestExampleCorefiles: every recipe of examples/ parses, as the snippets do.
func TestExampleCorefiles(t *testing.T) {
	files, err := filepath.Glob("examples/Corefile*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples/Corefile*: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		checkCorefile(t, file, string(b))
	}
}

// checkCorefile parses a Corefile, or a lone k8s_gateway block, with
// CoreDNS's directives, and each k8s_gateway block in it with the plugin's
// parser.
func checkCorefile(t *testing.T, where, corefile string) {
	t.Helper()
	directives := append(slices.Clone(dnsserver.Directives), PluginName)
	var keys []string
	if f := strings.Fields(stripComments(corefile)); len(f) == 0 || f[0] != PluginName { // a whole Corefile, not one block
		blocks, err := caddyfile.Parse(where, strings.NewReader(corefile), directives)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			return
		}
		if len(blocks) == 0 {
			t.Errorf("%s: no server block", where)
		}
		for _, sb := range blocks {
			keys = append(keys, sb.Keys...)
		}
	}
	blocks := pluginBlocks(corefile)
	if len(blocks) == 0 {
		t.Errorf("%s: no k8s_gateway block", where)
	}
	for _, block := range blocks {
		c := caddy.NewTestController("dns", withFiles(t, block, t.TempDir()))
		c.ServerBlockKeys = keys
		if _, err := parse(c); err != nil {
			t.Errorf("%s: the k8s_gateway block does not parse: %v\n%s", where, err, block)
		}
	}
}

// stripComments drops the # comments of a Corefile.
func stripComments(corefile string) string {
	var out []string
	for _, l := range strings.Split(corefile, "\n") {
		if i := strings.Index(l, "#"); i >= 0 {
			l = l[:i]
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
