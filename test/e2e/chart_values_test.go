//go:build e2e

package e2e

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
)

// TestChartValues lints and renders the chart over a matrix of values,
// validates the manifests with the API server and runs each Corefile.
func TestChartValues(t *testing.T) {
	chartHelm(t)
	for _, c := range chartCases() {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			ns := namespace(t)
			other := ""
			if c.otherNamespace {
				other = namespace(t)
			}
			values := strings.NewReplacer("{{ns}}", ns, "{{other}}", other).Replace(c.values)
			vf := chartValuesFile(t, values)
			out := chartHelmOut(t, "lint", "--strict", chartDir, "--namespace", ns, "-f", vf)
			if !strings.Contains(out, "1 chart(s) linted, 0 chart(s) failed") {
				t.Errorf("helm lint --strict:\n%s", out)
			}
			m := chartRender(t, ns, values)
			cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "")
			cf := parseChartCorefile(t, cm.Data["Corefile"])
			c.check(t, ns, m, cf)

			if slices.ContainsFunc(m.objs, func(o chartObject) bool { return o.Kind == "ServiceMonitor" }) {
				chartEnsureCRDs(t, []string{"servicemonitors.monitoring.coreos.com"}, true, filepath.Join(repoRoot, "test/e2e/testdata/servicemonitor-crd.yaml"))
			}
			chartApplyDryRun(t, m.text)

			// The rendered Corefile runs: CoreDNS accepts every plugin and
			// option, and k8s_gateway syncs and answers.
			s := startServer(t, chartLocalCorefile(t, cm.Data), kubeconfig)
			if c.dns != nil {
				c.dns(t, ns, other, s)
			} else {
				s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, positive("example.com. 60 IN NS k8s-gateway."+ns+".example.com."))
			}
			t.Logf("%s: lint, template, dry-run and run in %s", c.name, time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestChartBadValues: bad values fail at helm template and helm install with
// a message naming the value.
func TestChartBadValues(t *testing.T) {
	for _, c := range []struct {
		name   string
		values string
		want   []string
	}{
		{"ttl-out-of-range", "domain: example.com\nttl: 99999\n", []string{"at '/ttl': maximum: got 99,999, want 3,600"}},
		{"unknown-kind", "domain: example.com\nwatchedResources: [Ingress, Foo]\n", []string{
			"at '/watchedResources/1': value must be one of 'Ingress', 'Service', 'DNSEndpoint', 'HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute'"}},
		{"no-kind", "domain: example.com\nwatchedResources: []\n", []string{"at '/watchedResources': minItems: got 0, want 1"}},
		{"wrong-types", "domain: example.com\nttl: \"60\"\nreplicaCount: two\nservice: {useTcp: \"yes\"}\n", []string{
			"at '/ttl': got string, want integer", "at '/replicaCount': got string, want integer", "at '/service/useTcp': got string, want boolean"}},
		{"no-domain", "ttl: 60\n", []string{"at '': missing property 'domain'"}},
		{"bad-domain", "domain: \"example..com\"\n", []string{"at '/domain': 'example..com' does not match pattern"}},
		{"misspelt-value", "domain: example.com\nwatchedResource: [Ingress]\n", []string{"additional properties 'watchedResource' not allowed"}},
		{"service-type", "domain: example.com\nservice: {type: External}\n", []string{"at '/service/type': value must be one of 'ClusterIP', 'NodePort', 'LoadBalancer'"}},
		{"zone-file-half-in", `domain: example.com
zoneFiles: [{filename: db.mixed, domains: "example.com example.net", contents: "x"}]
`, []string{"zoneFiles[0] (db.mixed): its domains must be either all zones of `domain`"}},
		{"zone-file-name", "domain: example.com\nzoneFiles: [{filename: Corefile, domains: example.net, contents: x}]\n", []string{"at '/zoneFiles/0/filename'"}},
		{"reverse-zones-relative-apex", "domain: 2.0.192.in-addr.arpa\n", []string{"domain has only reverse zones", "apex and secondary must be absolute names"}},
		{"persistence-relative-path", "domain: example.com\npersistence: {enabled: true, mountPath: data}\n", []string{"at '/persistence/mountPath': 'data' does not match pattern"}},
		{"memory-limit-unparsed", "domain: example.com\nresources: {limits: {memory: 0.5Gi}}\n", []string{
			`resources.limits.memory "0.5Gi": cannot derive GOMEMLIMIT from it; set goRuntime.memLimit`}},
		{"go-gc", "domain: example.com\ngoRuntime: {gc: fast}\n", []string{"at '/goRuntime/gc': 'fast' does not match pattern"}},
		{"view-without-clients", "domain: example.com\nviews: [{name: lan, include: [10.0.0.0/8]}]\n", []string{"views[0] (lan): set clients or expr"}},
		{"view-name-twice", "domain: example.com\nviews: [{name: lan, clients: [10.0.0.0/8]}, {name: lan, expr: \"true\"}]\n", []string{`views[1]: the name "lan" is used twice`}},
		{"view-bad-range", "domain: example.com\ndefaultView: {exclude: [example.com]}\n", []string{"at '/defaultView/exclude/0': 'example.com' does not match pattern"}},
		{"hidden-primary-bad-secondary", "domain: example.com\nhiddenPrimary: {secondaries: [ns1.example.net]}\n", []string{"at '/hiddenPrimary/secondaries/0': 'ns1.example.net' does not match pattern"}},
		{"hidden-primary-two-transfers", "domain: example.com\nhiddenPrimary: {secondaries: [192.0.2.10]}\ndefaultView: {plugins: [{name: transfer, configBlock: to 192.0.2.11}]}\n", []string{
			"hiddenPrimary.secondaries writes the default block's transfer plugin"}},
		{"servicemonitor-without-prometheus", "domain: example.com\nextraZonePlugins: [{name: errors}]\nserviceMonitor: {enabled: true}\n", []string{
			"serviceMonitor.enabled needs the prometheus plugin in extraZonePlugins"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, err := chartHelmRun(t, "template", "k8s-gateway", chartDir, "-f", chartValuesFile(t, c.values))
			if err == nil {
				t.Fatalf("helm template accepted the values:\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("helm template: the error does not say %q:\n%s", w, errOut)
				}
			}
		})
	}

	// helm install refuses them before creating anything.
	ns := namespace(t)
	_, errOut, err := chartHelmRun(t, "install", "bad", chartDir, "--namespace", ns, "--set", "domain=example.com", "--set", "ttl=99999")
	if err == nil || !strings.Contains(errOut, "at '/ttl': maximum: got 99,999, want 3,600") {
		t.Errorf("helm install with ttl 99999: err %v\n%s", err, errOut)
	}
	if releases := chartHelmOut(t, "list", "--namespace", ns, "--all", "-q"); strings.TrimSpace(releases) != "" {
		t.Errorf("helm install with bad values left releases: %q", releases)
	}
	if out := kubectl(t, "", "-n", ns, "get", "serviceaccounts,configmaps,services,deployments", "-l", "app.kubernetes.io/instance=bad", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("helm install with bad values created objects: %s", out)
	}
}
