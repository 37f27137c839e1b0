package acmeupdate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestOptions(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.key")
	bind := filepath.Join(dir, "bind.key")
	if err := os.WriteFile(plain, []byte(secretA+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bind, []byte("key \"b\" {\n\talgorithm hmac-sha512;\n\tsecret \""+secretB+"\";\n};\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		line string
		err  string
	}{
		{"key team-a hmac-sha256 " + plain + " team-a", ""},
		{"key team-b. HMAC-SHA512. " + bind + " team-b", ""},
		{"key team-a hmac-sha256 " + plain + " team-a", "given twice"},
		{"key x hmac-sha1 " + plain + " x", "unsupported TSIG algorithm"},
		{"key x hmac-sha256 " + filepath.Join(dir, "missing") + " x", "no such file"},
		{"key x hmac-sha256 " + plain, "want key NAME"},
		{"secrets", ""},
		{"secrets a b", ""},
		{"expire 2h", ""},
		{"expire 1s", "at least"},
		{"maxttl 120", ""},
		{"maxttl -1", "integer from 0"},
		{"rate 10", ""},
		{"fudge 0", "integer from 1"},
		{"frobnicate", "unknown updates property"},
	}
	o := NewOptions()
	for _, tc := range cases {
		f := strings.Fields(tc.line)
		err := o.Set(f[0], f[1:])
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: error %v, want %q", tc.line, err, tc.err)
		}
	}
	if len(o.Keys) != 2 || o.Keys[0].Name != "team-a." || o.Keys[1].Algorithm != "hmac-sha512." || o.Keys[1].Secret != secretB {
		t.Fatalf("keys %+v", o.Keys)
	}
	if !o.Secrets || !slices.Equal(o.SecretsNamespaces, []string{"a", "b"}) || o.Expire != 2*time.Hour || o.Limits.MaxTTL != 120 || o.RatePerMinute != 10 {
		t.Fatalf("options %+v", o)
	}
	if got := o.Namespaces(); !slices.Equal(got, []string{"team-a", "team-b", "a", "b"}) {
		t.Fatalf("namespaces %q", got)
	}
	if err := NewOptions().Check(); err == nil {
		t.Fatal("no keys accepted")
	}
}

// TestTenantSecretsOption: tenant_secrets NAMESPACE [TENANTS...]: which
// Secrets are watched, where challenges are written, and the conflicts.
func TestTenantSecretsOption(t *testing.T) {
	cases := []struct {
		lines      []string
		err        string
		watched    []string
		namespaces []string
	}{
		{lines: []string{"tenant_secrets platform"}, watched: []string{"platform"}, namespaces: []string{""}},
		{lines: []string{"tenant_secrets platform team-a team-b"}, watched: []string{"platform"}, namespaces: []string{"team-a", "team-b"}},
		{lines: []string{"secrets team-c", "tenant_secrets platform team-a"}, watched: []string{"team-c", "platform"}, namespaces: []string{"team-c", "team-a"}},
		{lines: []string{"secrets", "tenant_secrets platform team-a"}, watched: []string{""}, namespaces: []string{""}},
		{lines: []string{"tenant_secrets"}, err: "want tenant_secrets NAMESPACE"},
		{lines: []string{"tenant_secrets a", "tenant_secrets b"}, err: "given twice"},
		{lines: []string{"tenant_secrets Platform"}, err: "not a namespace name"},
		{lines: []string{"secrets platform", "tenant_secrets platform"}, err: "give it to one"},
	}
	for _, c := range cases {
		o := NewOptions()
		o.Listen = "127.0.0.1:0"
		var err error
		for _, line := range c.lines {
			f := strings.Fields(line)
			if err = o.Set(f[0], f[1:]); err != nil {
				break
			}
		}
		if err == nil {
			err = o.Check()
		}
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.lines, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.lines, err)
			continue
		}
		watched, st := o.secretsWatched()
		if !slices.Equal(watched, c.watched) || st.shared != "platform" {
			t.Errorf("%q: Secrets watched in %q (shared %q), want %q", c.lines, watched, st.shared, c.watched)
		}
		if got := o.Namespaces(); !slices.Equal(got, c.namespaces) {
			t.Errorf("%q: challenges in %q, want %q", c.lines, got, c.namespaces)
		}
	}
}
