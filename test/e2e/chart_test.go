//go:build e2e

package e2e

// The Helm chart charts/k8s-gateway, tested with the real Helm CLI
// (hack/helm.sh builds it from the Go module proxy and caches it):
//
//   - TestChartValues: helm lint --strict and helm template over a matrix of
//     values, with assertions on the rendered Corefile (parsed with CoreDNS's
//     own Caddyfile parser) and the exact RBAC rules; every rendered manifest
//     applied with kubectl apply --dry-run=server; and every rendered Corefile
//     run with the coredns binary under test (see chartLocalCorefile), which
//     must get ready and answer the zones' NS (and zone files) as rendered.
//   - TestChartBadValues: values.schema.json and the templates reject bad
//     values with a clear message, at helm template and helm install.
//   - TestChartInstallManifestCurrent: examples/install-clusterwide.yml is
//     what `make manifest` renders now, and the API server accepts it.
//   - TestChartInstall: helm install into the test cluster, then coredns runs
//     with the Corefile of the release's ConfigMap and a token of the release's
//     ServiceAccount: every kind syncs (no kind disabled, nothing forbidden) and
//     answers for an Ingress, a LoadBalancer Service, a DNSEndpoint, an
//     HTTPRoute and the NS glue of the release's own Service, which proves the
//     RBAC suffices; kubectl auth can-i --as the ServiceAccount proves it is
//     no broader than list and watch on those kinds. Also with Gateway API
//     only (the Role for the nameserver Service), and the chart README's
//     two-nameserver walk-through (two releases, each the other's secondary).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coredns/caddy/caddyfile"
	"github.com/miekg/dns"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
)

const chartDir = "charts/k8s-gateway"

// ---------------------------------------------------------------- helm ----

var chartHelmBin struct {
	once sync.Once
	path string
	err  error
}

// chartHelm returns the helm binary, building it on first use (minutes, once
// per cache).
func chartHelm(t *testing.T) string {
	t.Helper()
	chartHelmBin.once.Do(func() {
		start := time.Now()
		cmd := exec.Command(filepath.Join(repoRoot, "hack/helm.sh"))
		cmd.Dir, cmd.Stderr = repoRoot, os.Stderr
		out, err := cmd.Output()
		chartHelmBin.path, chartHelmBin.err = strings.TrimSpace(string(out)), err
		if d := time.Since(start); d > 5*time.Second {
			fmt.Fprintf(os.Stderr, "hack/helm.sh built helm in %s\n", d.Round(time.Second))
		}
	})
	if chartHelmBin.err != nil {
		t.Fatalf("hack/helm.sh: %v", chartHelmBin.err)
	}
	return chartHelmBin.path
}

// chartHelmRun runs helm in the repository with private config, cache and data
// directories, against the test cluster.
func chartHelmRun(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(chartHelm(t), args...)
	home, err := os.MkdirTemp("", "k8sgw-helm-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(home)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+home+"/config", "HELM_CACHE_HOME="+home+"/cache", "HELM_DATA_HOME="+home+"/data",
		"KUBECONFIG="+kubeconfig)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

func chartHelmOut(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := chartHelmRun(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// chartValuesFile writes a values file for helm -f.
func chartValuesFile(t *testing.T, values string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ------------------------------------------------------------ manifests ----

// chartManifest is a rendered chart: its objects in order.
type chartManifest struct {
	text string
	objs []chartObject
}

type chartObject struct {
	Kind, Name, Namespace string
	json                  []byte
}

func parseChartManifest(t *testing.T, text string) chartManifest {
	t.Helper()
	m := chartManifest{text: text}
	dec := k8syaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("parsing the rendered manifest: %v\n%s", err, text)
		}
		if len(obj) == 0 {
			continue
		}
		data, _ := json.Marshal(obj)
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name, Namespace string
			} `json:"metadata"`
		}
		json.Unmarshal(data, &meta)
		m.objs = append(m.objs, chartObject{meta.Kind, meta.Metadata.Name, meta.Metadata.Namespace, data})
	}
	return m
}

// kinds lists the objects as Kind/namespace/name, sorted.
func (m chartManifest) kinds() []string {
	var out []string
	for _, o := range m.objs {
		out = append(out, o.Kind+"/"+o.Namespace+"/"+o.Name)
	}
	slices.Sort(out)
	return out
}

// only returns the documents of the given kinds as a multi-document YAML (JSON) stream.
func (m chartManifest) only(kinds ...string) string {
	var b strings.Builder
	for _, o := range m.objs {
		if slices.Contains(kinds, o.Kind) {
			b.WriteString("---\n")
			b.Write(o.json)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// chartGet decodes the one object of kind (and name, when not empty) into T.
func chartGet[T any](t *testing.T, m chartManifest, kind, name string) T {
	t.Helper()
	var found []chartObject
	for _, o := range m.objs {
		if o.Kind == kind && (name == "" || o.Name == name) {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one %s %q in the chartManifest, found %d; objects: %q", kind, name, len(found), m.kinds())
	}
	var v T
	if err := json.Unmarshal(found[0].json, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// chartRuleSet flattens RBAC rules to "group/resource:verbs" strings, sorted, and
// fails on anything but plain resource rules.
func chartRuleSet(t *testing.T, rules []rbacv1.PolicyRule) []string {
	t.Helper()
	var out []string
	for _, r := range rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Errorf("unexpected rule %+v", r)
		}
		verbs := slices.Clone(r.Verbs)
		slices.Sort(verbs)
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				out = append(out, g+"/"+res+":"+strings.Join(verbs, ","))
			}
		}
	}
	slices.Sort(out)
	return out
}

func chartReadOnly(resources ...string) []string {
	var out []string
	for _, r := range resources {
		out = append(out, r+":list,watch")
	}
	slices.Sort(out)
	return out
}

// chartCheckRoles checks the Roles of a manifest: their rules by namespace
// (one Role in each), each bound to the release's ServiceAccount.
func chartCheckRoles(t *testing.T, m chartManifest, ns string, want map[string][]string) {
	t.Helper()
	got := map[string][]string{}
	for _, o := range m.objs {
		one := chartManifest{objs: []chartObject{o}}
		switch o.Kind {
		case "Role":
			r := chartGet[rbacv1.Role](t, one, "Role", "")
			got[r.Namespace] = append(got[r.Namespace], chartRuleSet(t, r.Rules)...)
		case "RoleBinding":
			b := chartGet[rbacv1.RoleBinding](t, one, "RoleBinding", "")
			if b.RoleRef.Kind != "Role" || len(b.Subjects) != 1 || b.Subjects[0] != (rbacv1.Subject{Kind: "ServiceAccount", Name: "k8s-gateway", Namespace: ns}) {
				t.Errorf("RoleBinding %s/%s %+v", b.Namespace, b.Name, b)
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Role rules by namespace:\n got %q\nwant %q", got, want)
	}
}

// ------------------------------------------------------------ Corefile ----

// chartCorefile is a parsed Corefile: its server blocks, each with its keys and,
// per directive, the lines of its tokens (nested blocks included).
type chartCorefile []chartServerBlock

type chartServerBlock struct {
	keys []string
	dirs map[string][][]string
}

func parseChartCorefile(t *testing.T, text string) chartCorefile {
	t.Helper()
	blocks, err := caddyfile.Parse("Corefile", strings.NewReader(text), nil)
	if err != nil {
		t.Fatalf("the rendered Corefile does not parse: %v\n%s", err, text)
	}
	var cf chartCorefile
	for _, b := range blocks {
		sb := chartServerBlock{keys: b.Keys, dirs: map[string][][]string{}}
		for dir, toks := range b.Tokens {
			var lines [][]string
			last := -1
			for _, tok := range toks {
				if tok.Line != last {
					lines = append(lines, nil)
					last = tok.Line
				}
				lines[len(lines)-1] = append(lines[len(lines)-1], tok.Text)
			}
			sb.dirs[dir] = lines
		}
		cf = append(cf, sb)
	}
	return cf
}

func (sb chartServerBlock) directives() []string {
	var out []string
	for d := range sb.dirs {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// gateway returns the zones of the k8s_gateway directive and its options.
func (sb chartServerBlock) gateway(t *testing.T) (zones []string, opts map[string][]string) {
	t.Helper()
	lines := sb.dirs["k8s_gateway"]
	if len(lines) < 2 || lines[0][len(lines[0])-1] != "{" || !slices.Equal(lines[len(lines)-1], []string{"}"}) {
		t.Fatalf("k8s_gateway directive without an option block: %q", lines)
	}
	zones = lines[0][1 : len(lines[0])-1]
	opts = map[string][]string{}
	for _, l := range lines[1 : len(lines)-1] {
		if _, dup := opts[l[0]]; dup {
			t.Errorf("k8s_gateway option %s given twice", l[0])
		}
		opts[l[0]] = l[1:]
	}
	return zones, opts
}

// chartDefaultPlugins are the directives of the chart's default server block.
var chartDefaultPlugins = []string{"errors", "health", "k8s_gateway", "loadbalance", "log", "loop", "prometheus", "ready", "reload"}

var chartAllKinds = []string{"Ingress", "Service", "DNSEndpoint", "HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute"}

// chartLocalCorefile makes a Corefile rendered for a pod runnable by the
// harness's startServer, and returns its path relative to the repository.
// Only what ties it to the pod changes, line by line:
//
//   - server block keys ZONE:1053 listen on ZONE:{$K8S_GATEWAY_PORT}, and each
//     block gets `bind 127.0.0.1`;
//   - `ready ADDR` becomes `ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}` (the port
//     startServer polls); `health` and `prometheus` move to free loopback ports;
//     `lameduck 5s` becomes `lameduck 100ms` (stopping takes no 5 s);
//   - the k8s_gateway block gets `kubeconfig {$KUBECONFIG}` (a ServiceAccount
//     token kubeconfig instead of the pod's in-cluster credentials);
//   - /etc/coredns/ (the ConfigMap's mount) becomes a directory holding the
//     ConfigMap's other keys (the zone files).
//
// Everything else (zones, plugins, every k8s_gateway option) runs as rendered.
func chartLocalCorefile(t *testing.T, data map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for k, v := range data {
		if k != "Corefile" {
			if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out []string
	plugin := func(line string) (indent, name string) {
		trimmed := strings.TrimLeft(line, " \t")
		name, _, _ = strings.Cut(trimmed, " ")
		return line[:len(line)-len(trimmed)], name
	}
	for _, line := range strings.Split(data["Corefile"], "\n") {
		indent, name := plugin(line)
		block := ""
		if strings.HasSuffix(strings.TrimSpace(line), "{") {
			block = " {"
		}
		switch {
		case indent == "" && block != "":
			line = strings.ReplaceAll(line, ":1053", ":{$K8S_GATEWAY_PORT}")
			out = append(out, line, "    bind 127.0.0.1")
			continue
		case name == "ready":
			line = indent + "ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}" + block
		case name == "health" && len(indent) <= 4 || name == "prometheus": // not k8s_gateway's health option
			line = indent + name + " 127.0.0.1:" + strconv.Itoa(freePort(t)) + block
		case name == "lameduck":
			line = indent + "lameduck 100ms"
		case name == "key" && strings.Contains(line, "/etc/k8s-gateway/dnssec/"):
			key, _ := dnssecKey(t, dir) // dnssec.keySecret: a key of the test's own
			line = indent + "key file " + key
		case name == "persist":
			line = indent + "persist " + filepath.Join(dir, "persist")
		case name == "k8s_gateway" && block != "":
			out = append(out, line, indent+"    kubeconfig {$KUBECONFIG}")
			continue
		case name == "kubeconfig" && strings.Contains(line, "/etc/k8s-gateway/clusters/"):
			line = indent + "kubeconfig {$KUBECONFIG}" // fleet.clusters: every cluster is the test cluster
		case name == "cluster" && block == "":
			line += " { kubeconfig {$KUBECONFIG} }"
		case name == "cluster" && strings.Contains(line, "cluster local {"): // fleet.localPriority
			out = append(out, line, indent+"    kubeconfig {$KUBECONFIG}")
			continue
		}
		out = append(out, strings.ReplaceAll(line, "/etc/coredns/", dir+"/"))
	}
	path := filepath.Join(dir, "Corefile")
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(repoRoot, path)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// ---------------------------------------------------------- cluster helpers --

// chartApplyDryRun validates a manifest with the API server (admission, schemas,
// RBAC escalation checks) without persisting it.
func chartApplyDryRun(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := kubectlErr(text, "apply", "--dry-run=server", "-f", "-")
		if err == nil {
			return
		}
		// kubectl may not know a CRD's kind right after it was established.
		if !strings.Contains(out, "no matches for kind") || time.Now().After(deadline) {
			t.Fatalf("kubectl apply --dry-run=server: %v\n%s\nmanifest:\n%s", err, out, text)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

var chartCRDMu sync.Mutex

// chartEnsureCRDs applies the CRD files unless all of crds exist, waits until
// they are established and, with remove, deletes them when the test ends
// (only if this call installed them).
func chartEnsureCRDs(t *testing.T, crds []string, remove bool, files ...string) {
	t.Helper()
	chartCRDMu.Lock()
	defer chartCRDMu.Unlock()
	args := []string{"get"}
	for _, c := range crds {
		args = append(args, "crd/"+c)
	}
	if _, err := kubectlErr("", args...); err == nil {
		return
	}
	for _, f := range files {
		kubectl(t, "", "apply", "--server-side", "--force-conflicts", "-f", f)
	}
	var wait []string
	for _, c := range crds {
		wait = append(wait, "crd/"+c)
	}
	waitEstablished(t, wait...)
	if remove {
		t.Cleanup(func() {
			for _, c := range crds {
				kubectlErr("", "delete", "crd/"+c, "--ignore-not-found", "--wait=true", "--timeout=60s")
			}
		})
	}
}

// chartEnsureGatewayAPI installs the standard Gateway API CRDs of the module the
// plugin is built with, unless they are there (and leaves them, as the
// Gateway API tests do).
func chartEnsureGatewayAPI(t *testing.T) {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/gateway-api: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config/crd/standard")
	var files, crds []string
	for _, r := range []string{"gatewayclasses", "gateways", "listenersets", "httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes"} {
		files = append(files, filepath.Join(dir, "gateway.networking.k8s.io_"+r+".yaml"))
		crds = append(crds, r+".gateway.networking.k8s.io")
	}
	chartEnsureCRDs(t, crds, false, files...)
}

// chartKubectlRetrying retries kubectl while it does not know a new CRD's kind yet.
func chartKubectlRetrying(t *testing.T, stdin string, args ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := kubectlErr(stdin, args...)
		if err == nil {
			return
		}
		if time.Now().After(deadline) || !(strings.Contains(out, "no matches for kind") || strings.Contains(out, "the server doesn't have a resource type")) {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// ---------------------------------------------------------------- values ----

// chartCase is one set of values: what the rendered chart must contain, and
// what the running Corefile must answer.
type chartCase struct {
	name   string
	values string // YAML; {{ns}} is the release namespace, {{other}} the second one
	// otherNamespace creates a second namespace (a secondary elsewhere).
	otherNamespace bool
	check          func(t *testing.T, ns string, m chartManifest, cf chartCorefile)
	// dns queries the running Corefile; default: the NS RRset of example.com.
	dns func(t *testing.T, ns, other string, s *server)
}

func chartCases() []chartCase {
	return slices.Concat(chartCasesBase(), chartViewCases(), chartOpsCases(), chartHiddenPrimaryCases())
}

func chartCasesBase() []chartCase {
	return []chartCase{
		{
			name:   "defaults",
			values: "domain: example.com\n",
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				wantObjects := []string{
					"ClusterRole//k8s-gateway." + ns,
					"ClusterRoleBinding//k8s-gateway." + ns,
					"ConfigMap/" + ns + "/k8s-gateway",
					"Deployment/" + ns + "/k8s-gateway",
					"PodDisruptionBudget/" + ns + "/k8s-gateway",
					"Service/" + ns + "/k8s-gateway",
					"ServiceAccount/" + ns + "/k8s-gateway",
				}
				if got := m.kinds(); !slices.Equal(got, wantObjects) {
					t.Errorf("objects:\n got %q\nwant %q", got, wantObjects)
				}
				if len(cf) != 1 {
					t.Fatalf("want one server block, got %d", len(cf))
				}
				sb := cf[0]
				if !slices.Equal(sb.keys, []string{"example.com:1053"}) {
					t.Errorf("keys %q", sb.keys)
				}
				if got := sb.directives(); !slices.Equal(got, chartDefaultPlugins) {
					t.Errorf("directives:\n got %q\nwant %q", got, chartDefaultPlugins)
				}
				for dir, want := range map[string][][]string{
					"health":     {{"health", ":8080", "{"}, {"lameduck", "5s"}, {"}"}},
					"ready":      {{"ready", ":8181"}},
					"prometheus": {{"prometheus", "0.0.0.0:9153"}},
					"log":        {{"log", "{"}, {"class", "denial", "error"}, {"}"}},
					"errors":     {{"errors"}},
				} {
					if got := sb.dirs[dir]; !reflect.DeepEqual(got, want) {
						t.Errorf("%s: got %q, want %q", dir, got, want)
					}
				}
				zones, opts := sb.gateway(t)
				wantOpts := map[string][]string{"resources": chartAllKinds, "ttl": {"60"}, "apex": {"k8s-gateway." + ns}}
				if !slices.Equal(zones, []string{"example.com"}) || !reflect.DeepEqual(opts, wantOpts) {
					t.Errorf("k8s_gateway %q %q, want example.com %q", zones, opts, wantOpts)
				}

				cr := chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "")
				want := chartReadOnly("/services", "/namespaces", "networking.k8s.io/ingresses", "externaldns.k8s.io/dnsendpoints",
					"gateway.networking.k8s.io/gateways", "gateway.networking.k8s.io/listenersets", "gateway.networking.x-k8s.io/xlistenersets",
					"gateway.networking.k8s.io/httproutes", "gateway.networking.k8s.io/grpcroutes",
					"gateway.networking.k8s.io/tlsroutes", "gateway.networking.k8s.io/tcproutes", "gateway.networking.k8s.io/udproutes")
				if got := chartRuleSet(t, cr.Rules); !slices.Equal(got, want) {
					t.Errorf("ClusterRole rules:\n got %q\nwant %q", got, want)
				}
				crb := chartGet[rbacv1.ClusterRoleBinding](t, m, "ClusterRoleBinding", "")
				if crb.RoleRef.Name != cr.Name || len(crb.Subjects) != 1 || crb.Subjects[0] != (rbacv1.Subject{Kind: "ServiceAccount", Name: "k8s-gateway", Namespace: ns}) {
					t.Errorf("ClusterRoleBinding %+v", crb)
				}

				svc := chartGet[corev1.Service](t, m, "Service", "k8s-gateway")
				if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || len(svc.Spec.Ports) != 2 {
					t.Fatalf("Service spec %+v", svc.Spec)
				}
				for i, proto := range []corev1.Protocol{corev1.ProtocolUDP, corev1.ProtocolTCP} {
					p := svc.Spec.Ports[i]
					if p.Port != 53 || p.Protocol != proto || p.TargetPort.String() != "dns-"+strings.ToLower(string(proto)) {
						t.Errorf("Service port %d: %+v", i, p)
					}
				}

				d := chartGet[appsv1.Deployment](t, m, "Deployment", "k8s-gateway")
				pod := d.Spec.Template.Spec
				c := pod.Containers[0]
				if !slices.Equal(c.Args, []string{"-conf", "/etc/coredns/Corefile"}) {
					t.Errorf("args %q", c.Args)
				}
				// Two pods, spread across nodes where the scheduler can.
				if spread := pod.TopologySpreadConstraints; len(spread) != 1 || spread[0].TopologyKey != "kubernetes.io/hostname" ||
					spread[0].WhenUnsatisfiable != corev1.ScheduleAnyway || !reflect.DeepEqual(spread[0].LabelSelector.MatchLabels, d.Spec.Selector.MatchLabels) {
					t.Errorf("topologySpreadConstraints %+v", spread)
				}
				if pod.ServiceAccountName != "k8s-gateway" || *d.Spec.Replicas != 2 {
					t.Errorf("serviceAccountName %q, replicas %d", pod.ServiceAccountName, *d.Spec.Replicas)
				}
				ports := map[string]string{}
				for _, p := range c.Ports {
					ports[p.Name] = fmt.Sprintf("%d/%s", p.ContainerPort, p.Protocol)
				}
				wantPorts := map[string]string{"dns-udp": "1053/UDP", "dns-tcp": "1053/TCP", "health": "8080/TCP", "ready": "8181/TCP", "metrics": "9153/TCP"}
				if !reflect.DeepEqual(ports, wantPorts) {
					t.Errorf("container ports %v, want %v", ports, wantPorts)
				}
				if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/health" || p.HTTPGet.Port.String() != "health" {
					t.Errorf("livenessProbe %+v", p)
				}
				if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/ready" || p.HTTPGet.Port.String() != "ready" {
					t.Errorf("readinessProbe %+v", p)
				}
				// With reload (the default) a changed Corefile is loaded in
				// place: nothing rolls the pods.
				if sum, ok := d.Spec.Template.Annotations["checksum/config"]; ok {
					t.Errorf("checksum/config annotation %q with the reload plugin", sum)
				}
				// Without reload, a change of the Corefile rolls the pods.
				noReload := "domain: example.com\nextraZonePlugins: [{name: errors}, {name: ready, parameters: ':8181'}, {name: health, parameters: ':8080'}]\n"
				sum := chartGet[appsv1.Deployment](t, chartRender(t, ns, noReload), "Deployment", "").Spec.Template.Annotations["checksum/config"]
				if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(sum) {
					t.Errorf("checksum/config annotation %q without the reload plugin", sum)
				}
				changed := chartGet[appsv1.Deployment](t, chartRender(t, ns, noReload+"ttl: 61\n"), "Deployment", "")
				if changed.Spec.Template.Annotations["checksum/config"] == sum {
					t.Errorf("checksum/config did not change with the Corefile")
				}
				// GOMEMLIMIT is 90% of the memory limit (256Mi); GOGC is Go's own.
				if want := []corev1.EnvVar{{Name: "GOMEMLIMIT", Value: "241591910"}}; !reflect.DeepEqual(c.Env, want) {
					t.Errorf("env %+v, want %+v", c.Env, want)
				}
				sc, psc := c.SecurityContext, pod.SecurityContext
				if sc == nil || psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot ||
					psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault ||
					sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
					sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
					sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
					t.Errorf("security contexts: pod %+v container %+v", psc, sc)
				}
				if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/etc/coredns" ||
					pod.Volumes[0].ConfigMap == nil || pod.Volumes[0].ConfigMap.Name != "k8s-gateway" {
					t.Errorf("config volume %+v %+v", c.VolumeMounts, pod.Volumes)
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, positive("example.com. 60 IN NS k8s-gateway."+ns+".example.com."))
				s.eventually(t, time.Second, "nothing.example.com.", dns.TypeA, nxdomain)
			},
		},
		{
			name: "multiple-zones",
			values: `domain: "example.com  example.org 2.0.192.in-addr.arpa"
ttl: 300
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				zs := []string{"example.com", "example.org", "2.0.192.in-addr.arpa"}
				if len(cf) != 1 || !slices.Equal(cf[0].keys, []string{"example.com:1053", "example.org:1053", "2.0.192.in-addr.arpa:1053"}) {
					t.Fatalf("server blocks %+v", cf)
				}
				zones, opts := cf[0].gateway(t)
				if !slices.Equal(zones, zs) || !slices.Equal(opts["ttl"], []string{"300"}) {
					t.Errorf("k8s_gateway %q %q", zones, opts)
				}
				// The list form renders the same Corefile.
				list := chartGet[corev1.ConfigMap](t, chartRender(t, ns, "domain: [example.com, example.org, 2.0.192.in-addr.arpa]\nttl: 300\n"), "ConfigMap", "")
				if str := chartGet[corev1.ConfigMap](t, m, "ConfigMap", ""); list.Data["Corefile"] != str.Data["Corefile"] {
					t.Errorf("domain as a list:\n%s\nas a string:\n%s", list.Data["Corefile"], str.Data["Corefile"])
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				for _, z := range []string{"example.com.", "example.org."} {
					s.eventually(t, 5*time.Second, z, dns.TypeNS, positive(z+" 300 IN NS k8s-gateway."+ns+"."+z))
				}
				// A reverse zone has no names with addresses: its nameserver is
				// the one in the first forward zone.
				rev := "2.0.192.in-addr.arpa."
				s.eventually(t, 5*time.Second, rev, dns.TypeNS, positive(rev+" 300 IN NS k8s-gateway."+ns+".example.com."))
			},
		},
		{
			// One of two releases serving the same zone: dns1, whose peer is dns2.
			name: "dual-nameserver",
			values: `domain: example.com
fullnameOverride: dns1
secondary: dns2.{{ns}}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				_, opts := cf[0].gateway(t)
				if !slices.Equal(opts["apex"], []string{"dns1." + ns}) || !slices.Equal(opts["secondary"], []string{"dns2." + ns}) {
					t.Errorf("apex %q secondary %q", opts["apex"], opts["secondary"])
				}
				chartGet[corev1.Service](t, m, "Service", "dns1")
				chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "dns1."+ns)
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, positive(
					"example.com. 60 IN NS dns1."+ns+".example.com.", "example.com. 60 IN NS dns2."+ns+".example.com."))
			},
		},
		{
			name: "gateway-api-only",
			values: `domain: example.com
watchedResources: [HTTPRoute, GRPCRoute, TLSRoute]
secondary: peer.{{other}}
`,
			otherNamespace: true,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				_, opts := cf[0].gateway(t)
				if !slices.Equal(opts["resources"], []string{"HTTPRoute", "GRPCRoute", "TLSRoute"}) {
					t.Errorf("resources %q", opts["resources"])
				}
				cr := chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "")
				want := chartReadOnly("/namespaces", "gateway.networking.k8s.io/gateways", "gateway.networking.k8s.io/listenersets",
					"gateway.networking.x-k8s.io/xlistenersets", "gateway.networking.k8s.io/httproutes",
					"gateway.networking.k8s.io/grpcroutes", "gateway.networking.k8s.io/tlsroutes")
				if got := chartRuleSet(t, cr.Rules); !slices.Equal(got, want) {
					t.Errorf("ClusterRole rules:\n got %q\nwant %q", got, want)
				}
				// Services are not watched: a Role in the namespaces of the
				// apex and the secondary gives their glue.
				var roleNS []string
				for _, o := range m.objs {
					switch o.Kind {
					case "Role":
						r := chartGet[rbacv1.Role](t, chartManifest{objs: []chartObject{o}}, "Role", "")
						if got := chartRuleSet(t, r.Rules); !slices.Equal(got, chartReadOnly("/services")) {
							t.Errorf("Role %s/%s rules %q", r.Namespace, r.Name, got)
						}
						roleNS = append(roleNS, r.Namespace)
					case "RoleBinding":
						b := chartGet[rbacv1.RoleBinding](t, chartManifest{objs: []chartObject{o}}, "RoleBinding", "")
						if b.RoleRef.Kind != "Role" || len(b.Subjects) != 1 || b.Subjects[0].Name != "k8s-gateway" || b.Subjects[0].Namespace != ns {
							t.Errorf("RoleBinding %+v", b)
						}
					}
				}
				if len(roleNS) != 2 || roleNS[0] != ns || !strings.HasPrefix(roleNS[1], "e2e-") || roleNS[1] == ns {
					t.Errorf("Roles in namespaces %q, want %s and the secondary's", roleNS, ns)
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, positive(
					"example.com. 60 IN NS k8s-gateway."+ns+".example.com.", "example.com. 60 IN NS peer."+other+".example.com."))
			},
		},
		{
			name: "filters",
			values: `domain: example.com
watchedResources: [Ingress, Service]
fallthrough: {enabled: true, zones: [example.com]}
filters:
  ingressClasses: [nginx, traefik]
  gatewayClasses: [eg]
  namespaces: [{{ns}}, {{other}}]
  labelSelector: "env in (prod, staging),!skip"
  serviceLabelSelectors: [tier=frontend, public=yes]
`,
			otherNamespace: true,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				_, opts := cf[0].gateway(t)
				other := opts["namespaces"][len(opts["namespaces"])-1]
				want := map[string][]string{
					"resources":             {"Ingress", "Service"},
					"ttl":                   {"60"},
					"apex":                  {"k8s-gateway." + ns},
					"fallthrough":           {"example.com"},
					"ingressClasses":        {"nginx", "traefik"},
					"gatewayClasses":        {"eg"},
					"namespaces":            {ns, other},
					"labelSelector":         {"env in (prod, staging),!skip"},
					"serviceLabelSelectors": {"tier=frontend,public=yes"},
				}
				if !reflect.DeepEqual(opts, want) {
					t.Errorf("k8s_gateway options:\n got %q\nwant %q", opts, want)
				}
				// namespaces: a Role in each for the watched kinds; the
				// ClusterRole has only the cluster-scoped IngressClasses, for
				// the default class of ingressClasses.
				cr := chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "")
				if got := chartRuleSet(t, cr.Rules); !slices.Equal(got, chartReadOnly("networking.k8s.io/ingressclasses")) {
					t.Errorf("ClusterRole rules %q", got)
				}
				chartCheckRoles(t, m, ns, map[string][]string{
					ns:    chartReadOnly("/services", "networking.k8s.io/ingresses"),
					other: chartReadOnly("/services", "networking.k8s.io/ingresses"),
				})
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, positive("example.com. 60 IN NS k8s-gateway."+ns+".example.com."))
			},
		},
		{
			name: "namespaces-only",
			values: `domain: example.com
watchedResources: [Service, DNSEndpoint, HTTPRoute]
filters:
  namespaces: [{{other}}]
tenancy:
  events: true
`,
			otherNamespace: true,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				_, opts := cf[0].gateway(t)
				other := opts["namespaces"][0]
				// Nothing cluster-scoped is needed (routes read the listed
				// Namespace by name): no ClusterRole. The release's namespace
				// is not listed: a Role there for the nameserver Service alone.
				for _, o := range m.objs {
					if o.Kind == "ClusterRole" || o.Kind == "ClusterRoleBinding" {
						t.Errorf("a %s with namespaces and nothing cluster-scoped to read", o.Kind)
					}
				}
				rules := append(chartReadOnly("/services", "externaldns.k8s.io/dnsendpoints", "gateway.networking.k8s.io/gateways",
					"gateway.networking.k8s.io/listenersets", "gateway.networking.k8s.io/httproutes", "gateway.networking.x-k8s.io/xlistenersets"),
					"/events:create,patch", "/namespaces:get,watch")
				slices.Sort(rules)
				chartCheckRoles(t, m, ns, map[string][]string{other: rules, ns: chartReadOnly("/services")})
			},
		},
		{
			name: "fleet",
			values: `domain: example.com
watchedResources: [Service]
fleet:
  clusters:
  - {name: prod, kubeconfigSecret: prod-kubeconfig, subdomain: true}
  clusterAPI: {enabled: true, namespaces: ["{{ns}}"]}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "").Data["Corefile"]
				for _, want := range []string{"clusterapi " + ns + "\n", "cluster local\n", "cluster prod {\n", "kubeconfig /etc/k8s-gateway/clusters/prod/value\n", "subdomain\n"} {
					if !strings.Contains(cm, want) {
						t.Errorf("Corefile without %q:\n%s", want, cm)
					}
				}
				pod := chartGet[appsv1.Deployment](t, m, "Deployment", "").Spec.Template.Spec
				if !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
					return v.Name == "kubeconfig-prod" && v.Secret != nil && v.Secret.SecretName == "prod-kubeconfig"
				}) {
					t.Errorf("volumes %+v, want the Secret prod-kubeconfig", pod.Volumes)
				}
				if !slices.ContainsFunc(pod.Containers[0].VolumeMounts, func(vm corev1.VolumeMount) bool {
					return vm.Name == "kubeconfig-prod" && vm.MountPath == "/etc/k8s-gateway/clusters/prod" && vm.ReadOnly
				}) {
					t.Errorf("volume mounts %+v", pod.Containers[0].VolumeMounts)
				}
				role := chartGet[rbacv1.Role](t, m, "Role", "k8s-gateway-clusterapi")
				want := chartReadOnly("cluster.x-k8s.io/clusters", "/secrets")
				slices.Sort(want)
				if got := chartRuleSet(t, role.Rules); role.Namespace != ns || !slices.Equal(got, want) {
					t.Errorf("Role %s/%s rules %q, want %s/%q", role.Namespace, role.Name, got, ns, want)
				}
				cr := chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "")
				if got := chartRuleSet(t, cr.Rules); slices.Contains(got, "/secrets:list,watch") {
					t.Errorf("ClusterRole rules %q grant secrets", got)
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				// Both cluster blocks read the test cluster here: local into the
				// zone, prod under its subdomain.
				lbServiceAt(t, kubeconfig, ns, "web", "", "192.0.2.151")
				for _, name := range []string{"web." + ns + ".example.com.", "web." + ns + ".prod.example.com."} {
					s.eventually(t, 15*time.Second, name, dns.TypeA, positive(name+" 60 IN A 192.0.2.151"))
				}
			},
		},
		{
			name: "fleet-priorities",
			values: `domain: example.com
watchedResources: [Service]
health: {enabled: true}
fleet:
  localPriority: 1
  failover: 30s
  clusters:
  - {name: prod, kubeconfigSecret: prod-kubeconfig, priority: 2}
  clusterAPI: {enabled: true, namespaces: ["{{ns}}"]} # the harness's block kubeconfig needs it
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "").Data["Corefile"]
				for _, want := range []string{"health\n", "failover 30s\n", "cluster local {\n            priority 1\n        }\n", "cluster prod {\n", "priority 2\n"} {
					if !strings.Contains(cm, want) {
						t.Errorf("Corefile without %q:\n%s", want, cm)
					}
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				// Both cluster blocks read the test cluster: local (priority 1) answers.
				lbServiceAt(t, kubeconfig, ns, "web", "", "192.0.2.152")
				name := "web." + ns + ".example.com."
				s.eventually(t, 15*time.Second, name, dns.TypeA, positive(name+" 60 IN A 192.0.2.152"))
			},
		},
		{
			name: "fleet-steering",
			values: `domain: example.com
watchedResources: [Service]
steering: {defaultLocation: continent=EU}
fleet:
  localWeight: 3
  localLocation: continent=EU country=DE
  clusters:
  - {name: prod, kubeconfigSecret: prod-kubeconfig, weight: 1, location: continent=NA country=US}
  clusterAPI: {enabled: true, namespaces: ["{{ns}}"]} # the harness's block kubeconfig needs it
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "").Data["Corefile"]
				for _, want := range []string{"default_location continent=EU\n", "cluster local {\n            weight 3\n            location continent=EU country=DE\n        }\n",
					"cluster prod {\n", "weight 1\n", "location continent=NA country=US\n"} {
					if !strings.Contains(cm, want) {
						t.Errorf("Corefile without %q:\n%s", want, cm)
					}
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				// Both cluster blocks read the test cluster: one address, which both give.
				lbServiceAt(t, kubeconfig, ns, "web", "", "192.0.2.153")
				name := "web." + ns + ".example.com."
				s.eventually(t, 15*time.Second, name, dns.TypeA, positive(name+" 60 IN A 192.0.2.153"))
			},
		},
		{
			name: "tenancy",
			values: `domain: example.com
watchedResources: [Service]
tenancy:
  ownership: delegated
  delegate:
    team-a: [team-a.example.com, shop.example.com]
  events: true
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				_, opts := cf[0].gateway(t)
				want := map[string][]string{
					"resources": {"Service"},
					"ttl":       {"60"},
					"apex":      {"k8s-gateway." + ns},
					"ownership": {"delegated"},
					"delegate":  {"team-a", "team-a.example.com", "shop.example.com"},
					"events":    {},
				}
				if !reflect.DeepEqual(opts, want) {
					t.Errorf("k8s_gateway options:\n got %q\nwant %q", opts, want)
				}
				// Namespaces for their domains, events to tell tenants: nothing more.
				cr := chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "")
				wantRules := append(chartReadOnly("/services", "/namespaces"), "/events:create,patch")
				slices.Sort(wantRules)
				if got := chartRuleSet(t, cr.Rules); !slices.Equal(got, wantRules) {
					t.Errorf("ClusterRole rules %q, want %q", got, wantRules)
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, positive("example.com. 60 IN NS k8s-gateway."+ns+".example.com."))
			},
		},
		{
			name: "health",
			values: `domain: example.com
watchedResources: [Service, Ingress]
health: {enabled: true}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				_, opts := cf[0].gateway(t)
				if _, ok := opts["health"]; !ok {
					t.Errorf("k8s_gateway options %q: no health", opts)
				}
				// EndpointSlices only with health: the one rule it adds.
				cr := chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "")
				want := chartReadOnly("/services", "networking.k8s.io/ingresses", "discovery.k8s.io/endpointslices")
				slices.Sort(want)
				if got := chartRuleSet(t, cr.Rules); !slices.Equal(got, want) {
					t.Errorf("ClusterRole rules %q, want %q", got, want)
				}
				off := chartGet[rbacv1.ClusterRole](t, chartRender(t, ns, "domain: example.com\nwatchedResources: [Service]\n"), "ClusterRole", "")
				if got := chartRuleSet(t, off.Rules); slices.ContainsFunc(got, func(r string) bool { return strings.Contains(r, "endpointslices") }) {
					t.Errorf("EndpointSlices readable without health: %q", got)
				}
			},
		},
		{
			name: "go-runtime-and-multisocket",
			values: `domain: example.com
watchedResources: [Service]
multisocket: 2
goRuntime: {gc: "200"}
resources: {limits: {memory: 1Gi}}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				if got, want := cf[0].dirs["multisocket"], [][]string{{"multisocket", "2"}}; !reflect.DeepEqual(got, want) {
					t.Errorf("multisocket: got %q, want %q", got, want)
				}
				c := chartGet[appsv1.Deployment](t, m, "Deployment", "").Spec.Template.Spec.Containers[0]
				want := []corev1.EnvVar{{Name: "GOMEMLIMIT", Value: "966367641"}, {Name: "GOGC", Value: "200"}}
				if !reflect.DeepEqual(c.Env, want) {
					t.Errorf("env %+v, want %+v", c.Env, want)
				}
				// An explicit GOMEMLIMIT wins; no memory limit, no GOMEMLIMIT.
				c = chartGet[appsv1.Deployment](t, chartRender(t, ns, "domain: example.com\ngoRuntime: {memLimit: 300MiB}\n"), "Deployment", "").Spec.Template.Spec.Containers[0]
				if want := []corev1.EnvVar{{Name: "GOMEMLIMIT", Value: "300MiB"}}; !reflect.DeepEqual(c.Env, want) {
					t.Errorf("env with memLimit %+v, want %+v", c.Env, want)
				}
				c = chartGet[appsv1.Deployment](t, chartRender(t, ns, "domain: example.com\nresources: {limits: null}\n"), "Deployment", "").Spec.Template.Spec.Containers[0]
				if len(c.Env) != 0 {
					t.Errorf("env without a memory limit %+v, want none", c.Env)
				}
			},
		},
		{
			name: "persistence",
			values: `domain: example.com
watchedResources: [Service]
persistence: {enabled: true}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				if _, opts := cf[0].gateway(t); !slices.Equal(opts["persist"], []string{"/var/lib/k8s-gateway"}) {
					t.Errorf("persist option %q, want /var/lib/k8s-gateway", opts["persist"])
				}
				pod := chartGet[appsv1.Deployment](t, m, "Deployment", "").Spec.Template.Spec
				if sc := pod.SecurityContext; sc == nil || sc.FSGroup == nil || *sc.FSGroup != 65532 {
					t.Errorf("pod securityContext %+v, want fsGroup 65532", sc)
				}
				vol := pod.Volumes[slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == "zone-copies" })]
				if vol.EmptyDir == nil || vol.EmptyDir.SizeLimit == nil || vol.EmptyDir.SizeLimit.String() != "64Mi" {
					t.Errorf("volume %+v, want an emptyDir of 64Mi", vol)
				}
				mounts := pod.Containers[0].VolumeMounts
				if !slices.ContainsFunc(mounts, func(vm corev1.VolumeMount) bool {
					return vm.Name == "zone-copies" && vm.MountPath == "/var/lib/k8s-gateway" && !vm.ReadOnly
				}) {
					t.Errorf("volume mounts %+v", mounts)
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, positive("example.com. 60 IN NS k8s-gateway."+ns+".example.com."))
				copyFile := filepath.Join(filepath.Dir(s.corefile), "persist", "example.com.zone")
				for begin := time.Now(); copySerial(t, copyFile) != soaSerial(s); time.Sleep(20 * time.Millisecond) {
					if time.Since(begin) > 10*time.Second {
						t.Fatalf("no copy of the zone's serial %d in %s", soaSerial(s), copyFile)
					}
				}
			},
		},
		{
			name: "persistence-claim",
			values: `domain: example.com
watchedResources: [Service]
podSecurityContext: {runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 2000}
persistence: {enabled: true, mountPath: /data, existingClaim: dns-copies}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				if _, opts := cf[0].gateway(t); !slices.Equal(opts["persist"], []string{"/data"}) {
					t.Errorf("persist option %q, want /data", opts["persist"])
				}
				pod := chartGet[appsv1.Deployment](t, m, "Deployment", "").Spec.Template.Spec
				if sc := pod.SecurityContext; sc == nil || sc.FSGroup == nil || *sc.FSGroup != 2000 {
					t.Errorf("pod securityContext %+v, want the given fsGroup 2000", sc)
				}
				vol := pod.Volumes[slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == "zone-copies" })]
				if vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != "dns-copies" || vol.EmptyDir != nil {
					t.Errorf("volume %+v, want the claim dns-copies", vol)
				}
			},
		},
		{
			name: "zone-files",
			values: `domain: example.com
fallthrough: {enabled: true}
zoneFiles:
  - filename: db.example.com
    domains: example.com
    contents: |
      $ORIGIN example.com.
      @       60 IN SOA k8s-gateway.{{ns}}.example.com. hostmaster.example.com. 1 300 60 604800 60
      @       60 IN NS  k8s-gateway.{{ns}}.example.com.
      static  60 IN A   198.51.100.1
  - filename: db.example.org
    domains: [example.org]
    contents: |
      $ORIGIN example.org.
      @       60 IN SOA ns1.example.org. hostmaster.example.org. 7 300 60 604800 60
      @       60 IN NS  ns1.example.org.
      ns1     60 IN A   198.51.100.53
      www     60 IN A   198.51.100.80
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "")
				// Each file's key is its name and a hash of its contents (see TestChartZoneFileEdit).
				com, org := chartZoneFileKey(t, cm.Data, "db.example.com"), chartZoneFileKey(t, cm.Data, "db.example.org")
				if !strings.Contains(cm.Data[com], "static  60 IN A   198.51.100.1") || !strings.Contains(cm.Data[org], "www     60 IN A   198.51.100.80") {
					t.Errorf("zone files in the ConfigMap: %q", cm.Data)
				}
				if len(cf) != 2 {
					t.Fatalf("want two server blocks, got %d", len(cf))
				}
				// The zone of k8s_gateway: its file after it, for fallthrough.
				if got, want := cf[0].dirs["file"], [][]string{{"file", "/etc/coredns/" + com, "example.com"}}; !reflect.DeepEqual(got, want) {
					t.Errorf("file in the k8s_gateway block: %q, want %q", got, want)
				}
				_, opts := cf[0].gateway(t)
				if got, ok := opts["fallthrough"]; !ok || len(got) != 0 {
					t.Errorf("fallthrough %q (present %v)", got, ok)
				}
				// Another zone: a server block of its own.
				if !slices.Equal(cf[1].keys, []string{"example.org:1053"}) || !slices.Equal(cf[1].directives(), []string{"errors", "file"}) ||
					!reflect.DeepEqual(cf[1].dirs["file"], [][]string{{"file", "/etc/coredns/" + org, "example.org"}}) {
					t.Errorf("zone file server block %+v", cf[1])
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				// The file plugin puts the zone's NS in the authority section.
				s.eventually(t, 5*time.Second, "static.example.com.", dns.TypeA, expectation{
					Rcode: "NOERROR", Answer: []string{"static.example.com. 60 IN A 198.51.100.1"}, Authority: []string{"NS"}})
				s.eventually(t, time.Second, "www.example.org.", dns.TypeA, expectation{
					Rcode: "NOERROR", Answer: []string{"www.example.org. 60 IN A 198.51.100.80"}, Authority: []string{"NS"}})
				s.eventually(t, time.Second, "example.com.", dns.TypeNS, positive("example.com. 60 IN NS k8s-gateway."+ns+".example.com."))
			},
		},
		{
			name: "replicas-pdb-scheduling",
			values: `domain: example.com
replicaCount: 2
priorityClassName: system-cluster-critical
nodeSelector: {kubernetes.io/os: linux}
tolerations: [{key: CriticalAddonsOnly, operator: Exists}]
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: ScheduleAnyway
    labelSelector: {matchLabels: {app.kubernetes.io/instance: "{{ .Release.Name }}"}}
imagePullSecrets: [{name: registry}]
image: {registry: registry.example.com, repository: dns/k8s-gateway, tag: v9.9.9}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				d := chartGet[appsv1.Deployment](t, m, "Deployment", "")
				pdb := chartGet[policyv1.PodDisruptionBudget](t, m, "PodDisruptionBudget", "k8s-gateway")
				if *d.Spec.Replicas != 2 || pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 ||
					!reflect.DeepEqual(pdb.Spec.Selector.MatchLabels, d.Spec.Selector.MatchLabels) {
					t.Errorf("replicas %d, PDB %+v", *d.Spec.Replicas, pdb.Spec)
				}
				pod := d.Spec.Template.Spec
				if pod.PriorityClassName != "system-cluster-critical" || pod.NodeSelector["kubernetes.io/os"] != "linux" ||
					len(pod.Tolerations) != 1 || len(pod.ImagePullSecrets) != 1 ||
					pod.Containers[0].Image != "registry.example.com/dns/k8s-gateway:v9.9.9" ||
					len(pod.TopologySpreadConstraints) != 1 ||
					pod.TopologySpreadConstraints[0].LabelSelector.MatchLabels["app.kubernetes.io/instance"] != "k8s-gateway" {
					t.Errorf("pod spec %+v", pod)
				}
			},
		},
		{
			name: "service-options",
			values: `domain: example.com
service:
  useTcp: false
  loadBalancerClass: example.com/lb
  externalTrafficPolicy: Local
  ipFamilyPolicy: PreferDualStack
  annotations: {example.com/owner: dns-team}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				svc := chartGet[corev1.Service](t, m, "Service", "")
				if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Protocol != corev1.ProtocolUDP ||
					svc.Spec.LoadBalancerClass == nil || *svc.Spec.LoadBalancerClass != "example.com/lb" ||
					svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal ||
					svc.Annotations["example.com/owner"] != "dns-team" {
					t.Errorf("Service %+v %+v", svc.ObjectMeta, svc.Spec)
				}
			},
		},
		{
			name:   "servicemonitor",
			values: "domain: example.com\nserviceMonitor: {enabled: true, labels: {release: prometheus}}\n",
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				sm := chartGet[map[string]any](t, m, "ServiceMonitor", "k8s-gateway")
				metrics := chartGet[corev1.Service](t, m, "Service", "k8s-gateway-metrics")
				spec := sm["spec"].(map[string]any)
				ep := spec["endpoints"].([]any)[0].(map[string]any)
				sel := spec["selector"].(map[string]any)["matchLabels"].(map[string]any)
				for k, v := range sel {
					if metrics.Labels[k] != v {
						t.Errorf("ServiceMonitor selects %s=%v, the metrics Service has %q", k, v, metrics.Labels[k])
					}
				}
				if ep["port"] != "metrics" || metrics.Spec.Type != corev1.ServiceTypeClusterIP ||
					metrics.Spec.Ports[0].Name != "metrics" || metrics.Spec.Ports[0].Port != 9153 ||
					sm["metadata"].(map[string]any)["labels"].(map[string]any)["release"] != "prometheus" {
					t.Errorf("ServiceMonitor %v, metrics Service %+v", sm, metrics.Spec)
				}
				// The DNS Service does not expose the metrics.
				if svc := chartGet[corev1.Service](t, m, "Service", "k8s-gateway"); len(svc.Spec.Ports) != 2 {
					t.Errorf("DNS Service ports %+v", svc.Spec.Ports)
				}
			},
		},
		{
			// A catalog zone of the zones: a key of the server block, and
			// the option; the running Corefile answers the catalog's SOA.
			name:   "catalog",
			values: "domain: example.com example.org\ncatalog: {zone: catalog.invalid, group: blue}\n",
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				sb := cf[0]
				if !slices.Contains(sb.keys, "catalog.invalid:1053") {
					t.Errorf("keys %q: no catalog.invalid:1053", sb.keys)
				}
				if _, opts := sb.gateway(t); !slices.Equal(opts["catalog"], []string{"catalog.invalid", "group", "blue"}) {
					t.Errorf("catalog option %q", opts["catalog"])
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				s.eventually(t, 5*time.Second, "version.catalog.invalid.", dns.TypeTXT, positive(`version.catalog.invalid. 60 IN TXT "2"`))
			},
		},
	}
}

// chartRender renders the chart as release k8s-gateway in ns.
func chartRender(t *testing.T, ns, values string) chartManifest {
	t.Helper()
	return parseChartManifest(t, chartHelmOut(t, "template", "k8s-gateway", chartDir, "--namespace", ns, "-f", chartValuesFile(t, values)))
}

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

// TestChartInstallManifestCurrent: examples/install-clusterwide.yml is what
// `make manifest` renders from the chart now, and the API server takes it.
func TestChartInstallManifestCurrent(t *testing.T) {
	chartHelm(t)
	const path = "examples/install-clusterwide.yml"
	tmp := filepath.Join(t.TempDir(), "install-clusterwide.yml")
	cmd := exec.Command("make", "--no-print-directory", "-s", "manifest", "MANIFEST="+tmp)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make manifest: %v\n%s", err, out)
	}
	got, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatalf("%v (generate it with make chartManifest)", err)
	}
	if !bytes.Equal(got, have) {
		gl, hl := strings.Split(string(got), "\n"), strings.Split(string(have), "\n")
		i := 0
		for i < len(gl) && i < len(hl) && gl[i] == hl[i] {
			i++
		}
		at := func(l []string) string {
			if i < len(l) {
				return l[i]
			}
			return "<end of file>"
		}
		t.Fatalf("%s is stale: run make chartManifest (line %d is %q, the chart renders %q)", path, i+1, at(hl), at(gl))
	}
	m := parseChartManifest(t, string(have))
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Service", "Deployment"} {
		chartGet[map[string]any](t, m, kind, "")
	}
	cf := parseChartCorefile(t, chartGet[corev1.ConfigMap](t, m, "ConfigMap", "").Data["Corefile"])
	if _, opts := cf[0].gateway(t); !slices.Equal(cf[0].keys, []string{"example.com:1053"}) || !slices.Equal(opts["apex"], []string{"k8s-gateway.kube-system"}) {
		t.Errorf("install chartManifest Corefile: %+v", cf)
	}
	chartApplyDryRun(t, m.text)
}

// chartCanI asks the API server whether sa may verb resource (scope: -n NS or -A).
func chartCanI(t *testing.T, sa, verb, resource string, scope ...string) string {
	t.Helper()
	out, _ := kubectlErr("", append([]string{"auth", "can-i", verb, resource, "--as", sa}, scope...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1]) // after warnings about unknown types
}

// chartCheckPermissions proves the ServiceAccount may list and watch exactly
// readable (in namespace ns, which includes its cluster-wide rights), and do
// nothing else: `kubectl auth can-i --list` shows no other resource rule than
// the ones every authenticated user has, and spot checks of what a
// compromised DNS server would want are all "no".
func chartCheckPermissions(t *testing.T, sa, ns string, readable []string) {
	t.Helper()
	out := kubectl(t, "", "auth", "can-i", "--list", "--as", sa, "-n", ns)
	// What every authenticated user may do: system:basic-user and
	// system:cluster-trust-bundle-discovery (bound to system:authenticated).
	everyone := map[string]string{
		"selfsubjectreviews.authentication.k8s.io":      "[create]",
		"selfsubjectaccessreviews.authorization.k8s.io": "[create]",
		"selfsubjectrulesreviews.authorization.k8s.io":  "[create]",
		"clustertrustbundles.certificates.k8s.io":       "[get list watch]",
	}
	row := regexp.MustCompile(`^(\S*)\s+.*?(\[[^\]]*\])\s*$`)
	var got []string
	for _, line := range strings.Split(out, "\n")[1:] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		m := row.FindStringSubmatch(line)
		switch {
		case m == nil:
			t.Errorf("can-i --list: cannot read %q", line)
		case m[1] == "": // non-resource URLs (discovery, health): get only
			if m[2] != "[get]" {
				t.Errorf("can-i --list: non-resource rule %q", line)
			}
		case everyone[m[1]] == m[2]:
		case m[2] == "[list watch]":
			got = append(got, m[1])
		default:
			t.Errorf("can-i --list: rule beyond list/watch: %q", line)
		}
	}
	slices.Sort(got)
	got = slices.Compact(got)
	want := slices.Sorted(slices.Values(readable))
	if !slices.Equal(got, want) {
		t.Errorf("can-i --list -n %s: list/watch on\n got %q\nwant %q\n%s", ns, got, want, out)
	}

	// Four kubectl processes at a time.
	var wg sync.WaitGroup
	limit := make(chan struct{}, 4)
	for _, c := range []struct{ verb, resource string }{
		{"get", "secrets"}, {"list", "secrets"}, {"watch", "secrets"}, {"list", "configmaps"},
		{"get", "services"}, {"update", "services"}, {"patch", "services"}, {"delete", "services"},
		{"patch", "services/status"}, {"update", "services/status"},
		{"patch", "ingresses.networking.k8s.io/status"}, {"update", "httproutes.gateway.networking.k8s.io/status"},
		{"patch", "gateways.gateway.networking.k8s.io/status"}, {"delete", "ingresses.networking.k8s.io"},
		{"create", "configmaps"}, {"create", "pods"}, {"create", "services"}, {"create", "serviceaccounts/token"},
		{"create", "dnsendpoints.externaldns.k8s.io"}, {"create", "*"}, {"*", "*"},
		{"list", "customresourcedefinitions.apiextensions.k8s.io"}, {"list", "endpointslices.discovery.k8s.io"},
		{"list", "nodes"}, {"list", "pods"},
	} {
		for _, scope := range [][]string{{"-n", ns}, {"-A"}} {
			wg.Add(1)
			limit <- struct{}{}
			go func() {
				defer func() { <-limit; wg.Done() }()
				if got := chartCanI(t, sa, c.verb, c.resource, scope...); got != "no" {
					t.Errorf("can-i %s %s %s: %q, want no", c.verb, c.resource, strings.Join(scope, " "), got)
				}
			}()
		}
	}
	wg.Wait()
}

// chartGatewayAPIObjects creates a GatewayClass, a Gateway whose address is addr and
// an HTTPRoute for host attached to it, accepted, as a Gateway controller would.
func chartGatewayAPIObjects(t *testing.T, ns, host, addr string) {
	t.Helper()
	class := "chart-" + ns
	chartKubectlRetrying(t, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: %[2]s}
spec: {controllerName: example.com/chart-e2e}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: %[2]s
  listeners:
  - {name: http, protocol: HTTP, port: 80, hostname: "*.example.com", allowedRoutes: {namespaces: {from: Same}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route, namespace: %[1]s}
spec:
  parentRefs: [{name: gw}]
  hostnames: [%[3]s]
`, ns, class, host), "apply", "-f", "-")
	t.Cleanup(func() { kubectlErr("", "delete", "gatewayclass", class, "--ignore-not-found", "--wait=false") })
	kubectl(t, "", "-n", ns, "patch", "gateways.gateway.networking.k8s.io", "gw", "--subresource=status", "--type=merge",
		"-p", fmt.Sprintf(`{"status":{"addresses":[{"type":"IPAddress","value":%q}]}}`, addr))
	now := time.Now().UTC().Format(time.RFC3339)
	kubectl(t, "", "-n", ns, "patch", "httproutes.gateway.networking.k8s.io", "route", "--subresource=status", "--type=merge",
		"-p", fmt.Sprintf(`{"status":{"parents":[{"parentRef":{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw"},
"controllerName":"example.com/chart-e2e","conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"chart e2e",
"lastTransitionTime":%q,"observedGeneration":1}]}]}}`, now))
}

// TestChartInstall installs the chart with helm and runs the plugin with the
// release's Corefile as the release's ServiceAccount: its RBAC must be
// enough for every watched kind (nothing disabled or forbidden, answers for
// each kind and the NS glue of the release's Service) and no broader.
func TestChartInstall(t *testing.T) {
	chartHelm(t)
	chartEnsureGatewayAPI(t)
	chartEnsureCRDs(t, []string{"dnsendpoints.externaldns.k8s.io"}, true, filepath.Join(repoRoot, "test/e2e/testdata/dnsendpoint-crd.yaml"))

	// install installs release (fullname name) in ns and runs its Corefile
	// as its ServiceAccount.
	install := func(t *testing.T, ns, release, name, values string) *server {
		t.Helper()
		start := time.Now()
		notes := chartHelmOut(t, "install", release, chartDir, "--namespace", ns, "-f", chartValuesFile(t, values))
		t.Cleanup(func() { chartHelmRun(t, "uninstall", release, "--namespace", ns) })
		// NOTES.txt shows the delegation records.
		if !strings.Contains(notes, " IN NS  "+name+"."+ns+".") {
			t.Errorf("helm install printed no NS record for %s.%s:\n%s", name, ns, notes)
		}
		var cm corev1.ConfigMap
		if err := json.Unmarshal([]byte(kubectl(t, "", "-n", ns, "get", "configmap", name, "-o", "json")), &cm); err != nil {
			t.Fatal(err)
		}
		t.Logf("helm install %s in %s; Corefile:\n%s", release, time.Since(start).Round(time.Millisecond), cm.Data["Corefile"])
		s := startServer(t, chartLocalCorefile(t, cm.Data), tokenKubeconfig(t, ns, name))
		t.Logf("plugin ready as the ServiceAccount %s %s after helm install", name, time.Since(start).Round(time.Millisecond))
		out := s.output()
		for _, bad := range []string{"disabled", "forbidden", "Forbidden", "Unauthorized"} {
			if strings.Contains(out, bad) {
				t.Errorf("the plugin logged %q: the chart's RBAC does not cover a watched kind:\n%s", bad, out)
			}
		}
		return s
	}

	t.Run("all-kinds", func(t *testing.T) {
		ns := namespace(t)
		s := install(t, ns, "k8s-gateway", "k8s-gateway", "domain: example.com\nttl: 30\n")
		chartCheckPermissions(t, "system:serviceaccount:"+ns+":k8s-gateway", ns, []string{
			"services", "namespaces", "ingresses.networking.k8s.io", "dnsendpoints.externaldns.k8s.io",
			"gateways.gateway.networking.k8s.io", "httproutes.gateway.networking.k8s.io", "grpcroutes.gateway.networking.k8s.io",
			"tlsroutes.gateway.networking.k8s.io", "tcproutes.gateway.networking.k8s.io", "udproutes.gateway.networking.k8s.io",
			"listenersets.gateway.networking.k8s.io", "xlistenersets.gateway.networking.x-k8s.io",
		})

		kubectl(t, fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: %[1]s}
spec: {rules: [{host: web.%[1]s.example.com}]}
---
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: %[1]s}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, ns), "apply", "-f", "-")
		chartKubectlRetrying(t, fmt.Sprintf(`
apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata: {name: ep, namespace: %[1]s}
spec:
  endpoints: [{dnsName: ep.%[1]s.example.com, recordType: A, targets: [192.0.2.73]}]
`, ns), "apply", "-f", "-")
		route := "route." + ns + ".example.com"
		chartGatewayAPIObjects(t, ns, route, "192.0.2.74")
		setLBStatus(t, ns, "service", "k8s-gateway", "192.0.2.70")
		setLBStatus(t, ns, "ingress", "web", "192.0.2.71")
		setLBStatus(t, ns, "service", "lb", "192.0.2.72")

		web, lb, ep, nsName := "web."+ns+".example.com.", "lb."+ns+".example.com.", "ep."+ns+".example.com.", "k8s-gateway."+ns+".example.com."
		d := s.eventually(t, 5*time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.71"))
		s.eventually(t, 5*time.Second, lb, dns.TypeA, positive(lb+" 30 IN A 192.0.2.72"))
		s.eventually(t, 5*time.Second, ep, dns.TypeA, positive(ep+" 30 IN A 192.0.2.73"))
		s.eventually(t, 5*time.Second, route+".", dns.TypeA, positive(route+". 30 IN A 192.0.2.74"))
		s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, expectation{
			Rcode:  "NOERROR",
			Answer: []string{"example.com. 30 IN NS " + nsName},
			Extra:  []string{nsName + " 30 IN A 192.0.2.70"},
		})
		t.Logf("Ingress status → answer in %s", d)
	})

	t.Run("gateway-api-only", func(t *testing.T) {
		ns := namespace(t)
		s := install(t, ns, "k8s-gateway", "k8s-gateway", "domain: example.com\nttl: 30\nwatchedResources: [HTTPRoute]\n")
		// Cluster-wide: gateways, httproutes and namespaces; in the release's
		// namespace also services (the Role for the nameserver Service).
		sa := "system:serviceaccount:" + ns + ":k8s-gateway"
		chartCheckPermissions(t, sa, ns, []string{
			"services", "namespaces", "gateways.gateway.networking.k8s.io", "httproutes.gateway.networking.k8s.io",
			"listenersets.gateway.networking.k8s.io", "xlistenersets.gateway.networking.x-k8s.io",
		})
		for _, c := range []struct{ verb, resource, scope, want string }{
			{"list", "services", "-A", "no"},
			{"watch", "services", "-A", "no"},
			{"list", "ingresses.networking.k8s.io", "-A", "no"},
			{"list", "tlsroutes.gateway.networking.k8s.io", "-A", "no"},
			{"list", "httproutes.gateway.networking.k8s.io", "-A", "yes"},
		} {
			if got := chartCanI(t, sa, c.verb, c.resource, c.scope); got != c.want {
				t.Errorf("can-i %s %s %s: %q, want %s", c.verb, c.resource, c.scope, got, c.want)
			}
		}

		kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: %[1]s}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, ns), "apply", "-f", "-")
		route := "route." + ns + ".example.com"
		chartGatewayAPIObjects(t, ns, route, "192.0.2.84")
		setLBStatus(t, ns, "service", "k8s-gateway", "192.0.2.80")
		setLBStatus(t, ns, "service", "lb", "192.0.2.82")

		nsName := "k8s-gateway." + ns + ".example.com."
		s.eventually(t, 5*time.Second, route+".", dns.TypeA, positive(route+". 30 IN A 192.0.2.84"))
		s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, expectation{
			Rcode:  "NOERROR",
			Answer: []string{"example.com. 30 IN NS " + nsName},
			Extra:  []string{nsName + " 30 IN A 192.0.2.80"},
		})
		// Services are not published, only the nameserver's own.
		s.eventually(t, time.Second, "lb."+ns+".example.com.", dns.TypeA, nxdomain)
	})
	// filters.ingressClasses: the ClusterRole gains ingressclasses, and the
	// plugin, as the release's ServiceAccount, publishes a class-less Ingress
	// under the default IngressClass.
	t.Run("ingress-classes", func(t *testing.T) {
		ns := namespace(t)
		class := "e2e-" + ns
		s := install(t, ns, "k8s-gateway", "k8s-gateway", fmt.Sprintf("domain: example.com\nttl: 30\nwatchedResources: [Ingress, Service]\nfilters: {ingressClasses: [%s]}\n", class))
		chartCheckPermissions(t, "system:serviceaccount:"+ns+":k8s-gateway", ns, []string{
			"services", "ingresses.networking.k8s.io", "ingressclasses.networking.k8s.io",
		})
		kubectl(t, fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: %[1]s}
spec: {rules: [{host: web.%[1]s.example.com}]}
`, ns), "apply", "-f", "-")
		setLBStatus(t, ns, "ingress", "web", "192.0.2.75")
		web := "web." + ns + ".example.com."
		s.eventually(t, 5*time.Second, web, dns.TypeA, nxdomain)
		kubectl(t, fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: %s
  annotations: {ingressclass.kubernetes.io/is-default-class: "true"}
spec: {controller: example.com/ingress}
`, class), "apply", "-f", "-")
		t.Cleanup(func() { kubectlErr("", "delete", "ingressclass", class) })
		s.eventually(t, 5*time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.75"))
	})
	// The chart README's walk-through: two releases, each the other's
	// secondary; each answers both NS records with both glue records.
	t.Run("dual-nameserver", func(t *testing.T) {
		ns := namespace(t)
		zone := "k8s.example.com."
		servers := map[string]*server{}
		for _, pair := range [][2]string{{"dns1", "dns2"}, {"dns2", "dns1"}} {
			servers[pair[0]] = install(t, ns, pair[0], pair[0], fmt.Sprintf("domain: k8s.example.com\nfullnameOverride: %s\nsecondary: %s.%s\n", pair[0], pair[1], ns))
		}
		setLBStatus(t, ns, "service", "dns1", "203.0.113.10")
		setLBStatus(t, ns, "service", "dns2", "203.0.113.20")
		ns1, ns2 := "dns1."+ns+"."+zone, "dns2."+ns+"."+zone
		for name, s := range servers {
			s.eventually(t, 5*time.Second, zone, dns.TypeNS, expectation{
				Rcode:  "NOERROR",
				Answer: []string{zone + " 60 IN NS " + ns1, zone + " 60 IN NS " + ns2},
				Extra:  []string{ns1 + " 60 IN A 203.0.113.10", ns2 + " 60 IN A 203.0.113.20"},
			})
			r, err := s.query(zone, dns.TypeSOA)
			if err != nil || len(r.Answer) != 1 || strings.Fields(r.Answer[0])[4] != name+"."+ns+"."+zone {
				t.Errorf("%s: SOA %v %v, want MNAME %s.%s.%s", name, r, err, name, ns, zone)
			}
		}
	})
}
