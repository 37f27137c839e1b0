package harness

import (
	"os/exec"
	"strings"
	"testing"
)

// Kubectl runs the kubectl binary bin against kubeconfig with args, and
// stdin when not empty; it returns what kubectl printed, stdout and stderr.
func Kubectl(bin, kubeconfig, stdin string, args ...string) (string, error) {
	cmd := exec.Command(bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// MustKubectl is Kubectl that fails the test when kubectl fails.
func MustKubectl(t testing.TB, bin, kubeconfig, stdin string, args ...string) string {
	t.Helper()
	out, err := Kubectl(bin, kubeconfig, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}
