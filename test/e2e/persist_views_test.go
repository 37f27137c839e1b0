//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// twoViews returns a Corefile of two views of example.com on one port, the
// internal one (127.0.0.2) first; the k8s_gateway block of each holds
// options (one a line, indented), each view's own when a %s is in it.
func twoViews(t *testing.T, options string) string {
	t.Helper()
	port := freePort(t)
	block := func(view, cidr string) string {
		return fmt.Sprintf(`example.com:%d {
    bind 127.0.0.1
    view %s {
        expr incidr(client_ip(), '%s')
    }
    k8s_gateway example.com {
        kubeconfig %s
%s
    }
}
`, port, view, cidr, kubeconfig, strings.ReplaceAll(options, "%s", view))
	}
	corefile := filepath.Join(t.TempDir(), "Corefile")
	if err := os.WriteFile(corefile, []byte(block("internal", "127.0.0.2/32")+block("external", "0.0.0.0/0")), 0o600); err != nil {
		t.Fatal(err)
	}
	return corefile
}

// refused runs coredns with corefile, which it must refuse without
// starting, and returns what it said.
func refused(t *testing.T, corefile string) string {
	t.Helper()
	cmd := exec.Command(corednsBin, "-conf", corefile)
	done := make(chan error, 1)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("coredns exited without an error:\n%s", out.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("coredns started with a Corefile it must refuse:\n%s", out.String())
	}
	return out.String()
}

// saysAll checks that out holds every one of want.
func saysAll(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output does not say %q:\n%s", w, out)
		}
	}
}

// TestPersistViewsRefused: two views of one zone with one persist directory
// would overwrite each other's copy; CoreDNS refuses the Corefile, naming
// both lines, and does not start.
func TestPersistViewsRefused(t *testing.T) {
	cf := twoViews(t, "        persist "+t.TempDir())
	saysAll(t, refused(t, cf), cf+":18 - Error during parsing: persist", "by the block of "+cf+":8", "example.com.", "a directory of its own")
}

// TestParentViewsRefused: the parent option in two views of one zone
// would make the parent's glue flip between the views' addresses; CoreDNS
// refuses the Corefile, naming both lines, and does not start.
func TestParentViewsRefused(t *testing.T) {
	key := filepath.Join(t.TempDir(), "k8sgw.key")
	writeFile(t, key, tsigSecret(t)+"\n")
	cf := twoViews(t, "        parent 127.0.0.1:53 key k8sgw. hmac-sha256 "+key)
	saysAll(t, refused(t, cf), cf+":18 - Error during parsing: parent", "delegation of zone example.com.", "by the block of "+cf+":8",
		"keep parent in the one block whose nameserver addresses the parent is to give")
}

// TestUpdatesListenRefused: the updates option of two blocks on one listen
// address would have the second block's service answer the first's
// messages; CoreDNS refuses the Corefile, naming both lines.
func TestUpdatesListenRefused(t *testing.T) {
	key := filepath.Join(t.TempDir(), "acme.key")
	writeFile(t, key, tsigSecret(t)+"\n")
	port := freePort(t)
	cf := twoViews(t, fmt.Sprintf("        updates {\n            listen 127.0.0.1:%d\n            key %%s.example. hmac-sha256 %s acme\n        }", port, key))
	saysAll(t, refused(t, cf), cf+":21 - Error during parsing: updates", fmt.Sprintf("127.0.0.1:%d", port), "by the block of "+cf+":8",
		"give each block an address of its own")
}
