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

// TestParentZoneFits: a zone whose registry in the parent, or one of whose
// nameservers' records there, would be longer than DNS allows is refused
// at the parent line: the delegation could never be written. A reverse or
// nested zone is not the parent option's, and not refused.
func TestParentZoneFits(t *testing.T) {
	key := filepath.Join(t.TempDir(), "k.key")
	os.WriteFile(key, []byte("c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0\n"), 0o600)
	long := strings.Repeat("a.", 110) + "example.com" // 231 octets: served, but its registry's name would be 256
	parent := "\n parent 192.0.2.1 key k8sgw. hmac-sha256 " + key + "\n}"
	for _, tc := range []struct{ block, err string }{
		{"k8s_gateway example.com {\n apex dns1.kube-system" + parent, ""},
		{"k8s_gateway " + long + " {\n apex ns.example.net." + parent, "Testfile:3 - Error during parsing: parent: zone " + long + ".: the name of its registry"},
		{"k8s_gateway example.com {\n apex " + strings.Repeat("n.", 115) + "example.com." + parent, "Testfile:3 - Error during parsing: parent: zone example.com.: its record example.com. NS in the registry"},
		{"k8s_gateway example.com " + long + " 2.0.192.in-addr.arpa {\n apex ns.example.net." + parent, ""}, // nested
	} {
		_, err := parse(caddy.NewTestController("dns", tc.block))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.block, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.block, err, tc.err)
		}
	}
}
