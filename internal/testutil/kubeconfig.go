package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// Kubeconfig writes a kubeconfig with the contexts one and two (pointing at
// https://192.0.2.1:6443 and https://192.0.2.2:6443, one the current) into
// the test's temporary directory, and returns its path. No test contacts
// those servers.
func Kubeconfig(t testing.TB) string {
	t.Helper()
	const cfg = `apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster:
    server: https://192.0.2.1:6443
- name: c2
  cluster:
    server: https://192.0.2.2:6443
users:
- name: u
  user:
    token: secret
contexts:
- name: one
  context: {cluster: c1, user: u}
- name: two
  context: {cluster: c2, user: u}
current-context: one
`
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
