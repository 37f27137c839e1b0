package tsig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const secret16 = "MDEyMzQ1Njc4OWFiY2RlZg==" // 16 bytes

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name, alg, secret string
		want              Key
		err               string
	}{
		{"K8sGW", "HMAC-SHA256", " " + secret16 + "\n", Key{"k8sgw.", "hmac-sha256.", secret16}, ""},
		{"a.b.", "hmac-sha512.", secret16, Key{"a.b.", "hmac-sha512.", secret16}, ""},
		{"k.", "hmac-sha384", secret16, Key{"k.", "hmac-sha384.", secret16}, ""},
		{"\xffK.", "hmac-sha256", secret16, Key{"\xffk.", "hmac-sha256.", secret16}, ""}, // bytes kept, ASCII folded
		{".", "hmac-sha256", secret16, Key{}, `invalid key name "."`},
		{"a..b", "hmac-sha256", secret16, Key{}, `invalid key name "a..b"`},
		{"k.", "hmac-md5", secret16, Key{}, `unsupported TSIG algorithm "hmac-md5"`},
		{"k.", "hmac-sha1", secret16, Key{}, `unsupported TSIG algorithm "hmac-sha1"`},
		{"k.", "hmac-sha256", "not base64!", Key{}, "key k.: the secret is not base64"},
		{"k.", "hmac-sha256", "c2hvcnQ=", Key{}, "key k.: the secret has 5 bytes; at least 16 are needed"},
	} {
		got, err := New(tc.name, tc.alg, tc.secret)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("New(%q, %q, %q) = %v, %v; want error %q", tc.name, tc.alg, tc.secret, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("New(%q, %q, %q) = %+v, %v; want %+v", tc.name, tc.alg, tc.secret, got, err, tc.want)
		}
	}
}

func TestReadSecretFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		content, want, err string
	}{
		{secret16 + "\n", secret16, ""},
		{"key \"k8sgw\" {\n\talgorithm hmac-sha256;\n\tsecret \"" + secret16 + "\";\n};\n", secret16, ""},
		{"", "", "neither a base64 secret nor a BIND key file"},
		{"key k { algorithm hmac-sha256; };", "", "neither a base64 secret nor a BIND key file"},
	} {
		path := filepath.Join(dir, "key")
		if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadSecretFile(path)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ReadSecretFile(%q) = %q, %v; want error %q", tc.content, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ReadSecretFile(%q) = %q, %v; want %q", tc.content, got, err, tc.want)
		}
	}
	if _, err := ReadSecretFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file read")
	}
}
