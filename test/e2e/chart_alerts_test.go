//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"sigs.k8s.io/yaml"
)

// promtool returns the path of promtool (Debian's prometheus package,
// hack/install-deps.sh).
func promtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found: run hack/install-deps.sh (Debian package prometheus)")
	}
	return path
}

// TestChartAlerts: the PrometheusRule of prometheusRule.enabled passes
// promtool check rules, every alert fires from the synthetic series of
// testdata/alerts-test.yml (and only there), and docs/operations/alerts.md has a
// runbook for each.
func TestChartAlerts(t *testing.T) {
	chartHelm(t)
	m := parseChartManifest(t, chartHelmOut(t, "template", "k8s-gateway", chartDir, "--namespace", "dns",
		"-f", chartValuesFile(t, "domain: example.com\nserviceMonitor: {enabled: true}\nprometheusRule: {enabled: true, labels: {release: prom}}\n")))
	rule := chartGet[struct {
		Metadata struct{ Labels map[string]string } `json:"metadata"`
		Spec     struct {
			Groups []struct {
				Name  string `json:"name"`
				Rules []struct {
					Alert       string            `json:"alert"`
					Annotations map[string]string `json:"annotations"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}](t, m, "PrometheusRule", "")
	if rule.Metadata.Labels["release"] != "prom" {
		t.Errorf("PrometheusRule labels %v: no release=prom", rule.Metadata.Labels)
	}

	// promtool reads the rule groups: the spec of the PrometheusRule.
	var raw struct {
		Spec json.RawMessage `json:"spec"`
	}
	for _, o := range m.objs {
		if o.Kind == "PrometheusRule" {
			if err := json.Unmarshal(o.json, &raw); err != nil {
				t.Fatal(err)
			}
		}
	}
	groups, err := yaml.JSONToYAML(raw.Spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tests, err := os.ReadFile(filepath.Join(repoRoot, "test/e2e/testdata/alerts-test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"rules.yml": groups, "alerts-test.yml": tests} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"check", "rules", "rules.yml"}, {"test", "rules", "alerts-test.yml"}} {
		cmd := exec.Command(promtool(t), args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("promtool %s: %v\n%s\nrules:\n%s", strings.Join(args, " "), err, out, groups)
		}
		t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
	}

	// Every alert is tested firing, and has its runbook (once per name: the
	// SERVFAIL ratio has a warning and a critical rule).
	runbooks, err := os.ReadFile(filepath.Join(repoRoot, "docs/operations/alerts.md"))
	if err != nil {
		t.Fatal(err)
	}
	var alerts []string
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if slices.Contains(alerts, r.Alert) {
				continue
			}
			alerts = append(alerts, r.Alert)
			if !strings.Contains(string(tests), "alertname: "+r.Alert+"\n        exp_alerts:") {
				t.Errorf("alert %s: testdata/alerts-test.yml never expects it to fire", r.Alert)
			}
			if !strings.Contains(string(runbooks), "\n## "+r.Alert+"\n") {
				t.Errorf("alert %s: no runbook (## %s) in docs/operations/alerts.md", r.Alert, r.Alert)
			}
			if want := "#" + strings.ToLower(r.Alert); !strings.HasSuffix(r.Annotations["runbook_url"], want) {
				t.Errorf("alert %s: runbook_url %q, want it to end in %s", r.Alert, r.Annotations["runbook_url"], want)
			}
		}
	}
	want := []string{"K8sGatewayDown", "K8sGatewayAPIContactLost", "K8sGatewayKindDisabled", "K8sGatewayClusterDisconnected", "K8sGatewayFailOpen",
		"K8sGatewayCopyNotWritten", "K8sGatewayUpdateClockSkew", "K8sGatewayServfailRatio", "K8sGatewayLatencyHigh",
		"K8sGatewayPanics", "K8sGatewayReloadFailed"}
	if !slices.Equal(alerts, want) {
		t.Errorf("alerts %q, want %q", alerts, want)
	}

	// Without the ServiceMonitor and without a selector of one's own, the
	// alerts could never fire: rendering fails and says why.
	out, errOut, err := chartHelmRun(t, "template", "k8s-gateway", chartDir, "--namespace", "dns",
		"-f", chartValuesFile(t, "domain: example.com\nprometheusRule: {enabled: true}\n"))
	if err == nil || !strings.Contains(errOut, "set serviceMonitor.enabled too, or prometheusRule.selector") {
		t.Errorf("prometheusRule without serviceMonitor or selector: %v\n%s%s", err, out, errOut)
	}

	// A selector of one's own replaces the ServiceMonitor's job and namespace.
	own := chartHelmOut(t, "template", "k8s-gateway", chartDir, "--namespace", "dns", "--show-only", "templates/prometheusrule.yaml",
		"-f", chartValuesFile(t, "domain: example.com\nprometheusRule: {enabled: true, selector: 'job=\"dns\"'}\n"))
	if strings.Contains(own, "k8s-gateway-metrics") || !strings.Contains(own, `coredns_k8s_gateway_api_last_contact_timestamp_seconds{job="dns"}`) || !strings.Contains(own, `up{job="dns"} == 1`) {
		t.Errorf("prometheusRule.selector not applied:\n%s", own)
	}
}

// dashboardMetric matches the metric names in a PromQL expression.
var dashboardMetric = regexp.MustCompile(`\bcoredns_[a-z0-9_]+\{`)

// TestChartDashboardMetrics: the dashboard of grafanaDashboard.enabled is a
// ConfigMap with the sidecar's label, and every metric its queries name is
// in a live scrape of coredns running the options the panels show.
func TestChartDashboardMetrics(t *testing.T) {
	chartHelm(t)
	m := parseChartManifest(t, chartHelmOut(t, "template", "k8s-gateway", chartDir, "--namespace", "dns",
		"-f", chartValuesFile(t, "domain: example.com\ngrafanaDashboard: {enabled: true, namespace: monitoring}\n")))
	cm := chartGet[struct {
		Metadata struct {
			Namespace string            `json:"namespace"`
			Labels    map[string]string `json:"labels"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}](t, m, "ConfigMap", "k8s-gateway-dashboard")
	if cm.Metadata.Labels["grafana_dashboard"] != "1" || cm.Metadata.Namespace != "monitoring" {
		t.Errorf("dashboard ConfigMap metadata %+v", cm.Metadata)
	}
	var board struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(cm.Data["k8s-gateway.json"]), &board); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	names := map[string][]string{} // metric → panels
	for _, p := range board.Panels {
		for _, target := range p.Targets {
			// As the alerts do: the release's scrape job, not only its namespace
			// (where the cluster's own CoreDNS may run too).
			for _, sel := range regexp.MustCompile(`\b(?:coredns_[a-z0-9_]+|up)\{[^}]*\}`).FindAllString(target.Expr, -1) {
				if !strings.Contains(sel, `job=~"$job"`) {
					t.Errorf("panel %q: %s does not select the job", p.Title, sel)
				}
			}
			for _, m := range dashboardMetric.FindAllString(target.Expr, -1) {
				name := strings.TrimSuffix(m, "{")
				names[name] = append(names[name], p.Title)
			}
		}
	}
	if len(names) < 10 {
		t.Fatalf("the dashboard names %d metrics: %v", len(names), names)
	}

	// coredns with the options the panels show; an object change after the
	// sync, an unhealthy target and a few queries make every series appear.
	port := freePort(t)
	s := startServer(t, "test/e2e/testdata/Corefile.ops", kubeconfig,
		"K8S_GATEWAY_METRICS_PORT="+strconv.Itoa(port), "K8SGW_PERSIST_DIR="+t.TempDir())
	ns := namespace(t)
	ip := "192.0.2.77"
	lbService(t, s, ns, ip)
	// Its only endpoint is not ready: the name is answered fail-open.
	healthSlice(t, ns, "lb-1", "lb", false)
	scrape := ""
	deadline := time.Now().Add(60 * time.Second)
	for {
		s.ask("nothing.example.com.", dns.TypeA)
		scrape = dashboardScrape(t, port)
		var missing []string
		for name := range names {
			if !strings.Contains(scrape, "\n"+name+"{") && !strings.Contains(scrape, "\n"+name+" ") {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			slices.Sort(missing)
			for _, name := range missing {
				t.Errorf("%s (panels %q) is not in the scrape", name, names[name])
			}
			return
		}
		time.Sleep(time.Second)
	}
	t.Logf("the dashboard's %d metrics are all in the scrape", len(names))
}

// dashboardScrape returns the text of /metrics on port, with a leading newline.
func dashboardScrape(t *testing.T, port int) string {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return "\n" + string(body)
}
