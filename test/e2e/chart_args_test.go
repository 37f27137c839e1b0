//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	appsv1 "k8s.io/api/apps/v1"
)

// TestChartArgsRun: the container arguments the chart renders, extraArgs
// included, are arguments the binary takes and acts on, not only text in a
// Deployment: the tests' coredns runs with what the chart renders for
// logFormat json and extraArgs [-quiet] (the Corefile path replaced by the
// test's), answers, prints no start banner (-quiet) and logs JSON lines
// (-log-format json). The same binary without them prints the banner and
// text lines, so the check can fail.
func TestChartArgsRun(t *testing.T) {
	chartHelm(t)
	m := parseChartManifest(t, chartHelmOut(t, "template", "args", chartDir, "--namespace", "dns",
		"-f", chartValuesFile(t, "domain: example.com\nlogFormat: json\nextraArgs: [-quiet]\n")))
	args := chartGet[appsv1.Deployment](t, m, "Deployment", "").Spec.Template.Spec.Containers[0].Args
	if len(args) < 2 || args[0] != "-conf" || args[1] != "/etc/coredns/Corefile" {
		t.Fatalf("args %q: want -conf /etc/coredns/Corefile first", args)
	}
	run := func(t *testing.T, extra []string) string {
		s := newServer(t, corednsBin, "test/e2e/testdata/Corefile", kubeconfig)
		s.Args = extra
		s.launch()
		s.waitReady(60 * time.Second)
		name := "nothing-here.example.com."
		if r, err := s.query(name, dns.TypeA); err != nil || r.Rcode != "NXDOMAIN" {
			t.Fatalf("%s: %v %v, want NXDOMAIN", name, r, err)
		}
		var out string
		waitFor(t, 5*time.Second, func() bool { out = s.output(); return strings.Contains(out, name) }) // the log plugin's line
		return out
	}
	banner := func(out string) bool { return strings.Contains(out, "CoreDNS-") }
	jsonLines := func(out string) bool {
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.HasPrefix(l, "{") || !strings.HasSuffix(l, "}") {
				return false
			}
		}
		return true
	}

	plain := run(t, nil)
	if !banner(plain) || jsonLines(plain) {
		t.Fatalf("without the chart's arguments: want the banner and text lines:\n%s", plain)
	}
	out := run(t, args[2:])
	if banner(out) {
		t.Errorf("with %q: the banner is printed (-quiet):\n%s", args[2:], out)
	}
	if !jsonLines(out) {
		t.Errorf("with %q: a line is not JSON (-log-format json):\n%s", args[2:], out)
	}
}
