//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The table of differences in docs/guides/migrating-from-k8s-gateway.md, between
// these markers, is what TestForkDifferential sees: its rows, in order, and
// their first four columns exactly; the fifth, why, is written by hand and
// must not be empty.
const (
	forkTableDoc   = "docs/guides/migrating-from-k8s-gateway.md"
	forkTableBegin = "<!-- fork-differences: TestForkDifferential (test/e2e/fork_test.go) checks this table -->"
	forkTableEnd   = "<!-- end of fork-differences -->"
	forkTableHead  = "| Case | Setups | The fork | This plugin | Why |\n|---|---|---|---|---|"
)

// forkTableRow is a row of the table: the cells of a difference and why.
func forkTableRow(d *forkDiff, why string) string {
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	return "| " + strings.Join([]string{cell(d.Case), cell(strings.Join(d.Setups, ", ")), cell(d.Fork), cell(d.Ours), why}, " | ") + " |"
}

// checkForkTable compares the page's table with the differences seen, and
// prints the table to paste when they disagree (the why of rows that stay
// is kept; new rows say TODO).
func checkForkTable(t *testing.T, diffs []*forkDiff) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(repoRoot, forkTableDoc))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(text), forkTableBegin)
	table, _, ok2 := strings.Cut(rest, forkTableEnd)
	if !ok || !ok2 {
		t.Fatalf("%s has no table between %q and %q", forkTableDoc, forkTableBegin, forkTableEnd)
	}
	table = strings.TrimSpace(table)
	body, found := strings.CutPrefix(table, forkTableHead)
	if !found {
		t.Fatalf("%s: the table must start with\n%s", forkTableDoc, forkTableHead)
	}
	// The documented rows: the first four cells, and why.
	whys := map[string]string{}
	var documented []string
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		i := strings.LastIndex(strings.TrimSuffix(line, " |"), " | ")
		if i < 0 {
			t.Fatalf("%s: not a row of five cells: %s", forkTableDoc, line)
		}
		key, why := line[:i], strings.TrimSpace(strings.TrimSuffix(line[i+3:], "|"))
		documented = append(documented, key)
		whys[key] = why
		if why == "" || why == "TODO" {
			t.Errorf("%s: a difference without a why: %s", forkTableDoc, key)
		}
	}
	var seen, want []string
	for _, d := range diffs {
		row := forkTableRow(d, "")
		key := strings.TrimSuffix(row, " |  |")
		seen = append(seen, key)
		why := whys[key]
		if why == "" {
			why = "TODO"
		}
		want = append(want, forkTableRow(d, why))
	}
	if strings.Join(seen, "\n") == strings.Join(documented, "\n") {
		return
	}
	for _, k := range seen {
		if _, ok := whys[k]; !ok {
			t.Errorf("a difference the page does not explain: %s", k)
		}
	}
	for _, k := range documented {
		found := false
		for _, s := range seen {
			found = found || s == k
		}
		if !found {
			t.Errorf("a row of the page that the test no longer sees: %s", k)
		}
	}
	t.Errorf("%s: the table of differences is not what the test sees (or not in its order); the table to paste:\n%s\n%s\n%s\n%s",
		forkTableDoc, forkTableBegin, forkTableHead, strings.Join(want, "\n"), forkTableEnd)
}
