package gateway

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsPerformanceClaims: every performance figure of the docs (a time
// per query or per change, a rate, a memory size, a ratio of costs) sits in
// a paragraph, list item or table row (or, in a table, its section) that
// names what prints it: a Go benchmark (`BenchmarkX`), a `make bench...` or
// `make chaos` target, a hack/bench script, or a test that logs it
// (`TestX`); and each benchmark, target and test named exists. A figure
// with nothing to reproduce it is a claim no one can check.
func TestDocsPerformanceClaims(t *testing.T) {
	benchmarks, tests := goFuncs(t)
	targets := makeTargets(t)
	figure := regexp.MustCompile(`\b\d[\d,.]*\s?(?:ns|µs|ms|q/s|MiB|GiB)\b|\b\d[\d.]*\s?×|\b(?:nano|micro|milli)seconds?\b|\b\d[\d,.]* queries (?:a|per) second`)
	cite := regexp.MustCompile("\\b((?:Benchmark|Test)[A-Z]\\w*)\\b|`?make (bench[\\w-]*|chaos)`?|hack/(bench[\\w-]*\\.sh|secondaries-bench\\.sh)")
	for file, text := range userDocs(t) {
		for _, sec := range sections(text) {
			secCites := cite.FindAllStringSubmatch(sec, -1)
			for _, p := range paragraphs(sec) {
				if strings.HasPrefix(p.text, "#") || !figure.MatchString(p.text) {
					continue
				}
				cites := cite.FindAllStringSubmatch(p.text, -1)
				if len(cites) == 0 && strings.HasPrefix(p.text, "|") {
					cites = secCites // a table row: its section says what prints it
				}
				if len(cites) == 0 {
					t.Errorf("%s: a performance figure without the benchmark that prints it: %q", file, p.text)
				}
			}
			for _, c := range secCites {
				switch {
				case strings.HasPrefix(c[1], "Benchmark") && !benchmarks[c[1]]:
					t.Errorf("%s: names %s, which is no benchmark of the repository", file, c[1])
				case strings.HasPrefix(c[1], "Test") && !tests[c[1]] && !benchmarks[c[1]]:
					t.Errorf("%s: names %s, which is no test of the repository", file, c[1])
				case c[2] != "" && !targets[c[2]]:
					t.Errorf("%s: names make %s, which the Makefile does not have", file, c[2])
				case c[3] != "":
					if _, err := os.Stat(filepath.Join("hack", c[3])); err != nil {
						t.Errorf("%s: names hack/%s: %v", file, c[3], err)
					}
				}
			}
		}
	}
}

// goFuncs returns the names of the Benchmark and Test functions of the
// repository's Go test files (build tags aside).
func goFuncs(t *testing.T) (benchmarks, tests map[string]bool) {
	t.Helper()
	benchmarks, tests = map[string]bool{}, map[string]bool{}
	fn := regexp.MustCompile(`(?m)^func ((?:Benchmark|Test)\w*)\(`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != ".":
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, "_test.go"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range fn.FindAllStringSubmatch(string(b), -1) {
				if strings.HasPrefix(m[1], "Benchmark") {
					benchmarks[m[1]] = true
				} else {
					tests[m[1]] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return benchmarks, tests
}

// makeTargets returns the targets of the Makefile.
func makeTargets(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][\w-]*):`).FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = true
	}
	return out
}
