//go:build e2e

package e2e

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// chartOpsValues sets every value that extends the pods and the Services.
const chartOpsValues = `domain: example.com
logFormat: json
extraArgs: ["-quiet"]
extraEnv: [{name: TZ, value: UTC}]
extraVolumes: [{name: scratch, emptyDir: {}}]
extraVolumeMounts: [{name: scratch, mountPath: /scratch}]
initContainers: [{name: init, image: registry.example.com/tools:1, command: ["true"]}]
extraContainers: [{name: sidecar, image: registry.example.com/tools:1, command: [sleep, infinity]}]
image: {registry: registry.example.com, repository: dns/k8s-gateway, tag: v1, digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
service: {type: LoadBalancer, nodePort: 30053, externalIPs: [192.0.2.53]}
customLabels: {team: dns}
podLabels: {tier: edge}
strategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 0, maxSurge: 1}}
serviceMonitor:
  enabled: true
  relabelings: [{action: replace, targetLabel: cluster, replacement: east}]
  metricRelabelings: [{action: drop, sourceLabels: [__name__], regex: "go_.*"}]
`

// chartOpsCases: the values that extend the pods and the Services render
// where Kubernetes reads them.
func chartOpsCases() []chartCase {
	return []chartCase{{
		name:   "extensions",
		values: chartOpsValues,
		check:  chartCheckOps,
	}, {
		// A load balancer that reports only a hostname: static addresses
		// answer for the nameserver names and are the glue.
		name: "static-glue",
		values: `domain: example.com
apex: ns1
apexAddresses: [203.0.113.10, "2001:db8::10"]
secondary: ns2
secondaryAddresses: [203.0.113.11]
`,
		check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
			_, opts := cf[0].gateway(t)
			if !slices.Equal(opts["apex"], []string{"ns1", "203.0.113.10", "2001:db8::10"}) || !slices.Equal(opts["secondary"], []string{"ns2", "203.0.113.11"}) {
				t.Errorf("apex %q, secondary %q", opts["apex"], opts["secondary"])
			}
		},
		dns: func(t *testing.T, ns, other string, s *server) {
			s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, expectation{Rcode: "NOERROR",
				Answer: []string{"example.com. 60 IN NS ns1.example.com.", "example.com. 60 IN NS ns2.example.com."},
				Extra:  []string{"ns1.example.com. 60 IN A 203.0.113.10", "ns1.example.com. 60 IN AAAA 2001:db8::10", "ns2.example.com. 60 IN A 203.0.113.11"}})
		},
	}}
}

// TestChartGlueNotes: NOTES.txt warns when an AWS load balancer (which
// reports a hostname) has no apexAddresses, and names the addresses when
// it has.
func TestChartGlueNotes(t *testing.T) {
	chartHelm(t)
	ns := namespace(t)
	for _, c := range []struct{ name, values, want, not string }{
		{"aws", "service: {annotations: {service.beta.kubernetes.io/aws-load-balancer-type: external}}\n",
			"WARNING: an AWS load balancer (NLB, CLB) reports a hostname", "apexAddresses:"},
		{"aws-class", "service: {loadBalancerClass: service.k8s.aws/nlb}\n", "WARNING: an AWS load balancer", ""},
		{"static", "apexAddresses: [203.0.113.10]\nservice: {loadBalancerClass: service.k8s.aws/nlb}\n",
			"The nameserver's addresses are apexAddresses: 203.0.113.10", "WARNING"},
		{"other", "", "the NS name gets no\n   glue: set apexAddresses", "WARNING"},
		// One nameserver, with its trade-off; two, without it.
		{"one-nameserver", "", "That is one nameserver, a single point of failure", ""},
		{"two-nameservers", "secondary: dns2.kube-system\n", "IN NS  dns2.kube-system.example.com.", "single point of failure"},
	} {
		t.Run(c.name, func(t *testing.T) {
			notes, errOut, err := chartHelmRun(t, "install", "notes-"+c.name, chartDir, "--namespace", ns, "--dry-run=server",
				"-f", chartValuesFile(t, "domain: example.com\n"+c.values))
			if err != nil {
				t.Fatalf("helm install --dry-run: %v\n%s", err, errOut)
			}
			if !strings.Contains(notes, c.want) || c.not != "" && strings.Contains(notes, c.not) {
				t.Errorf("NOTES: want %q, not %q:\n%s", c.want, c.not, notes)
			}
		})
	}
}

func chartCheckOps(t *testing.T, ns string, m chartManifest, _ chartCorefile) {
	d := chartGet[appsv1.Deployment](t, m, "Deployment", "")
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	if want := []string{"-conf", "/etc/coredns/Corefile", "-log-format", "json", "-quiet"}; !slices.Equal(c.Args, want) {
		t.Errorf("args %q, want %q", c.Args, want)
	}
	if !slices.Contains(c.Env, corev1.EnvVar{Name: "TZ", Value: "UTC"}) {
		t.Errorf("env %+v: no TZ", c.Env)
	}
	if !slices.ContainsFunc(c.VolumeMounts, func(v corev1.VolumeMount) bool { return v.Name == "scratch" && v.MountPath == "/scratch" }) ||
		!slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == "scratch" && v.EmptyDir != nil }) {
		t.Errorf("volumes %+v, mounts %+v: no scratch", pod.Volumes, c.VolumeMounts)
	}
	if len(pod.InitContainers) != 1 || pod.InitContainers[0].Name != "init" ||
		len(pod.Containers) != 2 || pod.Containers[1].Name != "sidecar" {
		t.Errorf("init containers %+v, containers %+v", pod.InitContainers, pod.Containers)
	}
	if want := "registry.example.com/dns/k8s-gateway@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"; c.Image != want {
		t.Errorf("image %q, want %q: the digest in place of the tag", c.Image, want)
	}
	if d.Spec.Strategy.RollingUpdate == nil || d.Spec.Strategy.RollingUpdate.MaxUnavailable.IntValue() != 0 ||
		d.Spec.Strategy.RollingUpdate.MaxSurge.IntValue() != 1 {
		t.Errorf("strategy %+v", d.Spec.Strategy)
	}
	if l := d.Spec.Template.Labels; l["team"] != "dns" || l["tier"] != "edge" {
		t.Errorf("pod labels %v", l)
	}
	// customLabels on every object; podLabels on the pods only.
	for _, o := range m.objs {
		var meta struct {
			Metadata struct{ Labels map[string]string } `json:"metadata"`
		}
		if err := json.Unmarshal(o.json, &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Metadata.Labels["team"] != "dns" || meta.Metadata.Labels["tier"] != "" {
			t.Errorf("%s/%s labels %v: want team=dns and no tier", o.Kind, o.Name, meta.Metadata.Labels)
		}
	}

	svc := chartGet[corev1.Service](t, m, "Service", "k8s-gateway")
	ports := map[string]int32{}
	for _, p := range svc.Spec.Ports {
		ports[p.Name] = p.NodePort
	}
	if want := map[string]int32{"dns-udp": 30053, "dns-tcp": 30053}; !reflect.DeepEqual(ports, want) {
		t.Errorf("node ports %v, want %v", ports, want)
	}
	// nodePorts per port; its dns before nodePort.
	enc := chartGet[corev1.Service](t, chartRender(t, ns, `domain: example.com
service: {type: NodePort, nodePort: 30053, nodePorts: {dns: 30054, tls: 30853, https: 30443}}
dnsOverTLS: {enabled: true}
dnsOverHTTPS: {enabled: true}
tls: {secretName: k8s-gateway-tls}
`), "Service", "k8s-gateway")
	clear(ports)
	for _, p := range enc.Spec.Ports {
		ports[p.Name] = p.NodePort
	}
	if want := map[string]int32{"dns-udp": 30054, "dns-tcp": 30054, "dns-tls": 30853, "dns-https": 30443}; !reflect.DeepEqual(ports, want) {
		t.Errorf("node ports %v, want %v", ports, want)
	}
	if !slices.Equal(svc.Spec.ExternalIPs, []string{"192.0.2.53"}) {
		t.Errorf("externalIPs %q", svc.Spec.ExternalIPs)
	}

	sm := chartGet[struct {
		Spec struct {
			Endpoints []struct {
				Relabelings       []map[string]any `json:"relabelings"`
				MetricRelabelings []map[string]any `json:"metricRelabelings"`
			} `json:"endpoints"`
		} `json:"spec"`
	}](t, m, "ServiceMonitor", "")
	if e := sm.Spec.Endpoints; len(e) != 1 || len(e[0].Relabelings) != 1 || e[0].Relabelings[0]["targetLabel"] != "cluster" ||
		len(e[0].MetricRelabelings) != 1 || e[0].MetricRelabelings[0]["regex"] != "go_.*" {
		t.Errorf("ServiceMonitor endpoints %+v", e)
	}
}

// TestChartOpsBadValues: the values of other charts that this one names
// differently fail with the name to use; misused new values fail clearly.
func TestChartOpsBadValues(t *testing.T) {
	for _, c := range []struct{ name, values, want string }{
		{"debug", "debug: {enabled: true}\n", "debug is not a value of this chart: add {name: debug} to extraZonePlugins"},
		{"env", "env: [{name: A, value: b}]\n", "env is not a value of this chart: use extraEnv"},
		{"args", "args: [-quiet]\n", "args is not a value of this chart: use extraArgs"},
		{"sidecars", "sidecars: []\n", "sidecars is not a value of this chart: use extraContainers"},
		{"dns-challenge", "dnsChallenge: {enabled: true}\n", "dnsChallenge is not a value of this chart: set acme.enabled"},
		{"log-format", "logFormat: xml\n", "at '/logFormat': value must be one of 'text', 'json'"},
		{"node-port-cluster-ip", "service: {type: ClusterIP, nodePort: 30053}\n", "service.nodePort and service.nodePorts need service.type NodePort or LoadBalancer, not ClusterIP"},
		{"node-port-range", "service: {nodePorts: {dns: 70000}}\n", "at '/service/nodePorts/dns': maximum"},
		{"digest", "image: {digest: latest}\n", "at '/image/digest': 'latest' does not match pattern"},
		{"env-without-name", "extraEnv: [{value: x}]\n", "at '/extraEnv/0': missing property 'name'"},
		{"strategy", "strategy: {type: BlueGreen}\n", "at '/strategy/type': value must be one of 'RollingUpdate', 'Recreate'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, err := chartHelmRun(t, "template", "k8s-gateway", chartDir, "-f", chartValuesFile(t, "domain: example.com\n"+c.values))
			if err == nil {
				t.Fatalf("helm template accepted the values:\n%s", out)
			}
			if !strings.Contains(errOut, c.want) {
				t.Errorf("the error does not say %q:\n%s", c.want, errOut)
			}
		})
	}
}

// chartZoneFileKey returns the ConfigMap key of the zone file filename:
// filename, a dash and ten hex digits of its contents' hash.
func chartZoneFileKey(t *testing.T, data map[string]string, filename string) string {
	t.Helper()
	for k := range data {
		if rest, ok := strings.CutPrefix(k, filename+"-"); ok && regexp.MustCompile(`^[0-9a-f]{10}$`).MatchString(rest) {
			return k
		}
	}
	t.Fatalf("no key for %s in the ConfigMap: %q", filename, slices.Collect(maps.Keys(data)))
	return ""
}

// TestChartZoneFileEdit: a zone file edited through the chart, its SOA
// serial unchanged, is served once the pod's files change: the Corefile
// names the file by a hash of its contents, so the reload plugin loads
// the new Corefile and the file plugin the new contents. The server is not
// restarted.
func TestChartZoneFileEdit(t *testing.T) {
	chartHelm(t)
	ns := namespace(t)
	values := func(addr string) string {
		return `domain: example.com
extraZonePlugins: [{name: errors}, {name: ready, parameters: ":8181"}, {name: reload, parameters: "2s 1s"}]
zoneFiles:
  - filename: db.example.org
    domains: example.org
    contents: |
      $ORIGIN example.org.
      @    60 IN SOA ns1.example.org. hostmaster.example.org. 7 300 60 604800 60
      @    60 IN NS  ns1.example.org.
      ns1  60 IN A   198.51.100.53
      www  60 IN A   ` + addr + "\n"
	}
	data := chartGet[corev1.ConfigMap](t, chartRender(t, ns, values("198.51.100.80")), "ConfigMap", "").Data
	corefile := chartLocalCorefile(t, data)
	dir := filepath.Dir(filepath.Join(repoRoot, corefile))
	s := startServer(t, corefile, kubeconfig)
	s.eventually(t, 5*time.Second, "www.example.org.", dns.TypeA, expectation{
		Rcode: "NOERROR", Answer: []string{"www.example.org. 60 IN A 198.51.100.80"}, Authority: []string{"NS"}})

	// The edit, as kubelet writes a ConfigMap: every key at once. The new
	// Corefile keeps the old one's ports and directories.
	edited := chartGet[corev1.ConfigMap](t, chartRender(t, ns, values("198.51.100.81")), "ConfigMap", "").Data
	if chartZoneFileKey(t, edited, "db.example.org") == chartZoneFileKey(t, data, "db.example.org") {
		t.Fatal("the zone file's key did not change with its contents")
	}
	oldCorefile, err := os.ReadFile(filepath.Join(dir, "Corefile"))
	if err != nil {
		t.Fatal(err)
	}
	newCorefile := strings.ReplaceAll(string(oldCorefile), chartZoneFileKey(t, data, "db.example.org"), chartZoneFileKey(t, edited, "db.example.org"))
	key := chartZoneFileKey(t, edited, "db.example.org")
	if err := os.WriteFile(filepath.Join(dir, key), []byte(edited[key]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Corefile"), []byte(newCorefile), 0o644); err != nil {
		t.Fatal(err)
	}
	d := s.eventually(t, 30*time.Second, "www.example.org.", dns.TypeA, expectation{
		Rcode: "NOERROR", Answer: []string{"www.example.org. 60 IN A 198.51.100.81"}, Authority: []string{"NS"}})
	t.Logf("the edited zone file served %s after the files changed (reload every 2s)", d)
}
