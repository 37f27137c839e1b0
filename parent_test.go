package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coredns/caddy"
)

// TestParentParse: the parent option's address, key and ttl, the key
// checked by the one TSIG parser (internal/tsig) as the updates keys are.
func TestParentParse(t *testing.T) {
	dir := t.TempDir()
	good, short := filepath.Join(dir, "good.key"), filepath.Join(dir, "short.key")
	os.WriteFile(good, []byte("c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0\n"), 0o600)
	os.WriteFile(short, []byte("c2hvcnQ=\n"), 0o600)
	for _, tc := range []struct {
		line, err string
		addr      string
		ttl       uint32
	}{
		{"parent 192.0.2.1 key k8sgw. hmac-sha256 " + good, "", "192.0.2.1:53", 0},
		{"parent [2001:db8::1]:5353 key K8sGW hmac-sha512 " + good + " ttl 300", "", "[2001:db8::1]:5353", 300},
		{"parent ns.example.com key k8sgw. hmac-sha256 " + good, "not an IP address", "", 0},
		{"parent 192.0.2.1 key k8sgw. hmac-md5 " + good, "unsupported TSIG algorithm", "", 0},
		{"parent 192.0.2.1 key k8sgw. hmac-sha256 " + short, "at least 16 are needed", "", 0},
		{"parent 192.0.2.1 key k8sgw. hmac-sha256 " + filepath.Join(dir, "none"), "no such file", "", 0},
		{"parent 192.0.2.1 key k8sgw. hmac-sha256 " + good + " ttl 86401", "ttl must be an integer from 0 to 86400", "", 0},
		{"parent 192.0.2.1 k8sgw. hmac-sha256 " + good, "wrong number of arguments", "", 0},
	} {
		g, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n "+tc.line+"\n}"))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.line, err)
			continue
		}
		if p := g.parent; !p.on || p.parent.Addr != tc.addr || p.ttl != tc.ttl || p.parent.Key.Name != "k8sgw." {
			t.Errorf("%q: %+v, want address %s, ttl %d, key k8sgw.", tc.line, p, tc.addr, tc.ttl)
		}
	}
}
