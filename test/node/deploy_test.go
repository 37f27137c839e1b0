//go:build e2e

package node

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// TestChart installs charts/k8s-gateway with helm and follows the release
// through what users do with it.
func TestChart(t *testing.T) {
	needNode(t)
	const ns, release = "kube-system", "gw"
	start := time.Now()
	helm(t, "install", release, filepath.Join(repoRoot, "charts/k8s-gateway"), "--namespace", ns,
		"--set", "domain=example.com", "--set", "service.type=NodePort", "--set", "replicaCount=1",
		"--set", "image.registry=localhost", "--set", "image.repository=k8s-gateway", "--set", "image.tag=e2e",
		"--set", "image.pullPolicy=Never", "--wait", "--timeout", "180s")
	t.Logf("helm install → Ready (the chart's readiness probe): %s", time.Since(start).Round(100*time.Millisecond))
	uninstalled := false
	t.Cleanup(func() {
		if !uninstalled {
			helmErr("uninstall", release, "--namespace", ns, "--wait")
		}
	})
	selector := "app.kubernetes.io/instance=" + release

	pod := onePod(t, ns, selector)
	// Non-root with a read-only root filesystem, as the chart's ServiceAccount.
	spec := kubectl(t, "", "-n", ns, "get", "pod", pod, "-o",
		`jsonpath={.spec.serviceAccountName} {.spec.securityContext.runAsNonRoot} {.spec.securityContext.runAsUser} {.spec.containers[0].securityContext.readOnlyRootFilesystem}`)
	if spec != "gw-k8s-gateway true 65532 true" {
		t.Fatalf("pod %s: serviceAccount, runAsNonRoot, runAsUser, readOnlyRootFilesystem = %q", pod, spec)
	}

	test := appNamespace(t)
	ingress(t, test, "web", "web."+test+".example.com", "192.0.2.40")
	name := "web." + test + ".example.com"
	nodePort := kubectl(t, "", "-n", ns, "get", "service", "gw-k8s-gateway", "-o",
		`jsonpath={.spec.ports[?(@.protocol=="UDP")].nodePort}`)
	ip := podIP(t, ns, pod)
	for _, at := range []struct{ addr, port string }{{ip, "1053"}, {nodeAddr, nodePort}} {
		d := eventually(t, 30*time.Second, at.addr, at.port, name, "60 IN A 192.0.2.40")
		t.Logf("answer at %s:%s after %s", at.addr, at.port, d)
		eventually(t, 5*time.Second, at.addr, at.port+" +tcp", name, "60 IN A 192.0.2.40")
	}

	// A new Ingress is answered at once.
	created := time.Now()
	ingress(t, test, "new", "new."+test+".example.com", "192.0.2.41")
	eventually(t, 10*time.Second, ip, "1053", "new."+test+".example.com", "60 IN A 192.0.2.41")
	t.Logf("new Ingress → answered: %s", time.Since(created).Round(time.Millisecond))

	// Liveness held: no restart so far.
	if r := kubectl(t, "", "-n", ns, "get", "pod", pod, "-o", "jsonpath={.status.containerStatuses[0].restartCount}"); r != "0" {
		t.Fatalf("pod %s restarted %s times", pod, r)
	}

	// helm upgrade with a new ttl: the same pod serves it after the reload
	// plugin loaded the updated ConfigMap (kubelet's syncFrequency is 10s
	// on the test node; reload checks every 30s).
	upgraded := time.Now()
	helm(t, "upgrade", release, filepath.Join(repoRoot, "charts/k8s-gateway"), "--namespace", ns,
		"--reuse-values", "--set", "ttl=120", "--wait", "--timeout", "180s")
	eventually(t, 120*time.Second, ip, "1053", name, "120 IN A 192.0.2.40")
	t.Logf("helm upgrade → new ttl served in place: %s after the upgrade", time.Since(upgraded).Round(time.Second))
	if now := onePod(t, ns, selector); now != pod {
		t.Fatalf("helm upgrade replaced pod %s by %s: the reload plugin should load the Corefile in place", pod, now)
	}
	if r := kubectl(t, "", "-n", ns, "get", "pod", pod, "-o", "jsonpath={.status.containerStatuses[0].restartCount}"); r != "0" {
		t.Fatalf("pod %s restarted %s times across the upgrade", pod, r)
	}
	eventually(t, 30*time.Second, nodeAddr, nodePort, name, "120 IN A 192.0.2.40")

	// A deleted pod is replaced, and the replacement answers the same.
	kubectl(t, "", "-n", ns, "delete", "pod", pod, "--wait=false")
	waitRolledOut(t, ns, "gw-k8s-gateway")
	var next string
	poll(t, 60*time.Second, func() bool {
		next = onePodErr(ns, selector)
		return next != "" && next != pod
	})
	eventually(t, 60*time.Second, podIP(t, ns, next), "1053", name, "120 IN A 192.0.2.40")
	eventually(t, 30*time.Second, nodeAddr, nodePort, name, "120 IN A 192.0.2.40")

	// Two replicas with the PodDisruptionBudget answer the same.
	helm(t, "upgrade", release, filepath.Join(repoRoot, "charts/k8s-gateway"), "--namespace", ns,
		"--reuse-values", "--set", "replicaCount=2", "--wait", "--timeout", "180s")
	waitRolledOut(t, ns, "gw-k8s-gateway")
	kubectl(t, "", "-n", ns, "get", "poddisruptionbudget", "gw-k8s-gateway")
	ips := strings.Fields(kubectl(t, "", "-n", ns, "get", "pods", "-l", selector,
		"--field-selector=status.phase=Running", "-o", "jsonpath={.items[*].status.podIP}"))
	if len(ips) != 2 {
		t.Fatalf("want 2 running replicas, got pod IPs %v", ips)
	}
	for _, ip := range ips {
		eventually(t, 60*time.Second, ip, "1053", name, "120 IN A 192.0.2.40")
	}

	// helm uninstall leaves nothing of the release.
	helm(t, "uninstall", release, "--namespace", ns, "--wait")
	uninstalled = true
	poll(t, 60*time.Second, func() bool {
		out, _ := kubectlErr("", "get", "all,configmap,serviceaccount,role,rolebinding,clusterrole,clusterrolebinding,poddisruptionbudget",
			"-A", "-l", selector, "-o", "name")
		return strings.TrimSpace(out) == ""
	})
}

// TestManifest applies examples/install-clusterwide.yml with the image replaced.
func TestManifest(t *testing.T) {
	needNode(t)
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples/install-clusterwide.yml"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := string(b)
	old := ""
	for _, line := range strings.Split(manifest, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "image: "); ok {
			old = v
		}
	}
	if old == "" {
		t.Fatal("examples/install-clusterwide.yml names no image")
	}
	manifest = strings.ReplaceAll(manifest, "image: "+old, "image: "+image)
	kubectl(t, manifest, "apply", "-f", "-")
	t.Cleanup(func() { kubectlErr(manifest, "delete", "-f", "-", "--wait") })
	waitRolledOut(t, "kube-system", "k8s-gateway")

	// The manifest runs two pods (the chart's default): each answers.
	test := appNamespace(t)
	name := "m." + test + ".example.com"
	ingress(t, test, "m", name, "192.0.2.50")
	ips := strings.Fields(kubectl(t, "", "-n", "kube-system", "get", "pods", "-l", "app.kubernetes.io/instance=k8s-gateway",
		"--field-selector=status.phase=Running", "-o", "jsonpath={.items[*].status.podIP}"))
	if len(ips) != 2 {
		t.Fatalf("want 2 running pods, got pod IPs %v", ips)
	}
	for _, ip := range ips {
		eventually(t, 30*time.Second, ip, "1053", name, "60 IN A 192.0.2.50")
	}
}

// ---- helpers ----

func kubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := kubectlErr(stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(out)
}

func kubectlErr(stdin string, args ...string) (string, error) {
	return harness.Kubectl(kubectlBin, kubeconfig, stdin, args...)
}

func helm(t *testing.T, args ...string) {
	t.Helper()
	if out, err := helmErr(args...); err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func helmErr(args ...string) (string, error) {
	cmd := exec.Command(helmBin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func appNamespace(t *testing.T) string {
	t.Helper()
	ns := fmt.Sprintf("node-%s-%04d", strings.ToLower(t.Name()), rand.IntN(10000))
	kubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectlErr("", "delete", "namespace", ns, "--wait=false") })
	return ns
}

// ingress creates an Ingress for host with a load balancer address.
func ingress(t *testing.T, ns, name, host, addr string) {
	t.Helper()
	kubectl(t, fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %s, namespace: %s}
spec:
  rules: [{host: %s}]
`, name, ns, host), "apply", "-f", "-")
	kubectl(t, "", "-n", ns, "patch", "ingress", name, "--subresource=status", "--type=merge",
		"-p", fmt.Sprintf(`{"status":{"loadBalancer":{"ingress":[{"ip":%q}]}}}`, addr))
}

func waitRolledOut(t *testing.T, ns, deploy string) {
	t.Helper()
	kubectl(t, "", "-n", ns, "rollout", "status", "deployment/"+deploy, "--timeout=180s")
}

// onePod returns the one running, ready pod of selector.
func onePod(t *testing.T, ns, selector string) string {
	t.Helper()
	var pod string
	poll(t, 60*time.Second, func() bool { pod = onePodErr(ns, selector); return pod != "" })
	return pod
}

func onePodErr(ns, selector string) string {
	out, err := kubectlErr("", "-n", ns, "get", "pods", "-l", selector, "-o",
		`jsonpath={range .items[?(@.metadata.deletionTimestamp)]}-{end}{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`)
	if err != nil || strings.HasPrefix(out, "-") {
		return ""
	}
	var ready []string
	for _, line := range strings.Fields(out) {
		if name, ok := strings.CutSuffix(line, "=True"); ok {
			ready = append(ready, name)
		}
	}
	if len(ready) != 1 || len(strings.Fields(out)) != 1 {
		return ""
	}
	return ready[0]
}

func podIP(t *testing.T, ns, pod string) string {
	t.Helper()
	return kubectl(t, "", "-n", ns, "get", "pod", pod, "-o", "jsonpath={.status.podIP}")
}

func poll(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// eventually asks dig at addr:port (port may carry dig options) until the
// answer section holds want ("TTL IN TYPE DATA" after the owner name).
func eventually(t *testing.T, timeout time.Duration, addr, port, name, want string) time.Duration {
	t.Helper()
	start := time.Now()
	fields := strings.Fields(port)
	args := append([]string{"@" + addr, "-p", fields[0], "+noall", "+answer", "+tries=1", "+time=1", name + ".", "A"}, fields[1:]...)
	var last string
	for time.Since(start) < timeout {
		out, _ := exec.Command("dig", args...).CombinedOutput()
		last = string(out)
		if slices.Contains(answers(last), name+". "+want) {
			return time.Since(start).Round(time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("dig %s: no %q within %s; last answer:\n%s", strings.Join(args, " "), name+". "+want, timeout, last)
	return 0
}

// answers normalises dig's answer lines to single spaces.
func answers(out string) []string {
	var rrs []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], ";") {
			rrs = append(rrs, strings.Join(f, " "))
		}
	}
	return rrs
}

// TestDualNameservers runs the chart README's "Two nameservers" walk-through
// as pods: each release answers the zone's NS query with both nameservers and
// both glue records. No load balancer runs here, so the test sets the
// Services' addresses (documentation addresses, never sent to).
func TestDualNameservers(t *testing.T) {
	needNode(t)
	const ns = "kube-system"
	for _, r := range []struct{ name, peer string }{{"dns1", "dns2"}, {"dns2", "dns1"}} {
		helm(t, "install", r.name, filepath.Join(repoRoot, "charts/k8s-gateway"), "--namespace", ns,
			"--set", "domain=k8s.example.com", "--set", "fullnameOverride="+r.name, "--set", "secondary="+r.peer+".kube-system", "--set", "replicaCount=1",
			"--set", "image.registry=localhost", "--set", "image.repository=k8s-gateway", "--set", "image.tag=e2e",
			"--set", "image.pullPolicy=Never")
		t.Cleanup(func() { helmErr("uninstall", r.name, "--namespace", ns, "--wait") })
	}
	kubectl(t, "", "-n", ns, "patch", "service", "dns1", "--subresource=status", "--type=merge",
		"-p", `{"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.10"}]}}}`)
	kubectl(t, "", "-n", ns, "patch", "service", "dns2", "--subresource=status", "--type=merge",
		"-p", `{"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.20"}]}}}`)
	want := []string{
		"k8s.example.com. 60 IN NS dns1.kube-system.k8s.example.com.",
		"k8s.example.com. 60 IN NS dns2.kube-system.k8s.example.com.",
		"dns1.kube-system.k8s.example.com. 60 IN A 203.0.113.10",
		"dns2.kube-system.k8s.example.com. 60 IN A 203.0.113.20",
	}
	slices.Sort(want)
	for _, release := range []string{"dns1", "dns2"} {
		waitRolledOut(t, ns, release)
		ip := podIP(t, ns, onePod(t, ns, "app.kubernetes.io/instance="+release))
		var got []string
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			out, _ := exec.Command("dig", "@"+ip, "-p", "1053", "+norec", "+noall", "+answer", "+additional",
				"+tries=1", "+time=1", "k8s.example.com.", "NS").CombinedOutput()
			got = answers(string(out))
			slices.Sort(got)
			if slices.Equal(got, want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: NS answer and glue\n got %q\nwant %q", release, got, want)
			}
		}
		t.Logf("%s (%s) answers NS with both nameservers and both glue records", release, ip)
	}
}
