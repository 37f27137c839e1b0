//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// chartHiddenPrimaryCases: hiddenPrimary renders the transfer plugin of the
// default block, a NetworkPolicy admitting DNS from the secondaries only, and
// a Service restricted to them that keeps their source addresses; the
// running Corefile lets a secondary's address transfer the zone and refuses
// any other. The secondaries are loopback addresses where nothing listens on
// port 53: the NOTIFYs stay on this machine.
func chartHiddenPrimaryCases() []chartCase {
	return []chartCase{{
		name: "hidden-primary",
		values: `domain: example.com
apex: ns1.example.net.
secondary: ns2.example.net.
hiddenPrimary:
  secondaries: [127.0.0.2, "127.0.0.3:53", "2001:db8::10"]
catalog: {zone: catalog.invalid}
`,
		check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
			sb := cf[0]
			if got, want := sb.dirs["transfer"], [][]string{{"transfer", "{"}, {"to", "127.0.0.2", "127.0.0.3:53", "2001:db8::10"}, {"}"}}; !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("transfer %q, want %q", got, want)
			}
			svc := chartGet[corev1.Service](t, m, "Service", "k8s-gateway")
			if want := []string{"127.0.0.2/32", "127.0.0.3/32", "2001:db8::10/128"}; !slices.Equal(svc.Spec.LoadBalancerSourceRanges, want) {
				t.Errorf("loadBalancerSourceRanges %q, want %q", svc.Spec.LoadBalancerSourceRanges, want)
			}
			if svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal {
				t.Errorf("externalTrafficPolicy %q, want Local", svc.Spec.ExternalTrafficPolicy)
			}
			np := chartGet[networkingv1.NetworkPolicy](t, m, "NetworkPolicy", "k8s-gateway")
			if len(np.Spec.Ingress) != 2 {
				t.Fatalf("NetworkPolicy ingress rules: %+v", np.Spec.Ingress)
			}
			var from, dnsPorts, open []string
			for _, p := range np.Spec.Ingress[0].From {
				from = append(from, p.IPBlock.CIDR)
			}
			for _, p := range np.Spec.Ingress[0].Ports {
				dnsPorts = append(dnsPorts, string(*p.Protocol)+"/"+p.Port.String())
			}
			for _, p := range np.Spec.Ingress[1].Ports {
				open = append(open, string(*p.Protocol)+"/"+p.Port.String())
			}
			if len(np.Spec.Ingress[1].From) != 0 || !slices.Equal(from, svc.Spec.LoadBalancerSourceRanges) ||
				!slices.Equal(dnsPorts, []string{"UDP/1053", "TCP/1053"}) || !slices.Equal(open, []string{"TCP/8080", "TCP/8181", "TCP/9153"}) {
				t.Errorf("NetworkPolicy: DNS from %q on %q, open %q (from %v)", from, dnsPorts, open, np.Spec.Ingress[1].From)
			}
			if np.Spec.PodSelector.MatchLabels["app.kubernetes.io/instance"] != "k8s-gateway" {
				t.Errorf("NetworkPolicy podSelector %v", np.Spec.PodSelector)
			}
		},
		dns: func(t *testing.T, ns, other string, s *server) {
			at := []string{"@127.0.0.1", "-p", strconv.Itoa(s.port)}
			got := digLines(t, append([]string{"-b", "127.0.0.2"}, append(at, "example.com.", "AXFR")...)...)
			if len(got) < 3 || !strings.Contains(got[0], " SOA ") || got[0] != got[len(got)-1] || !slices.Contains(got, "example.com. 60 IN NS ns1.example.net.") {
				t.Errorf("AXFR from a secondary's address:\n%s", strings.Join(got, "\n"))
			}
			if got := digLines(t, append([]string{"-b", "127.0.0.2"}, append(at, "catalog.invalid.", "AXFR")...)...); len(got) < 3 {
				t.Errorf("catalog AXFR from a secondary's address:\n%s", strings.Join(got, "\n"))
			}
			out, _ := exec.Command(digBin, append(at, "+tries=1", "+time=5", "example.com.", "AXFR")...).CombinedOutput()
			if !strings.Contains(string(out), "Transfer failed") {
				t.Errorf("AXFR from 127.0.0.1, not a secondary:\n%s", out)
			}
		},
	}, {
		// restrict: false: the transfer plugin only, the Service as set.
		name: "hidden-primary-unrestricted",
		values: `domain: example.com
hiddenPrimary: {secondaries: [127.0.0.2], restrict: false}
`,
		check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
			if slices.ContainsFunc(m.objs, func(o chartObject) bool { return o.Kind == "NetworkPolicy" }) {
				t.Errorf("a NetworkPolicy without restrict: %q", m.kinds())
			}
			svc := chartGet[corev1.Service](t, m, "Service", "k8s-gateway")
			if len(svc.Spec.LoadBalancerSourceRanges) != 0 || svc.Spec.ExternalTrafficPolicy != "" {
				t.Errorf("Service restricted without restrict: %+v", svc.Spec)
			}
			if got := cf[0].dirs["transfer"]; len(got) != 3 || !slices.Equal(got[1], []string{"to", "127.0.0.2"}) {
				t.Errorf("transfer %q", got)
			}
		},
	}}
}

// TestChartAnycastDocValues: the values of docs/features/anycast.md render: the
// transfer plugin to the secondaries, the catalog, and the NetworkPolicy.
func TestChartAnycastDocValues(t *testing.T) {
	chartHelm(t)
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs/features/anycast.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The snippet: a ```yaml fence (with or without an info word) whose
	// first line names it.
	before, rest, ok := strings.Cut(string(b), "\n# values.yaml (hidden primary)\n")
	values, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 || !strings.HasPrefix(before[strings.LastIndexByte(before, '\n')+1:], "```yaml") {
		t.Fatal("docs/features/anycast.md: no values.yaml (hidden primary) snippet")
	}
	ns := namespace(t)
	m := chartRender(t, ns, values)
	cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "")
	sb := parseChartCorefile(t, cm.Data["Corefile"])[0]
	if got := sb.dirs["transfer"]; len(got) != 3 || !slices.Equal(got[1], []string{"to", "198.51.100.10", "198.51.100.20"}) {
		t.Errorf("transfer %q", got)
	}
	if _, opts := sb.gateway(t); !slices.Equal(opts["catalog"], []string{"catalog.invalid"}) {
		t.Errorf("catalog %q", opts["catalog"])
	}
	np := chartGet[networkingv1.NetworkPolicy](t, m, "NetworkPolicy", "k8s-gateway")
	if len(np.Spec.Ingress) == 0 || len(np.Spec.Ingress[0].From) != 2 {
		t.Errorf("NetworkPolicy %+v", np.Spec)
	}
	chartApplyDryRun(t, m.text)
}
