package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coredns/caddy"
)

// TestKubeconfigUnusable: a kubeconfig file that client-go would reject later
// without naming it ("no configuration has been provided, try setting
// KUBERNETES_MASTER ...") is rejected when the Corefile is read, with the
// file, the Corefile line and the cluster block named, in a cluster block as
// in the k8s_gateway block.
func TestKubeconfigUnusable(t *testing.T) {
	const contexts = `apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster: {server: "https://192.0.2.1:6443"}
users:
- name: u
  user: {token: secret}
contexts:
- name: one
  context: {cluster: c1, user: u}
`
	files := []struct {
		name, data, context string
		want                string
	}{
		{name: "empty", data: "", want: "is empty"},
		{name: "blank lines and a comment", data: "\n# nothing here\n\n", want: "is empty"},
		{name: "only the header", data: "apiVersion: v1\nkind: Config\n", want: "is empty"},
		{name: "no current-context", data: contexts, want: "has no current-context"},
		{name: "a current-context that is not there", data: contexts + "current-context: gone\n", want: `current-context "gone" not found in`},
	}
	dir := t.TempDir()
	for _, f := range files {
		path := filepath.Join(dir, strings.ReplaceAll(f.name, " ", "-"))
		if err := os.WriteFile(path, []byte(f.data), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, block := range []struct {
			name, corefile string
			want           []string
		}{
			{"cluster block", "k8s_gateway example.com {\n cluster prod {\n  kubeconfig " + path + "\n }\n}", []string{"Testfile:3", "cluster prod", "kubeconfig"}},
			{"one-line cluster block", "k8s_gateway example.com {\n cluster a\n cluster prod { kubeconfig " + path + " }\n}", []string{"Testfile:3", "cluster prod", "kubeconfig"}},
			{"k8s_gateway block", "k8s_gateway example.com {\n ttl 30\n kubeconfig " + path + "\n}", []string{"Testfile:3", "kubeconfig"}},
		} {
			t.Run(f.name+"/"+block.name, func(t *testing.T) {
				err := setup(caddy.NewTestController("dns", block.corefile))
				if err == nil {
					t.Fatal("setup succeeded, want an error")
				}
				for _, s := range append(block.want, path, f.want) {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				if strings.Contains(err.Error(), "KUBERNETES_MASTER") {
					t.Errorf("error %q points at KUBERNETES_MASTER, which the plugin does not read", err)
				}
			})
		}
	}

	// The same file with a context named in the Corefile, or with a
	// current-context, is accepted.
	path := filepath.Join(dir, "usable")
	if err := os.WriteFile(path, []byte(contexts), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n cluster prod { kubeconfig "+path+" one }\n}")); err != nil {
		t.Errorf("with the context named: %v", err)
	}
	if err := os.WriteFile(path, []byte(contexts+"current-context: one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n cluster prod { kubeconfig "+path+" }\n}")); err != nil {
		t.Errorf("with a current-context: %v", err)
	}
}
