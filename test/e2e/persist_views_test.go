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

// TestPersistViewsRefused: two views of one zone with one persist directory
// would overwrite each other's copy; CoreDNS refuses the Corefile, naming
// both lines, and does not start.
func TestPersistViewsRefused(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	block := func(view, cidr string) string {
		return fmt.Sprintf(`example.com:%d {
    bind 127.0.0.1
    view %s {
        expr incidr(client_ip(), '%s')
    }
    k8s_gateway example.com {
        kubeconfig %s
        persist %s
    }
}
`, port, view, cidr, kubeconfig, dir)
	}
	corefile := filepath.Join(t.TempDir(), "Corefile")
	if err := os.WriteFile(corefile, []byte(block("internal", "127.0.0.2/32")+block("external", "0.0.0.0/0")), 0o600); err != nil {
		t.Fatal(err)
	}
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
		t.Fatalf("coredns started with two views sharing one persist directory:\n%s", out.String())
	}
	for _, want := range []string{"Corefile:18", "persist", "line 8", "example.com.", "a directory of its own"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output does not say %q:\n%s", want, out.String())
		}
	}
}
