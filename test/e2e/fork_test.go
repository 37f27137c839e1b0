//go:build e2e

package e2e

// TestForkDifferential runs the k8s-gateway fork (the plugin most users run
// today, built from its source by hack/fork.sh as a test oracle) beside the
// plugin under test, against the same API server and objects, and compares
// every answer. Each setup is one the fork documents: its chart's default
// values, its chart with every kind and its filters, and its README's
// Corefile. The plugin runs the same README Corefile, and for the chart
// setups the Corefile of this repository's chart with the fork's values
// converted by hack/forkvalues. Every difference must be a row of the table
// of docs/guides/migrating-from-k8s-gateway.md, and every row a difference seen.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
)

// forkZone is the zone both servers serve.
const forkZone = "forkdiff.example"

// forkSetup is one way the fork is run.
type forkSetup struct {
	name string
	// values are the fork chart's values over its defaults ("" for none),
	// with $ns for the namespace; readme runs the README's Corefile instead.
	values string
	full   bool // values are the fork chart's whole values.yaml
	readme bool
	// minimal runs the README's least configuration: the zone alone (and
	// the kubeconfig of the test).
	minimal bool
}

var forkSetups = []forkSetup{
	{name: "chart defaults", full: true},
	{name: "chart with every kind", values: `
watchedResources: [Ingress, Service, HTTPRoute, TLSRoute, GRPCRoute, DNSEndpoint]
secondary: exdns2-k8s-gateway.$ns
filters:
  ingressClasses: [nginx]
  gatewayClasses: [fork-class]
`},
	{name: "chart with a zone file", values: `
fallthrough: {enabled: true}
zoneFiles:
  - filename: static.db
    domains: forkdiff.example
    contents: |
      forkdiff.example. 60 IN SOA ns.forkdiff.example. hostmaster.forkdiff.example. 1 7200 1800 86400 60
      forkdiff.example. 60 IN NS ns.forkdiff.example.
      static.forkdiff.example. 60 IN TXT "from the zone file"
`},
	{name: "README example", readme: true},
	{name: "README minimal", minimal: true},
	// Last: it changes an object at its end (checkSelectorLeave).
	{name: "chart with two selectors", values: `
filters:
  serviceLabelSelectors: [app=a, tier=b]
`},
}

var forkBuild struct {
	once     sync.Once
	bin, src string
	err      error
}

// forkOracle builds the fork (hack/fork.sh, cached) and returns its binary
// and its unpacked source.
func forkOracle(t *testing.T) (bin, src string) {
	t.Helper()
	if os.Getenv("K8SGW_SKIP_FORK") == "1" {
		// Set on purpose (.ci/run sets it only when the oracle's archive is
		// not on the machine, and says so): the summary lists the skip.
		t.Skip("K8SGW_SKIP_FORK=1: the fork oracle is not built, its differential is not run")
	}
	forkBuild.once.Do(func() {
		script := filepath.Join(repoRoot, "hack/fork.sh")
		start := time.Now()
		if out, err := exec.Command(script, "build").CombinedOutput(); err != nil {
			forkBuild.err = fmt.Errorf("hack/fork.sh build: %v\n%s", err, out)
			return
		}
		if d := time.Since(start); d > 5*time.Second {
			fmt.Fprintf(os.Stderr, "hack/fork.sh built the fork in %s\n", d.Round(time.Second))
		}
		for _, v := range []struct {
			arg string
			out *string
		}{{"path", &forkBuild.bin}, {"src", &forkBuild.src}} {
			out, err := exec.Command(script, v.arg).Output()
			if err != nil {
				forkBuild.err = fmt.Errorf("hack/fork.sh %s: %v", v.arg, err)
				return
			}
			*v.out = strings.TrimSpace(string(out))
		}
	})
	if forkBuild.err != nil {
		t.Fatal(forkBuild.err)
	}
	return forkBuild.bin, forkBuild.src
}

// forkValuesTool builds hack/forkvalues into dir.
func forkValuesTool(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "forkvalues")
	cmd := exec.Command("go", "build", "-o", bin, "./hack/forkvalues")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building hack/forkvalues: %v\n%s", err, out)
	}
	return bin
}

// convertForkValues runs hack/forkvalues on a values file and returns the
// path of this chart's values.
func convertForkValues(t *testing.T, tool, values string) string {
	t.Helper()
	in, err := os.Open(values)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command(tool)
	cmd.Stdin = in
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/forkvalues %s: %v\n%s", values, err, stderr.String())
	}
	return chartValuesFile(t, string(out))
}

// renderedConfig returns the data of the ConfigMap of the Corefile in a
// rendered chart: the Corefile and the zone files.
func renderedConfig(t *testing.T, manifest string) map[string]string {
	t.Helper()
	dec := k8syaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for {
		var cm corev1.ConfigMap
		if err := dec.Decode(&cm); err != nil {
			break
		}
		if cm.Kind == "ConfigMap" && cm.Data["Corefile"] != "" {
			return cm.Data
		}
	}
	t.Fatalf("no Corefile in the rendered chart:\n%s", manifest)
	return nil
}

// renderedCorefile returns the Corefile of a rendered chart.
func renderedCorefile(t *testing.T, manifest string) string {
	t.Helper()
	return renderedConfig(t, manifest)["Corefile"]
}

// localChart writes the zone files of a rendered chart's ConfigMap to a
// directory of the test and returns its Corefile, reading them there
// (where the pods mount them, /etc/coredns), made local (localCorefile).
func localChart(t *testing.T, manifest string) string {
	t.Helper()
	data := renderedConfig(t, manifest)
	dir := t.TempDir()
	for key, text := range data {
		if key == "Corefile" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, key), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return localCorefile(strings.ReplaceAll(data["Corefile"], "/etc/coredns/", dir+"/"))
}

// localCorefile turns a chart's Corefile into one that runs here: the DNS
// port, and the addresses of health, ready and prometheus, on loopback
// ports of the test; the kubeconfig of the test cluster. Nothing else
// changes.
func localCorefile(corefile string) string {
	var out []string
	for _, line := range strings.Split(corefile, "\n") {
		f := strings.Fields(line)
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		block := ""
		if len(f) > 0 && f[len(f)-1] == "{" {
			block = " {"
		}
		switch {
		case len(f) == 0:
		case strings.HasSuffix(f[0], ":1053"):
			line = strings.ReplaceAll(line, ":1053", ":{$K8S_GATEWAY_PORT}")
		case f[0] == "health":
			line = indent + "health 127.0.0.1:{$FORK_HEALTH_PORT}" + block
		case f[0] == "ready":
			line = indent + "ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}" + block
		case f[0] == "prometheus":
			line = indent + "prometheus 127.0.0.1:{$FORK_METRICS_PORT}" + block
		}
		out = append(out, line)
		if len(f) > 0 && f[0] == "k8s_gateway" {
			out = append(out, indent+"  kubeconfig {$KUBECONFIG}")
		}
	}
	return strings.Join(out, "\n") + "\n"
}

// readmeCorefile returns the fork README's example block, in a server block
// of the zone, with the zone and the kubeconfig of the test.
func readmeCorefile(t *testing.T, src string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(src, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "Example:\n\n```\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 || !strings.HasPrefix(example, "k8s_gateway example.com {") {
		t.Fatalf("the fork's README has no Corefile example where expected")
	}
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(example), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "kubeconfig" {
			line = "    kubeconfig {$KUBECONFIG}"
		}
		lines = append(lines, "    "+strings.ReplaceAll(line, "example.com", forkZone))
	}
	return forkZone + ":{$K8S_GATEWAY_PORT} {\n    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}\n" + strings.Join(lines, "\n") + "\n}\n"
}

// forkCorefiles returns the Corefiles of a setup: the fork's, and the plugin's.
func forkCorefiles(t *testing.T, s forkSetup, src, tool, ns string) (fork, ours string) {
	t.Helper()
	if s.readme {
		c := readmeCorefile(t, src)
		return c, c
	}
	if s.minimal {
		c := forkZone + ":{$K8S_GATEWAY_PORT} {\n    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}\n    k8s_gateway " +
			forkZone + " {\n        kubeconfig {$KUBECONFIG}\n    }\n}\n"
		return c, c
	}
	values := filepath.Join(src, "chart/values.yaml")
	if !s.full {
		values = chartValuesFile(t, strings.ReplaceAll(s.values, "$ns", ns))
	}
	args := []string{"template", "exdns", "-n", ns, "--set", "domain=" + forkZone}
	fork = localChart(t, chartHelmOut(t, append(args, filepath.Join(src, "chart"), "-f", values)...))
	converted := convertForkValues(t, tool, values)
	ours = localChart(t, chartHelmOut(t, append(args, filepath.Join(repoRoot, chartDir), "-f", converted)...))
	return fork, ours
}

// startForkServer runs binary with a Corefile and waits until it answers
// the zone's SOA (the fork answers SERVFAIL until its informers synced).
func startForkServer(t *testing.T, binary, corefile string) *server {
	t.Helper()
	s := startServerBinary(t, binary, tempCorefile(t, corefile), kubeconfig,
		"FORK_HEALTH_PORT="+strconv.Itoa(freePort(t)), "FORK_METRICS_PORT="+strconv.Itoa(freePort(t)))
	deadline := time.Now().Add(60 * time.Second)
	for {
		m := new(dns.Msg)
		m.SetQuestion(forkZone+".", dns.TypeSOA)
		r, err := exchange(s.port, m, false)
		if err == nil && r.Rcode == dns.RcodeSuccess {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not answer the SOA of %s: %v %v\n%s", binary, forkZone, r, err, s.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// corefileTTL returns the ttl of a Corefile's k8s_gateway block, 60 without one.
func corefileTTL(t *testing.T, corefile string) uint32 {
	t.Helper()
	for _, line := range strings.Split(corefile, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "ttl" {
			ttl, err := strconv.ParseUint(f[1], 10, 32)
			if err != nil {
				t.Fatalf("ttl %q: %v", f[1], err)
			}
			return uint32(ttl)
		}
	}
	return 60
}

func TestForkDifferential(t *testing.T) {
	start := time.Now()
	forkBin, forkSrc := forkOracle(t)
	built := time.Now()
	tool := forkValuesTool(t)
	chartEnsureCRDs(t, []string{"dnsendpoints.externaldns.k8s.io"}, false, filepath.Join(repoRoot, "test/e2e/testdata/dnsendpoint-crd.yaml"))
	installGatewayAPI(t, false)
	ns := namespace(t)
	applyForkObjects(t, ns, forkZone)
	// The README's nameservers, in kube-system.
	for name, ip := range map[string]string{"exdns-1-k8s-gateway": "192.0.2.61", "exdns-2-k8s-gateway": "192.0.2.62"} {
		kubectl(t, fmt.Sprintf(`{"apiVersion": "v1", "kind": "Service", "metadata": {"name": %q, "namespace": "kube-system"},
"spec": {"type": "LoadBalancer", "ports": [{"port": 53, "protocol": "UDP"}]}}`, name), "apply", "-f", "-")
		t.Cleanup(func() { kubectlErr("", "-n", "kube-system", "delete", "service", name, "--wait=false") })
		setLBStatus(t, "kube-system", "service", name, ip)
	}
	setupDone := time.Now()

	var diffs forkDiffs
	queries := 0
	for _, s := range forkSetups {
		forkCorefile, ourCorefile := forkCorefiles(t, s, forkSrc, tool, ns)
		n := forkNamer{ns: ns, zone: forkZone, ttl: corefileTTL(t, ourCorefile)}
		fork := startForkServer(t, forkBin, forkCorefile)
		ours := startForkServer(t, corednsBin, ourCorefile)
		for _, name := range forkNames {
			qname := name.absolute(ns, forkZone)
			for _, qtype := range forkTypes {
				q := diffQuery{name: qname, qtype: qtype, flags: diffFlagSets[0]}
				fr, err := exchange(fork.port, q.msg(), false)
				if err != nil {
					fr = nil // a reply the fork does not give is a difference too
				}
				or, err := exchange(ours.port, q.msg(), false)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				queries++
				n.compareForkReplies(&diffs, s.name, qname, qtype, fr, or)
			}
			diffs.endName(s.name, n.name(qname), fmt.Sprintf("`%s`: %s", n.name(qname), name.what))
		}
		if s.name == "chart with two selectors" {
			checkSelectorLeave(t, ns, fork, ours)
		}
		fork.stop()
		ours.stop()
	}
	t.Logf("fork built in %s; objects in %s; %d queries to each server, %d differences, in %s",
		built.Sub(start).Round(time.Millisecond), setupDone.Sub(built).Round(time.Millisecond),
		queries, len(diffs.rows()), time.Since(setupDone).Round(time.Millisecond))
	checkForkTable(t, diffs.rows())
}

// TestForkChartValues: the fork chart's own values.yaml, given to this chart
// as it is, is refused with what to use instead (the first of its values
// this chart names differently), and so is each of those values alone;
// converted by hack/forkvalues, it renders (TestForkDifferential serves it).
func TestForkChartValues(t *testing.T) {
	_, forkSrc := forkOracle(t)
	chart := filepath.Join(repoRoot, chartDir)
	render := func(args ...string) (string, error) {
		out, errOut, err := chartHelmRun(t, append([]string{"template", "exdns", chart, "--set", "domain=" + forkZone}, args...)...)
		return out + errOut, err
	}
	values := filepath.Join(forkSrc, "chart/values.yaml")
	if out, err := render("-f", values); err == nil || !strings.Contains(out, "debug is not a value of this chart: add {name: debug} to extraZonePlugins") {
		t.Errorf("the fork's values.yaml as it is: %v\n%s", err, out)
	}
	for _, tc := range []struct{ set, hint string }{
		{"scheme=tls://", "scheme is not a value of this chart: plain DNS is always served; set dnsOverTLS.enabled"},
		{"secure=true", "secure is not a value of this chart: the pods always run as a non-root user"},
		{"dnsChallenge.enabled=false", "dnsChallenge is not a value of this chart: set acme.enabled"},
	} {
		if out, err := render("--set", tc.set); err == nil || !strings.Contains(out, tc.hint) {
			t.Errorf("--set %s: %v, want %q\n%s", tc.set, err, tc.hint, out)
		}
	}
	converted := convertForkValues(t, forkValuesTool(t), values)
	out, err := render("-f", converted)
	if err != nil {
		t.Fatalf("the fork's values.yaml converted: %v\n%s", err, out)
	}
	for _, want := range []string{"resources Ingress Service", "ttl 300"} {
		if !strings.Contains(renderedCorefile(t, out), want) {
			t.Errorf("the converted values' Corefile lacks %q:\n%s", want, renderedCorefile(t, out))
		}
	}
}

// checkSelectorLeave: a Service that leaves one of two selectors but
// matches the other stays published by both servers, with its change; it
// goes from both when it leaves the second. (Last: it changes the objects.)
func checkSelectorLeave(t *testing.T, ns string, fork, ours *server) {
	t.Helper()
	name := "sel-ab." + ns + "." + forkZone + "."
	kubectl(t, "", "-n", ns, "patch", "service", "sel-ab", "--type=merge",
		"-p", `{"metadata": {"labels": {"app": null}}, "spec": {"externalIPs": ["192.0.2.25"]}}`)
	// The fork answers only the externalIPs of a Service that has some.
	fork.eventually(t, 10*time.Second, name, dns.TypeA, positive(name+" 300 IN A 192.0.2.25"))
	ours.eventually(t, 10*time.Second, name, dns.TypeA, positive(name+" 300 IN A 192.0.2.24", name+" 300 IN A 192.0.2.25"))
	kubectl(t, "", "-n", ns, "label", "service", "sel-ab", "tier-")
	fork.eventually(t, 10*time.Second, name, dns.TypeA, nxdomain)
	ours.eventually(t, 10*time.Second, name, dns.TypeA, nxdomain)
}
