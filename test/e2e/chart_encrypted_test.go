//go:build e2e

package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// TestChartEncryptedAutoscaled: the chart with DNS over TLS and HTTPS (a
// cert-manager Certificate for the Secret), on Service ports of its own, and
// the HorizontalPodAutoscaler. The manifest is what it must be and the API
// server accepts it (a stand-in for cert-manager's CRD); the rendered
// Corefile runs with a certificate of a CA made here and answers the same
// over plain DNS, DoT (checked with this test's client and with kdig) and
// DoH, the certificate verified.
func TestChartEncryptedAutoscaled(t *testing.T) {
	chartHelm(t)
	ns := namespace(t)
	const values = `domain: example.com
dnsOverTLS: {enabled: true, port: 8853}
dnsOverHTTPS: {enabled: true, port: 8443}
tls:
  certManager: {enabled: true, issuerRef: {name: dns-ca, kind: ClusterIssuer}, renewBefore: 720h}
autoscaling: {enabled: true, minReplicas: 2, maxReplicas: 4, targetCPUUtilizationPercentage: 60}
`
	vf := chartValuesFile(t, values)
	if out := chartHelmOut(t, "lint", "--strict", chartDir, "--namespace", ns, "-f", vf); !strings.Contains(out, "0 chart(s) failed") {
		t.Errorf("helm lint --strict:\n%s", out)
	}
	m := chartRender(t, ns, values)
	nsName := "k8s-gateway." + ns + ".example.com"

	d := chartGet[appsv1.Deployment](t, m, "Deployment", "")
	if d.Spec.Replicas != nil {
		t.Errorf("Deployment replicas %d: with autoscaling the HPA owns them", *d.Spec.Replicas)
	}
	hpa := chartGet[autoscalingv2.HorizontalPodAutoscaler](t, m, "HorizontalPodAutoscaler", "k8s-gateway")
	if hpa.Spec.ScaleTargetRef != (autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name}) ||
		hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas != 2 || hpa.Spec.MaxReplicas != 4 || len(hpa.Spec.Metrics) != 1 ||
		hpa.Spec.Metrics[0].Resource == nil || hpa.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU ||
		*hpa.Spec.Metrics[0].Resource.Target.AverageUtilization != 60 {
		t.Errorf("HPA %+v", hpa.Spec)
	}
	pdb := chartGet[policyv1.PodDisruptionBudget](t, m, "PodDisruptionBudget", "k8s-gateway")
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 {
		t.Errorf("PDB %+v: want minAvailable 1 for at least 2 pods", pdb.Spec)
	}

	svc := chartGet[corev1.Service](t, m, "Service", "")
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, p.Name+":"+string(p.Protocol)+":"+strconv.Itoa(int(p.Port))+">"+p.TargetPort.String())
	}
	if want := []string{"dns-udp:UDP:53>dns-udp", "dns-tcp:TCP:53>dns-tcp", "dns-tls:TCP:8853>dns-tls", "dns-https:TCP:8443>dns-https"}; !slices.Equal(ports, want) {
		t.Errorf("Service ports %q, want %q", ports, want)
	}
	c := d.Spec.Template.Spec.Containers[0]
	var cports []string
	for _, p := range c.Ports {
		cports = append(cports, p.Name+":"+strconv.Itoa(int(p.ContainerPort)))
	}
	if !slices.Contains(cports, "dns-tls:8853") || !slices.Contains(cports, "dns-https:8443") {
		t.Errorf("container ports %q", cports)
	}
	mounted := slices.ContainsFunc(c.VolumeMounts, func(v corev1.VolumeMount) bool {
		return v.Name == "tls" && v.MountPath == "/etc/k8s-gateway/tls" && v.ReadOnly
	})
	secret := slices.ContainsFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Name == "tls" && v.Secret != nil && v.Secret.SecretName == "k8s-gateway-tls"
	})
	if !mounted || !secret {
		t.Errorf("the Secret k8s-gateway-tls is not mounted read-only at /etc/k8s-gateway/tls: %+v %+v", c.VolumeMounts, d.Spec.Template.Spec.Volumes)
	}
	cert := chartGet[map[string]any](t, m, "Certificate", "k8s-gateway")
	spec, _ := cert["spec"].(map[string]any)
	if spec["secretName"] != "k8s-gateway-tls" || !reflect.DeepEqual(spec["dnsNames"], []any{nsName}) ||
		!reflect.DeepEqual(spec["issuerRef"], map[string]any{"name": "dns-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}) ||
		spec["renewBefore"] != "720h" {
		t.Errorf("Certificate %v", spec)
	}
	cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "")
	cf := parseChartCorefile(t, cm.Data["Corefile"])
	if want := []string{"example.com:1053", "tls://example.com:8853", "https://example.com:8443"}; len(cf) != 1 || !slices.Equal(cf[0].keys, want) {
		t.Fatalf("server blocks %+v, want one with keys %q", cf, want)
	}
	if got := cf[0].dirs["tls"]; !reflect.DeepEqual(got, [][]string{{"tls", "/etc/k8s-gateway/tls/tls.crt", "/etc/k8s-gateway/tls/tls.key"}}) {
		t.Errorf("tls directive %q", got)
	}
	// The plugin serves the certificate the files hold now (tls_reload).
	if _, opts := cf[0].gateway(t); !slices.Equal(opts["tls_reload"], []string{"/etc/k8s-gateway/tls/tls.crt", "/etc/k8s-gateway/tls/tls.key"}) {
		t.Errorf("k8s_gateway tls_reload %q", opts["tls_reload"])
	}

	chartEnsureCRDs(t, []string{"certificates.cert-manager.io"}, true, filepath.Join(repoRoot, "test/e2e/testdata/certificate-crd.yaml"))
	chartApplyDryRun(t, m.text)

	// Without autoscaling the Deployment has its replicas again; with one
	// pod at least, there is no PodDisruptionBudget (it would block drains).
	one := chartRender(t, ns, "domain: example.com\nautoscaling: {enabled: true, minReplicas: 1}\n")
	if slices.ContainsFunc(one.objs, func(o chartObject) bool { return o.Kind == "PodDisruptionBudget" }) {
		t.Errorf("autoscaling with minReplicas 1 rendered a PodDisruptionBudget")
	}

	// The Corefile as rendered, on loopback ports, with the test CA's certificate.
	ca, err := harness.NewTestCA([]string{nsName}, []net.IP{net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"tls.crt": ca.ServerCertPEM, "tls.key": ca.ServerKeyPEM, "ca.crt": ca.CertPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	data := map[string]string{"Corefile": strings.NewReplacer(
		"tls://example.com:8853", "tls://example.com:{$K8SGW_DOT_PORT}",
		"https://example.com:8443", "https://example.com:{$K8SGW_DOH_PORT}",
		"/etc/k8s-gateway/tls/", dir+"/").Replace(cm.Data["Corefile"])}
	dot, doh := freePort(t), freePort(t)
	s := startServer(t, chartLocalCorefile(t, data), kubeconfig, "K8SGW_DOT_PORT="+strconv.Itoa(dot), "K8SGW_DOH_PORT="+strconv.Itoa(doh))

	kubectl(t, `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: `+ns+`}
spec: {rules: [{host: web.`+ns+`.example.com}]}
`, "apply", "-f", "-")
	setLBStatus(t, ns, "ingress", "web", "192.0.2.80", "2001:db8::80")
	name := "web." + ns + ".example.com."
	s.eventually(t, 10*time.Second, name, dns.TypeA, positive(name+" 60 IN A 192.0.2.80"))
	for _, q := range []struct {
		name string
		qt   uint16
	}{{name, dns.TypeA}, {name, dns.TypeAAAA}, {name, dns.TypeMX}, {"example.com.", dns.TypeSOA}, {"nowhere.example.com.", dns.TypeA}} {
		checkEncryptedSame(t, ca, q.name, q.qt, "127.0.0.1:"+strconv.Itoa(s.port), "127.0.0.1:"+strconv.Itoa(dot), "127.0.0.1:"+strconv.Itoa(doh), nsName)
	}
	// The certificate is checked: another name is refused.
	q := new(dns.Msg).SetQuestion(name, dns.TypeA)
	if _, err := ca.ExchangeDoT(q, "127.0.0.1:"+strconv.Itoa(dot), "other.example.com"); err == nil {
		t.Errorf("DoT: a certificate for %s was accepted for other.example.com", nsName)
	}
	// kdig, a client of its own, gets the same over TLS.
	out, err := exec.Command("kdig", "@127.0.0.1", "-p", strconv.Itoa(dot), "+tls", "+tls-ca="+filepath.Join(dir, "ca.crt"),
		"+tls-hostname="+nsName, "+short", "+timeout=3", "+retry=0", name, "AAAA").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "2001:db8::80" {
		t.Errorf("kdig +tls: %v\n%s", err, out)
	}

	// A renewed certificate (here of another CA) is served without a
	// restart, within tls_reload's check interval.
	renewed, err := harness.NewTestCA([]string{nsName}, []net.IP{net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"tls.crt": renewed.ServerCertPEM, "tls.key": renewed.ServerKeyPEM, "ca2.crt": renewed.CertPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	replaced := time.Now()
	for {
		out, err = exec.Command("kdig", "@127.0.0.1", "-p", strconv.Itoa(dot), "+tls", "+tls-ca="+filepath.Join(dir, "ca2.crt"),
			"+tls-hostname="+nsName, "+short", "+timeout=2", "+retry=0", name, "AAAA").CombinedOutput()
		if err == nil && strings.TrimSpace(string(out)) == "2001:db8::80" {
			break
		}
		if time.Since(replaced) > 30*time.Second {
			t.Fatalf("kdig +tls with the new CA 30s after the files changed: %v\n%s", err, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("renewed certificate served %s after the files changed", time.Since(replaced).Round(100*time.Millisecond))
	if _, err := renewed.ExchangeDoH(new(dns.Msg).SetQuestion(name, dns.TypeA), "127.0.0.1:"+strconv.Itoa(doh), nsName); err != nil {
		t.Errorf("DoH with the renewed certificate: %v", err)
	}
}

// checkEncryptedSame asks name/qtype over plain DNS (UDP), DoT and DoH and
// wants the same reply: rcode, AA and the sections (answers, NODATA and
// NXDOMAIN alike).
func checkEncryptedSame(t *testing.T, ca *harness.TestCA, name string, qtype uint16, plain, dot, doh, serverName string) {
	t.Helper()
	render := func(r *dns.Msg) string {
		var b strings.Builder
		b.WriteString(dns.RcodeToString[r.Rcode] + " aa=" + strconv.FormatBool(r.Authoritative) + "\n")
		for _, sec := range [][]dns.RR{r.Answer, r.Ns} {
			b.WriteString(strings.Join(rrStrings(sec), "\n") + "\n--\n")
		}
		return b.String()
	}
	q := func() *dns.Msg { return new(dns.Msg).SetQuestion(name, qtype) }
	p, _, err := (&dns.Client{Timeout: 3 * time.Second}).Exchange(q(), plain)
	if err != nil {
		t.Fatalf("plain DNS %s: %v", name, err)
	}
	for _, via := range []struct {
		name     string
		exchange func(*dns.Msg, string, string) (*dns.Msg, error)
		addr     string
	}{{"DoT", ca.ExchangeDoT, dot}, {"DoH", ca.ExchangeDoH, doh}} {
		r, err := via.exchange(q(), via.addr, serverName)
		if err != nil {
			t.Errorf("%s %s %s: %v", via.name, name, dns.TypeToString[qtype], err)
			continue
		}
		if render(r) != render(p) {
			t.Errorf("%s %s %s:\n%s\nplain DNS:\n%s", via.name, name, dns.TypeToString[qtype], render(r), render(p))
		}
	}
}
