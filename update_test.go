package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coredns/caddy"
)

func TestParseUpdates(t *testing.T) {
	key := filepath.Join(t.TempDir(), "a.key")
	if err := os.WriteFile(key, []byte("c2VjcmV0LW9mLXRlYW0tYS0zMi1ieXRlcy1sb25nISE=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		block, err string
	}{
		{"updates {\n key team-a. hmac-sha256 " + key + " team-a\n secrets\n expire 2h\n }", ""},
		{"updates {\n secrets team-a\n}", ""},
		{"updates {\n}", "no key"},
		{"updates", "want updates {"},
		{"updates {\n key team-a. hmac-md5 " + key + " team-a\n}", "unsupported TSIG algorithm"},
		{"updates {\n secrets\n}\nupdates {\n secrets\n}", "given twice"},
		{"updates {\n secrets\n rate\n}", "rate"},
	}
	for _, tc := range cases {
		c := caddy.NewTestController("dns", "k8s_gateway example.com {\n"+tc.block+"\n}")
		g, err := parse(c)
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: error %v, want %q", tc.block, err, tc.err)
			continue
		}
		if err == nil && g.updateOpts == nil {
			t.Errorf("%q: no options", tc.block)
		}
	}
}
