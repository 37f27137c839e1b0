//go:build e2e

package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// pluginCfgMarker precedes CONTRIBUTING.md's code block of plugin.cfg steps.
const pluginCfgMarker = "<!-- plugin.cfg steps:"

// TestPluginCfg builds CoreDNS of the version in go.mod from its own source
// with CONTRIBUTING.md's plugin.cfg steps, run as they stand, and checks that the
// result lists the plugin and answers from the real API server.
func TestPluginCfg(t *testing.T) {
	steps := docBlock(t, "CONTRIBUTING.md", pluginCfgMarker)

	version := strings.TrimSpace(goOutput(t, repoRoot, "list", "-m", "-f", "{{.Version}}", "github.com/coredns/coredns"))
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal([]byte(goOutput(t, repoRoot, "mod", "download", "-json", "github.com/coredns/coredns@"+version)), &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download github.com/coredns/coredns@%s: %v %s", version, err, mod.Error)
	}

	// A fixed directory per checkout: CoreDNS's Makefile builds without
	// -trimpath, so the Go build cache is reused only under the same path.
	sum := sha256.Sum256([]byte(repoRoot))
	work := filepath.Join(harness.CacheDir(), "plugincfg-"+hex.EncodeToString(sum[:4]))
	src := filepath.Join(work, "coredns")
	if err := os.RemoveAll(src); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(src) })
	runIn(t, work, "cp", "-R", mod.Dir, src)
	runIn(t, work, "chmod", "-R", "u+w", src)
	link := filepath.Join(work, "k8s_gateway")
	os.Remove(link)
	if err := os.Symlink(repoRoot, link); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", steps)
	cmd.Dir = work
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("README plugin.cfg steps failed: %v\n%s\n%s", err, steps, tail(string(out), 60))
	}
	t.Logf("CoreDNS %s with plugin.cfg built in %s", version, time.Since(start).Round(time.Second))

	bin := filepath.Join(src, "coredns")
	plugins := strings.Fields(string(runOutput(t, work, bin, "-plugins")))
	if !slices.Contains(plugins, "k8s_gateway") || !slices.Contains(plugins, "kubernetes") {
		t.Fatalf("coredns -plugins does not list k8s_gateway and kubernetes: %v", plugins)
	}

	s := startServerBinary(t, bin, "test/e2e/testdata/Corefile", kubeconfig)
	ns := namespace(t)
	kubectl(t, fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: %s}
spec:
  rules: [{host: app.%[1]s.example.com}]
`, ns), "apply", "-f", "-")
	setLBStatus(t, ns, "ingress", "web", "192.0.2.30")
	app := "app." + ns + ".example.com."
	s.eventually(t, 10*time.Second, app, dns.TypeA, positive(app+" 30 IN A 192.0.2.30"))
	s.eventually(t, time.Second, "none."+ns+".example.com.", dns.TypeA, nxdomain)
}

// docBlock returns the first indented code block after the line of the
// file (relative to the repository) that starts with marker, unindented.
func docBlock(t *testing.T, file, marker string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n"+marker)
	if !ok {
		t.Fatalf("%s has no line starting with %q", file, marker)
	}
	var block []string
	for _, line := range strings.Split(rest, "\n")[1:] {
		switch {
		case strings.HasPrefix(line, "    "):
			block = append(block, strings.TrimPrefix(line, "    "))
		case strings.TrimSpace(line) == "" && len(block) == 0:
		default:
			if len(block) == 0 {
				t.Fatalf("%s: no code block after %q", file, marker)
			}
			return strings.Join(block, "\n") + "\n"
		}
	}
	return strings.Join(block, "\n") + "\n"
}

func goOutput(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return string(runOutput(t, dir, "go", args...))
}

func runOutput(t *testing.T, dir, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func runIn(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
