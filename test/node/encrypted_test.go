//go:build e2e

package node

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// TestChartEncryptedScaled installs the chart with DNS over TLS and HTTPS,
// the certificate of a CA made here in a kubernetes.io/tls Secret, and the
// HorizontalPodAutoscaler with minReplicas 2. The HPA (kube-controller-
// manager's; no metrics server runs, so its minReplicas is what acts) scales
// the Deployment, which has no replicas of its own, from one pod to two. Each
// pod, and the Service's NodePorts, answer the same over plain DNS, DoT (this
// test's client and kdig) and DoH, the certificate verified.
func TestChartEncryptedScaled(t *testing.T) {
	needNode(t)
	const ns, release = "kube-system", "enc"
	const serverName = "enc.kube-system.example.com" // the apex in the zone: what clients check
	ca, err := harness.NewTestCA([]string{serverName}, nil)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, ca.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl(t, ca.TLSSecret(ns, "enc-tls"), "apply", "-f", "-")
	t.Cleanup(func() { kubectlErr("", "-n", ns, "delete", "secret", "enc-tls", "--ignore-not-found") })

	start := time.Now()
	helm(t, "install", release, filepath.Join(repoRoot, "charts/k8s-gateway"), "--namespace", ns,
		"--set", "domain=example.com", "--set", "fullnameOverride=enc", "--set", "service.type=NodePort",
		"--set", "image.registry=localhost", "--set", "image.repository=k8s-gateway", "--set", "image.tag=e2e",
		"--set", "image.pullPolicy=Never",
		"--set", "dnsOverTLS.enabled=true", "--set", "dnsOverHTTPS.enabled=true", "--set", "tls.secretName=enc-tls",
		"--set", "autoscaling.enabled=true", "--set", "autoscaling.minReplicas=2", "--set", "autoscaling.maxReplicas=3",
		"--wait", "--timeout", "180s")
	t.Cleanup(func() { helmErr("uninstall", release, "--namespace", ns, "--wait") })
	t.Logf("helm install → Ready: %s", time.Since(start).Round(100*time.Millisecond))

	// The HPA takes the Deployment to its minReplicas: two ready pods.
	poll(t, 120*time.Second, func() bool {
		out, _ := kubectlErr("", "-n", ns, "get", "deployment", "enc", "-o", "jsonpath={.spec.replicas} {.status.readyReplicas}")
		return strings.TrimSpace(out) == "2 2"
	})
	t.Logf("HPA scaled the Deployment to 2 ready pods %s after the install", time.Since(start).Round(100*time.Millisecond))
	if got := kubectl(t, "", "-n", ns, "get", "hpa", "enc", "-o", "jsonpath={.status.desiredReplicas}"); got != "2" {
		t.Errorf("HPA desiredReplicas %q, want 2", got)
	}
	ips := strings.Fields(kubectl(t, "", "-n", ns, "get", "pods", "-l", "app.kubernetes.io/instance="+release,
		"--field-selector=status.phase=Running", "-o", "jsonpath={.items[*].status.podIP}"))
	if len(ips) != 2 {
		t.Fatalf("want 2 running pods, got pod IPs %v", ips)
	}

	app := appNamespace(t)
	name := "tls." + app + ".example.com"
	ingress(t, app, "tls", name, "192.0.2.60")
	nodePort := func(port string) string {
		return kubectl(t, "", "-n", ns, "get", "service", "enc", "-o", `jsonpath={.spec.ports[?(@.name=="`+port+`")].nodePort}`)
	}
	targets := []struct{ plain, dot, doh string }{
		{ips[0] + ":1053", ips[0] + ":8853", ips[0] + ":8443"},
		{ips[1] + ":1053", ips[1] + ":8853", ips[1] + ":8443"},
		{nodeAddr + ":" + nodePort("dns-udp"), nodeAddr + ":" + nodePort("dns-tls"), nodeAddr + ":" + nodePort("dns-https")},
	}
	for _, at := range targets {
		host, port, _ := strings.Cut(at.plain, ":")
		eventually(t, 30*time.Second, host, port, name, "60 IN A 192.0.2.60")
		for _, q := range []struct {
			name string
			qt   uint16
		}{{name + ".", dns.TypeA}, {"example.com.", dns.TypeNS}, {"missing.example.com.", dns.TypeA}} {
			sameEncrypted(t, ca, at.plain, at.dot, at.doh, serverName, q.name, q.qt)
		}
		// kdig, a client of its own, over TLS.
		dotHost, dotPort, _ := strings.Cut(at.dot, ":")
		out, err := exec.Command("kdig", "@"+dotHost, "-p", dotPort, "+tls", "+tls-ca="+caFile, "+tls-hostname="+serverName,
			"+short", "+timeout=3", "+retry=2", name, "A").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "192.0.2.60" {
			t.Errorf("kdig +tls at %s: %v\n%s", at.dot, err, out)
		}
		t.Logf("%s, %s, %s: the same answers over DNS, DoT and DoH", at.plain, at.dot, at.doh)
	}

	// The certificate is renewed (here by another CA): every pod serves the
	// new one within a minute of the Secret changing, without a restart
	// (kubelet rewrites the mounted files; tls_reload reads them again).
	pods := kubectl(t, "", "-n", ns, "get", "pods", "-l", "app.kubernetes.io/instance="+release, "-o", "jsonpath={.items[*].metadata.name}")
	renewed, err := harness.NewTestCA([]string{serverName}, nil)
	if err != nil {
		t.Fatal(err)
	}
	renewedCA := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(renewedCA, renewed.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl(t, renewed.TLSSecret(ns, "enc-tls"), "apply", "-f", "-")
	replaced := time.Now()
	for _, ip := range ips {
		var out []byte
		poll(t, 90*time.Second, func() bool {
			out, err = exec.Command("kdig", "@"+ip, "-p", "8853", "+tls", "+tls-ca="+renewedCA, "+tls-hostname="+serverName,
				"+short", "+timeout=2", "+retry=0", name, "A").CombinedOutput()
			return err == nil && strings.TrimSpace(string(out)) == "192.0.2.60"
		})
		t.Logf("pod %s serves the renewed certificate %s after the Secret changed", ip, time.Since(replaced).Round(time.Second))
	}
	if now := kubectl(t, "", "-n", ns, "get", "pods", "-l", "app.kubernetes.io/instance="+release, "-o", "jsonpath={.items[*].metadata.name}"); now != pods {
		t.Errorf("pods %q became %q: the renewal should need no new pod", pods, now)
	}
	if r := kubectl(t, "", "-n", ns, "get", "pods", "-l", "app.kubernetes.io/instance="+release, "-o", "jsonpath={.items[*].status.containerStatuses[0].restartCount}"); strings.Trim(r, "0 ") != "" {
		t.Errorf("restart counts %q after the renewal, want 0", r)
	}
}

// sameEncrypted asks name/qtype over plain DNS, DoT and DoH (retrying while
// kube-proxy's rules for a NodePort are not in place yet) and wants the
// same rcode, AA and sections.
func sameEncrypted(t *testing.T, ca *harness.TestCA, plain, dot, doh, serverName, name string, qtype uint16) {
	t.Helper()
	render := func(r *dns.Msg) string {
		out := []string{dns.RcodeToString[r.Rcode] + " aa=" + strconv.FormatBool(r.Authoritative)}
		for _, sec := range [][]dns.RR{r.Answer, r.Ns} {
			var rrs []string
			for _, rr := range sec {
				rrs = append(rrs, strings.Join(strings.Fields(rr.String()), " "))
			}
			slices.Sort(rrs)
			out = append(out, strings.Join(rrs, " | "))
		}
		return strings.Join(out, "\n")
	}
	udp := func(m *dns.Msg, addr, _ string) (*dns.Msg, error) {
		r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, addr)
		return r, err
	}
	got := map[string]string{}
	for _, via := range []struct {
		name     string
		exchange func(*dns.Msg, string, string) (*dns.Msg, error)
		addr     string
	}{{"DNS", udp, plain}, {"DoT", ca.ExchangeDoT, dot}, {"DoH", ca.ExchangeDoH, doh}} {
		var lastErr error
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
			r, err := via.exchange(new(dns.Msg).SetQuestion(name, qtype), via.addr, serverName)
			if err == nil {
				got[via.name] = render(r)
				break
			}
			if lastErr = err; time.Now().After(deadline) {
				t.Fatalf("%s at %s, %s %s: %v", via.name, via.addr, name, dns.TypeToString[qtype], lastErr)
			}
		}
	}
	if got["DoT"] != got["DNS"] || got["DoH"] != got["DNS"] {
		t.Errorf("%s %s: DNS at %s:\n%s\nDoT at %s:\n%s\nDoH at %s:\n%s", name, dns.TypeToString[qtype],
			plain, got["DNS"], dot, got["DoT"], doh, got["DoH"])
	}
}
