package gateway

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/caddy/caddyfile"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestOptionConflictsRefused: each pair of optionConflicts refuses a block
// that sets both, at the line of the one, naming the line of the other;
// every row has its case here.
func TestOptionConflictsRefused(t *testing.T) {
	kc := testutil.Kubeconfig(t)
	cases := map[string]struct {
		corefile   string
		line, also int // of the option and of the other
	}{
		"cluster_zones clusterapi": {"k8s_gateway example.com {\n kubeconfig " + kc + "\n clusterapi\n cluster_zones\n}", 4, 3},
		"cluster_zones cds":        {"k8s_gateway example.com {\n cds\n cluster_zones\n cluster a {\n  kubeconfig " + kc + "\n  subdomain\n }\n}", 3, 2},
		"kubeconfig cluster":       {"k8s_gateway example.com {\n cluster a {\n  kubeconfig " + kc + "\n }\n kubeconfig " + kc + "\n}", 5, 2},
	}
	for _, p := range optionConflicts {
		name := p.option + " " + p.other
		t.Run(name, func(t *testing.T) {
			tc, ok := cases[name]
			if !ok {
				t.Fatalf("no case for the pair %s", name)
			}
			parseCase(t, caddy.NewTestController("dns", tc.corefile), []string{
				fmt.Sprintf("Testfile:%d - Error during parsing: %s", tc.line, p.why),
				fmt.Sprintf("(with %s at Testfile:%d)", p.other, tc.also),
			})
		})
	}
}

// TestCorefileClaimsRefused: each row of corefileClaims refuses a second
// block of one Corefile (two views of a zone) that claims what the first
// holds, at the second's line, naming the first's; a claim of something
// else is fine; every row has its case here.
func TestCorefileClaimsRefused(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(t.TempDir(), "k8sgw.key")
	if err := os.WriteFile(key, []byte("c2VjcmV0LW9mLXRlYW0tYS0zMi1ieXRlcy1sb25nISE=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	parent := " parent 192.0.2.1 key k8sgw. hmac-sha256 " + key + "\n"
	updates := func(addr string) string {
		return " updates {\n  listen " + addr + "\n  key k. hmac-sha256 " + key + " team\n }\n"
	}
	cases := map[string]struct {
		first, second, other string // the blocks' options; other: a second block that claims something else
		line, also           int
		said                 string
	}{
		"persist": {first: " persist " + dir + "\n", second: " ttl 30\n persist " + dir + "/.\n", other: " persist " + t.TempDir() + "\n",
			line: 3, also: 2, said: "persist: the copy of zone example.com. is kept in " + filepath.Join(dir, "example.com.zone")},
		"parent": {first: parent, second: " ttl 30\n" + parent, other: "",
			line: 3, also: 2, said: "parent: the delegation of zone example.com. is kept in its parent"},
		// Another ownership: the second block's service would decide for both.
		"updates": {first: updates("127.0.0.1:5399"), second: " ownership first\n" + updates("127.0.0.1:5399"), other: updates("127.0.0.1:5398"),
			line: 3, also: 2, said: "updates: UPDATE messages are read on 127.0.0.1:5399"},
	}
	for _, row := range corefileClaims {
		t.Run(row.option, func(t *testing.T) {
			tc, ok := cases[row.option]
			if !ok {
				t.Fatalf("no case for the claim of %s", row.option)
			}
			block := func(opts string) string { return "k8s_gateway example.com {\n" + opts + "}" }
			c := caddy.NewTestController("dns", block(tc.first))
			parseCase(t, c, nil)
			c.Dispenser = caddyfile.NewDispenser("Testfile", strings.NewReader(block(tc.second)))
			parseCase(t, c, []string{
				fmt.Sprintf("Testfile:%d - Error during parsing: %s", tc.line, tc.said),
				fmt.Sprintf("by the block of Testfile:%d already: %s", tc.also, row.why),
			})
			c.Dispenser = caddyfile.NewDispenser("Testfile", strings.NewReader(block(tc.other)))
			parseCase(t, c, nil)
			// A reload is another instance: the first block again is fine.
			parseCase(t, caddy.NewTestController("dns", block(tc.first)), nil)
		})
	}
}

// TestUpdatesSharedAddress: blocks of the same zones (views of one zone)
// whose updates are alike may read one address, as the chart renders them:
// one service answers as the other would. Any difference is refused.
func TestUpdatesSharedAddress(t *testing.T) {
	key := filepath.Join(t.TempDir(), "k8sgw.key")
	if err := os.WriteFile(key, []byte("c2VjcmV0LW9mLXRlYW0tYS0zMi1ieXRlcy1sb25nISE=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	updates := func(rate string) string {
		return " updates {\n  listen 127.0.0.1:5399\n  key k. hmac-sha256 " + key + " team\n  rate " + rate + "\n }\n"
	}
	first := "k8s_gateway example.com {\n exclude 10.0.0.0/8\n" + updates("30") + "}"
	for _, tc := range []struct{ name, second, err string }{
		{"alike, another view", "k8s_gateway example.com {\n include 10.0.0.0/8\n" + updates("30") + "}", ""},
		{"another rate", "k8s_gateway example.com {\n include 10.0.0.0/8\n" + updates("31") + "}", "Testfile:3 - Error during parsing: updates: UPDATE messages are read on 127.0.0.1:5399 by the block of Testfile:3 already"},
		{"another zone", "k8s_gateway example.org {\n" + updates("30") + "}", "Testfile:2 - Error during parsing: updates"},
		{"another policy", "k8s_gateway example.com {\n ownership delegated\n" + updates("30") + "}", "Testfile:3 - Error during parsing: updates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := caddy.NewTestController("dns", first)
			parseCase(t, c, nil)
			c.Dispenser = caddyfile.NewDispenser("Testfile", strings.NewReader(tc.second))
			var want []string
			if tc.err != "" {
				want = []string{tc.err}
			}
			parseCase(t, c, want)
		})
	}
}
