//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docBlocks returns the fenced code blocks of a page of docs/ by language
// ("" for blocks without one).
func docBlocks(t *testing.T, page string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string][]string{}
	re := regexp.MustCompile("(?ms)^```([a-z ]*)\n(.*?)^```")
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		blocks[m[1]] = append(blocks[m[1]], m[2])
	}
	return blocks
}

// testDocs: the snippets of docs/guides/install-bare-metal.md are what the stage
// runs: the pools are valid MetalLB objects, the values install the chart,
// and the delegation records are those the chart's notes print.
func (bm *bareMetal) testDocs(t *testing.T) {
	blocks := docBlocks(t, "guides/install-bare-metal.md")
	var values string
	for _, y := range blocks["yaml values"] { // chart values (CONTRIBUTING: Docs and recipes)
		if strings.HasPrefix(y, "# values.yaml\n") {
			values = y
		}
	}
	for _, y := range blocks["yaml"] {
		if out, err := kubectlErr(y, "-n", bm.ns, "apply", "--dry-run=server", "-f", "-"); err != nil {
			t.Errorf("kubectl apply --dry-run=server of a snippet: %v\n%s\n%s", err, out, y)
		}
	}
	if values == "" {
		t.Fatal("no values.yaml snippet")
	}
	notes := chartHelmOut(t, "install", "k8s-gateway", chartDir, "--namespace", "k8s-gateway", "--dry-run=client", "-f", chartValuesFile(t, values))
	if !strings.Contains(notes, "metallb.universe.tf/address-pool: dns") {
		t.Errorf("the values snippet does not put the Service in the pool dns:\n%s", notes)
	}
	var want []string
	for _, rr := range notesDelegation(t, notes, "192.0.2.53") {
		f := strings.Fields(rr)
		want = append(want, strings.Join(slices.Delete(f, 1, 2), " ")) // without the TTL
	}
	var got []string
	for _, b := range blocks[""] {
		for _, line := range strings.Split(strings.TrimSpace(b), "\n") {
			got = append(got, strings.Join(strings.Fields(line), " "))
		}
	}
	if len(want) != 2 || !slices.Equal(got, want) {
		t.Errorf("the page's delegation records %q, the notes print %q", got, want)
	}
}
