package gateway

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The names the docs give users are the code's: Corefile options and their
// aliases, the annotations and labels the plugin reads or writes, its
// metrics (with their labels) and the reasons of its Events. Each check
// reads the name from the code (the parser's cases and option tables, the
// string constants of production files, the metric constructors' calls),
// and fails when a page names one the code does not have, or when the code
// has one that no page documents.
//
// Where the docs name them (the convention these checks rely on):
//   - options: the README's Syntax (its synopsis, one block per nesting, and
//     one bullet "* `name`" each), the first column of docs/reference/options.md, and
//     "the `name` option" anywhere; an alias as "`name` (alias `other`)";
//   - annotations and labels: in backticks, whole (`k8s-gateway.dns/weight`,
//     `k8s-gateway.dns/ignore: "true"`), or as a prefix in backticks and the
//     names after it in backticks in the same page (`external-dns.kubernetes.io/`
//     ... `hostname`);
//   - metrics: the README's Metrics section, one bullet naming each as
//     `name{label, ...}`; anywhere else (docs, the chart's rules and
//     dashboards) by name;
//   - Event reasons: in backticks (`DNSNameRejected`).

// userDocs are the Markdown files users read: everything but the changelog
// (history), hack/ and test/ (tools), wherever docs/ puts its pages.
func userDocs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range markdownFiles(t) {
		if f == "CHANGELOG.md" || strings.HasPrefix(f, "hack"+string(filepath.Separator)) ||
			strings.HasPrefix(f, "test"+string(filepath.Separator)) || strings.Contains(f, "testdata") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = string(b)
	}
	if len(out) < 20 {
		t.Fatalf("only %d user docs found", len(out))
	}
	return out
}

// productionFiles are the Go files of the plugin's binary (no tests, tools,
// test helpers or the command).
func productionFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "testdata" ||
			path == "test" || path == "hack" || path == "cmd" || path == filepath.Join("internal", "testutil") ||
			strings.HasSuffix(d.Name(), "test") && path != "."):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// goStrings returns the string literals of the production files.
func goStrings(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, f := range productionFiles(t) {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					out[s] = append(out[s], f)
				}
			}
			return true
		})
	}
	return out
}

var backtick = regexp.MustCompile("`([^`\n]+)`")

// spans returns the backticked spans of a Markdown text, fenced blocks
// included.
func spans(text string) []string {
	var out []string
	for _, m := range backtick.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// caseLabels returns the string cases of the switch statements of the
// function (or method) fn of a Go file.
func caseLabels(t *testing.T, file, fn string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == fn {
			ast.Inspect(fd, func(n ast.Node) bool {
				if cc, ok := n.(*ast.CaseClause); ok {
					for _, e := range cc.List {
						if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							s, _ := strconv.Unquote(lit.Value)
							out = append(out, s)
						}
					}
				}
				return true
			})
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no string cases in %s", file, fn)
	}
	return out
}

// codeOptions returns the options of each block: "" the k8s_gateway block,
// "updates" and "cluster" the nested ones.
func codeOptions(t *testing.T) map[string]map[string]bool {
	t.Helper()
	top, cluster := map[string]bool{}, map[string]bool{"subdomain": true}
	for o := range blockOptionTable {
		top[o] = true
	}
	for o := range clusterOptionTable {
		top[o], cluster[o] = true, true
	}
	for a := range optionAliases {
		top[a], cluster[a] = true, true
	}
	updates := map[string]bool{"cluster": true}
	for _, o := range caseLabels(t, filepath.Join("acmeupdate", "options.go"), "Set") {
		updates[o] = true
	}
	return map[string]map[string]bool{"": top, "updates": updates, "cluster": cluster}
}

// synopsisOptions returns the option names of the README's synopsis by the
// block they are in.
func synopsisOptions(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(b), "\n## Syntax\n")
	_, block, _ := strings.Cut(section, "~~~\n")
	block, _, _ = strings.Cut(block, "~~~")
	out := map[string][]string{}
	var stack []string
	for _, l := range strings.Split(block, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case f[0] == "}":
			stack = stack[:len(stack)-1]
		case f[0] == PluginName:
			stack = append(stack, "")
		case f[0] == "...":
		default:
			if len(stack) == 0 {
				t.Fatalf("README synopsis: %q outside the block", l)
			}
			out[stack[len(stack)-1]] = append(out[stack[len(stack)-1]], f[0])
			if f[len(f)-1] == "{" {
				stack = append(stack, f[0])
			}
		}
	}
	return out
}

// TestDocsOptions: the README's synopsis has every option of each block and
// no other; each option of the k8s_gateway block (and of a cluster block)
// has one bullet of the Syntax that starts with it; the options a page
// names (docs/reference/options.md's table, "the `X` option") exist; an alias is
// named the way the code has it.
func TestDocsOptions(t *testing.T) {
	code := codeOptions(t)
	synopsis := synopsisOptions(t)
	for block, names := range code {
		for name := range names {
			// The synopsis of a cluster block ends with "...": the block's
			// options that a cluster may set apart.
			if !slices.Contains(synopsis[block], name) && optionAliases[name] == "" &&
				!(block == "" && slices.Contains(synopsis["cluster"], name)) && !(block == "cluster" && slices.Contains(synopsis[""], name)) {
				t.Errorf("option %s of the %q block is not in the README's synopsis", name, block)
			}
		}
	}
	for block, names := range synopsis {
		for _, name := range names {
			if !code[block][name] {
				t.Errorf("the README's synopsis has %s in the %q block, which the code does not take", name, block)
			}
		}
	}
	_, prose := readmeSyntax(t)
	bullet := regexp.MustCompile("(?m)^\\* `([a-zA-Z_]+)`")
	starts := map[string]int{}
	for _, m := range bullet.FindAllStringSubmatch(prose, -1) {
		starts[m[1]]++
	}
	for name := range code[""] {
		if optionAliases[name] != "" {
			continue
		}
		switch n := starts[name]; {
		case n > 1:
			t.Errorf("option %s: %d bullets of the README's Syntax start with it; one says what it does", name, n)
		case n == 0 && !strings.Contains(prose, "`"+name+"`"):
			t.Errorf("option %s: not described in the README's Syntax", name)
		}
	}
	for name := range starts {
		if !code[""][name] && !code["cluster"][name] {
			t.Errorf("a bullet of the README's Syntax describes %s, which is not an option", name)
		}
	}

	any := map[string]bool{}
	for _, names := range code {
		for n := range names {
			any[n] = true
		}
	}
	named := regexp.MustCompile("`([a-zA-Z_]+)[^`]*` options?\\b|\\boptions? `([a-zA-Z_]+)[^`]*`")
	alias := regexp.MustCompile("`([a-zA-Z_]+)[^`]*` \\(alias `([a-zA-Z_]+)`\\)")
	docs := userDocs(t)
	for file, text := range docs {
		for n, line := range proseLines(text) {
			for _, m := range named.FindAllStringSubmatch(line, -1) {
				if name := m[1] + m[2]; !any[name] {
					t.Errorf("%s:%d: names the option %s, which the code does not take", file, n+1, name)
				}
			}
			for _, m := range alias.FindAllStringSubmatch(line, -1) {
				if optionAliases[m[2]] != m[1] {
					t.Errorf("%s:%d: says %s is an alias of %s; the code's aliases are %v", file, n+1, m[2], m[1], optionAliases)
				}
			}
		}
	}
	table := 0
	for _, line := range strings.Split(docs[filepath.Join("docs", "reference", "options.md")], "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		for _, s := range spans(cells[1]) {
			name := strings.Fields(s)[0]
			if table++; !any[name] {
				t.Errorf("docs/reference/options.md: the table names the option %s, which the code does not take", name)
			}
		}
	}
	if table < 10 {
		t.Errorf("docs/reference/options.md: %d options in its table; is the table still there?", table-1)
	}
}

// keyPattern is an annotation or label key.
var keyPattern = regexp.MustCompile(`^[a-z0-9-]+(\.[a-z0-9-]+)+/[A-Za-z0-9._-]+$`)

// apiVersion is an API group and version, which looks like a key.
var apiVersion = regexp.MustCompile(`/v[0-9]+((alpha|beta)[0-9]+)?$`)

// ours are the prefixes of the keys the docs name that must be the code's.
var ours = regexp.MustCompile(`\b((?:k8s-gateway\.dns|coredns\.io|external-dns(?:\.alpha)?\.kubernetes\.io)/[A-Za-z0-9._-]*)`)

// internalKeys are keys of the code that no user sees.
var internalKeys = map[string]string{
	"k8s-gateway.dns/invalid": "set in memory on an object that could not be decoded, never written",
}

// TestDocsAnnotationsAndLabels: every annotation and label key of the
// production code is documented, and every key of the plugin's own
// prefixes (k8s-gateway.dns/, coredns.io/, external-dns's) a page names is
// one the code reads or writes.
func TestDocsAnnotationsAndLabels(t *testing.T) {
	code := map[string]bool{}
	for s := range goStrings(t) {
		if keyPattern.MatchString(s) && !apiVersion.MatchString(s) {
			code[s] = true
		}
	}
	for _, k := range []string{"k8s-gateway.dns/weight", "coredns.io/hostname", "k8s-gateway.dns/tsig-key"} {
		if !code[k] {
			t.Fatalf("the code's keys %v lack %s: is the scan broken?", code, k)
		}
	}
	docs := userDocs(t)
	named := map[string]bool{}  // keys named whole
	prefix := map[string]bool{} // "prefix/" + "name" named in one page
	for file, text := range docs {
		var pfx []string
		words := map[string]bool{}
		for _, s := range spans(text) {
			words[s] = true
			for _, m := range ours.FindAllStringSubmatch(s, -1) {
				if strings.HasSuffix(m[1], "/") {
					pfx = append(pfx, m[1])
					continue
				}
				named[m[1]] = true
				if !code[m[1]] {
					t.Errorf("%s: names the key %s, which the code neither reads nor writes", file, m[1])
				}
			}
			if k, _, _ := strings.Cut(s, ":"); keyPattern.MatchString(k) {
				named[k] = true
			}
		}
		for _, p := range pfx {
			for w := range words {
				prefix[p+w] = true
			}
		}
	}
	for k := range code {
		if !named[k] && !prefix[k] && internalKeys[k] == "" && !strings.HasPrefix(k, "kubectl.kubernetes.io/") {
			t.Errorf("the code uses the key %s, which no page names", k)
		}
	}
}

// codeMetrics returns the metrics the production code registers, each with
// its labels (the constructors of internal/metrics: name, help, then the
// labels; a histogram's buckets before them).
func codeMetrics(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, f := range productionFiles(t) {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "metrics" {
				return true
			}
			skip := 2
			switch sel.Sel.Name {
			case "CounterVec", "GaugeVec", "Desc":
			case "HistogramVec":
				skip = 3
			case "RenamedCounterVec": // name, help, old name, old help, labels
				skip = 4
			default:
				return true
			}
			var strs []string
			for i, a := range call.Args {
				lit, ok := a.(*ast.BasicLit)
				if i == 0 && !ok {
					t.Errorf("%s: metrics.%s with a name that is not a literal", f, sel.Sel.Name)
					return true
				}
				if i == 0 || i >= skip {
					if !ok {
						t.Errorf("%s: metrics.%s(%s): a label that is not a literal", f, sel.Sel.Name, strs[0])
						return true
					}
					s, _ := strconv.Unquote(lit.Value)
					strs = append(strs, s)
				}
			}
			out["coredns_k8s_gateway_"+strs[0]] = strs[1:]
			if old, ok := call.Args[2].(*ast.BasicLit); ok && sel.Sel.Name == "RenamedCounterVec" {
				s, _ := strconv.Unquote(old.Value)
				out["coredns_k8s_gateway_"+s] = strs[1:]
			}
			return true
		})
	}
	if len(out) < 20 {
		t.Fatalf("only %d metrics found in the code: %v", len(out), out)
	}
	return out
}

// TestDocsMetrics: each metric the code registers has one bullet of the
// README's Metrics section that names it with its labels, as the code has
// them; every metric a page, the chart's alerting rules or its dashboard
// names is registered.
func TestDocsMetrics(t *testing.T) {
	code := codeMetrics(t)
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Metrics\n")
	if !ok {
		t.Fatal("README.md has no Metrics section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	defined := regexp.MustCompile("`(coredns_k8s_gateway_[a-z_]+)\\{([^}]*)\\}`")
	count := map[string]int{}
	for _, m := range defined.FindAllStringSubmatch(section, -1) {
		count[m[1]]++
		labels, ok := code[m[1]]
		if !ok {
			t.Errorf("README Metrics: %s is not a metric of the code", m[1])
			continue
		}
		var doc []string
		for _, l := range strings.Split(m[2], ",") {
			if l = strings.TrimSpace(l); l != "" {
				doc = append(doc, l)
			}
		}
		if !slices.Equal(doc, labels) {
			t.Errorf("README Metrics: %s{%s}: the code's labels are {%s}", m[1], strings.Join(doc, ", "), strings.Join(labels, ", "))
		}
	}
	for name := range code {
		if count[name] != 1 {
			t.Errorf("README Metrics: %s is named with its labels %d times; want once", name, count[name])
		}
	}

	name := regexp.MustCompile(`coredns_k8s_gateway_[a-z_]+`)
	files := map[string]string{}
	for f, text := range userDocs(t) {
		files[f] = text
	}
	err = filepath.WalkDir(filepath.Join("charts", "k8s-gateway"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(path, ".md") {
			b, err := os.ReadFile(path)
			files[path] = string(b)
			return err
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for f, text := range files {
		for _, m := range name.FindAllString(text, -1) {
			base := m
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if s, ok := strings.CutSuffix(m, suffix); ok && code[s] != nil {
					base = s
				}
			}
			if _, ok := code[base]; !ok {
				bad = append(bad, f+": "+m)
			}
		}
	}
	sort.Strings(bad)
	for _, b := range slices.Compact(bad) {
		t.Errorf("%s is not a metric of the code", b)
	}
}

// TestDocsEventReasons: the reasons of the Events the plugin emits (the
// constants event* of the production code) are each named in a page, and
// every reason a page names in backticks is one of them.
func TestDocsEventReasons(t *testing.T) {
	code := map[string]bool{}
	for _, f := range productionFiles(t) {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, id := range vs.Names {
				if !strings.HasPrefix(id.Name, "event") || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, _ := strconv.Unquote(lit.Value); s != "Warning" && s != "Normal" {
						code[s] = true
					}
				}
			}
			return true
		})
	}
	if !code["DNSNameRejected"] || !code["DNSUpdateRefused"] {
		t.Fatalf("the code's Event reasons %v lack DNSNameRejected or DNSUpdateRefused: is the scan broken?", code)
	}
	reason := regexp.MustCompile(`^DNS[A-Z][a-z]+[A-Z][A-Za-z]*$`)
	named := map[string]bool{}
	for file, text := range userDocs(t) {
		for _, s := range spans(text) {
			if reason.MatchString(s) && s != "DNSEndpoint" {
				named[s] = true
				if !code[s] {
					t.Errorf("%s: names the Event reason %s, which the code does not emit", file, s)
				}
			}
		}
	}
	for r := range code {
		if !named[r] {
			t.Errorf("the Event reason %s is named in no page", r)
		}
	}
}
