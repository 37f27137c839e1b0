//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// The controllers of the bare-metal stage, built by hack/baremetal.sh from
// the module proxy and cached: MetalLB's controller (no speaker: nothing is
// announced, the addresses are documentation addresses and one loopback
// address the test listens on) and Traefik's Kubernetes providers.

// lbClass is the spec.loadBalancerClass of the stage's Services: MetalLB
// (--lb-class) handles only them, and leaves alone the LoadBalancer Services
// of the other tests, whose status those tests write.
const lbClass = "k8sgw.test/metallb"

var bareMetalTools struct {
	once sync.Once
	bin  string
	err  error
}

// bareMetalBin builds the tools on first use and returns their directory.
func bareMetalBin(t *testing.T) string {
	t.Helper()
	bareMetalTools.once.Do(func() {
		start := time.Now()
		cmd := exec.Command(filepath.Join(repoRoot, "hack/baremetal.sh"), "build")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			bareMetalTools.err = fmt.Errorf("hack/baremetal.sh build: %v\n%s", err, out)
			return
		}
		out, err := exec.Command(filepath.Join(repoRoot, "hack/baremetal.sh"), "path").Output()
		bareMetalTools.bin, bareMetalTools.err = strings.TrimSpace(string(out)), err
		if d := time.Since(start); d > 5*time.Second {
			fmt.Fprintf(os.Stderr, "hack/baremetal.sh built MetalLB and Traefik in %s\n", d.Round(time.Second))
		}
	})
	if bareMetalTools.err != nil {
		t.Fatal(bareMetalTools.err)
	}
	return bareMetalTools.bin
}

// controller is a controller process of the stage, restartable.
type controller struct {
	name string
	cmd  func() *exec.Cmd
	mu   sync.Mutex
	proc *harness.Process
	logs []string // the output of the runs before this one
}

func startController(t *testing.T, name string, cmd func() *exec.Cmd) *controller {
	t.Helper()
	c := &controller{name: name, cmd: cmd}
	t.Cleanup(func() {
		c.stop()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, c.output())
		}
	})
	c.start(t)
	return c
}

// start runs the controller (again); t is the test that asks.
func (c *controller) start(t *testing.T) {
	t.Helper()
	cmd := c.cmd()
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	proc, err := harness.Start(cmd)
	if err != nil {
		t.Fatalf("starting %s: %v", c.name, err)
	}
	c.mu.Lock()
	c.proc = proc
	c.mu.Unlock()
}

func (c *controller) stop() {
	c.mu.Lock()
	proc := c.proc
	c.proc = nil
	c.mu.Unlock()
	if proc != nil {
		proc.Stop(10 * time.Second)
		c.mu.Lock()
		c.logs = append(c.logs, proc.Out.String())
		c.mu.Unlock()
	}
}

func (c *controller) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := strings.Join(c.logs, "\n--- restarted ---\n")
	if c.proc != nil {
		out += c.proc.Out.String()
	}
	return out
}

// startMetalLB installs MetalLB's CRDs, the pools (YAML, in ns) and runs its
// controller for the Services of lbClass, with ns as its namespace.
func startMetalLB(t *testing.T, ns, pools string) *controller {
	t.Helper()
	bin := bareMetalBin(t)
	files, _ := filepath.Glob(filepath.Join(bin, "metallb-crds", "*.yaml"))
	crds := []string{"ipaddresspools.metallb.io", "l2advertisements.metallb.io", "bgpadvertisements.metallb.io",
		"bgppeers.metallb.io", "bfdprofiles.metallb.io", "communities.metallb.io",
		"configurationstates.metallb.io", "servicel2statuses.metallb.io", "servicebgpstatuses.metallb.io"}
	chartEnsureCRDs(t, crds, false, files...)
	chartKubectlRetrying(t, pools, "-n", ns, "apply", "-f", "-")
	// The controller reads its own Pod (the owner of the objects it
	// creates): one that no node runs stands for it.
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"metallb-controller"},
"spec":{"automountServiceAccountToken":false,"containers":[{"name":"controller","image":"quay.io/metallb/controller:v0.16.2"}]}}`
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := kubectlErr(pod, "-n", ns, "apply", "-f", "-")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("creating MetalLB's Pod object: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond) // the namespace's default ServiceAccount comes a moment later
	}
	health := freePort(t)
	return startController(t, "metallb-controller", func() *exec.Cmd {
		return exec.Command(filepath.Join(bin, "metallb-controller"),
			"--namespace="+ns, "--pod-name=metallb-controller", "--webhook-mode=disabled", "--lb-class="+lbClass,
			"--port=0", fmt.Sprintf("--health-probe-port=%d", health), "--log-level=info")
	})
}

// startTraefik runs Traefik's providers (hack/traefik) with args.
func startTraefik(t *testing.T, name string, args ...string) *controller {
	t.Helper()
	bin := bareMetalBin(t)
	return startController(t, name, func() *exec.Cmd {
		return exec.Command(filepath.Join(bin, "traefik"), args...)
	})
}

// lbAddresses returns the addresses in a Service's status.loadBalancer.
func lbAddresses(t *testing.T, ns, svc string) string {
	t.Helper()
	out, _ := kubectlErr("", "-n", ns, "get", "service", svc, "-o", "jsonpath={.status.loadBalancer.ingress[*].ip}")
	return strings.TrimSpace(out)
}

// waitLB waits until MetalLB gave the Service an address and returns it.
func waitLB(t *testing.T, ns, svc string, m *controller) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if a := lbAddresses(t, ns, svc); a != "" {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("MetalLB gave Service %s/%s no address:\n%s", ns, svc, m.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ensureTraefikCRDs installs the standard Gateway API CRDs that Traefik's
// provider watches beside those of chartEnsureGatewayAPI: it waits for
// every informer it starts.
func ensureTraefikCRDs(t *testing.T) {
	t.Helper()
	chartEnsureGatewayAPI(t)
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/gateway-api: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config/crd/standard")
	var files, crds []string
	for _, r := range []string{"referencegrants", "backendtlspolicies"} {
		files = append(files, filepath.Join(dir, "gateway.networking.k8s.io_"+r+".yaml"))
		crds = append(crds, r+".gateway.networking.k8s.io")
	}
	chartEnsureCRDs(t, crds, false, files...)
}
