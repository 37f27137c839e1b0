package gateway

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// testFunctions returns the names of the test functions of the root and of
// the end-to-end suite.
func testFunctions(t *testing.T) map[string]bool {
	t.Helper()
	def := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	out := map[string]bool{}
	for _, pattern := range []string{"*_test.go", "test/e2e/*_test.go"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range def.FindAllStringSubmatch(string(b), -1) {
				out[m[1]] = true
			}
		}
	}
	if len(out) < 100 {
		t.Fatalf("only %d test functions found", len(out))
	}
	return out
}

// TestCombinationsTable: docs/reference/combinations.md and the code agree. Each row
// names one test, of its own, which exists (a subtest of the refusals'
// tests names a pair the code refuses); the message of a refused row is a
// reason the code gives (optionConflicts, corefileClaims); and every pair
// the code refuses has its row.
func TestCombinationsTable(t *testing.T) {
	b, err := os.ReadFile("docs/reference/combinations.md")
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]bool{}
	subtests := map[string]bool{}
	for _, p := range optionConflicts {
		reasons[p.why] = true
		subtests["TestOptionConflictsRefused/"+p.option+"_"+p.other] = true
	}
	for _, c := range corefileClaims {
		reasons[c.why] = true
	}
	tests := testFunctions(t)
	named := map[string]string{} // test → the row naming it
	said := map[string]bool{}    // the reasons the refused rows quote
	rows := 0
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 6 || !strings.HasPrefix(line, "| `") {
			continue
		}
		rows++
		pair, verdict, what, test := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2]), cells[3], spans(cells[4])
		if len(test) != 1 {
			t.Errorf("%s: names %d tests, want one: %q", pair, len(test), test)
			continue
		}
		if other, ok := named[test[0]]; ok {
			t.Errorf("%s: its test %s is the row %s's too: one test per row", pair, test[0], other)
		}
		named[test[0]] = pair
		fn, sub, isSub := strings.Cut(test[0], "/")
		switch {
		case !tests[fn]:
			t.Errorf("%s: no test function %s", pair, fn)
		case isSub && !subtests[test[0]]:
			t.Errorf("%s: %s/%s is no pair the code refuses", pair, fn, sub)
		}
		switch verdict {
		case "works together":
		case "refused":
			quoted := slices.DeleteFunc(spans(what), func(s string) bool { return !reasons[s] })
			if len(quoted) != 1 {
				t.Errorf("%s: refused, but quotes %d of the code's reasons: %q", pair, len(quoted), spans(what))
			}
			for _, q := range quoted {
				said[q] = true
			}
		default:
			t.Errorf("%s: verdict %q, want works together or refused", pair, verdict)
		}
	}
	if rows < 10 {
		t.Fatalf("only %d rows in docs/reference/combinations.md", rows)
	}
	for r := range reasons {
		if !said[r] {
			t.Errorf("the code refuses with %q, which no row of docs/reference/combinations.md quotes", r)
		}
	}
	for s := range subtests {
		if _, ok := named[s]; !ok {
			t.Errorf("the refused pair of %s has no row in docs/reference/combinations.md", s)
		}
	}
}
