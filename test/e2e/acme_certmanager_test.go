//go:build e2e

package e2e

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// startCertManager builds cert-manager's controllers (hack/acme.sh, cached),
// installs its CRDs and runs the controllers with their DNS-01 self-check
// asking the plugin s.
func startCertManager(t *testing.T, s *server) {
	t.Helper()
	script := filepath.Join(repoRoot, "hack/acme.sh")
	if out, err := exec.Command(script, "certmanager").CombinedOutput(); err != nil {
		t.Fatalf("hack/acme.sh certmanager: %v\n%s", err, out)
	}
	out, err := exec.Command(script, "path").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := strings.TrimSpace(string(out))
	crds, err := filepath.Glob(filepath.Join(bin, "cert-manager-crds", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("cert-manager's CRDs not found in %s: %v", bin, err)
	}
	chartEnsureCRDs(t, []string{"certificates.cert-manager.io", "issuers.cert-manager.io", "orders.acme.cert-manager.io", "challenges.acme.cert-manager.io", "certificaterequests.cert-manager.io", "clusterissuers.cert-manager.io"}, false, crds...)
	cmd := exec.Command(filepath.Join(bin, "certmanager"), "-kubeconfig", kubeconfig,
		"-dns01-recursive-nameservers", "127.0.0.1:"+strconv.Itoa(s.port))
	proc, err := harness.Start(cmd)
	if err != nil {
		t.Fatalf("starting cert-manager: %v", err)
	}
	t.Cleanup(func() {
		proc.Stop(10 * time.Second)
		// K8SGW_E2E_CERTMANAGER_LOG=1 shows it after a pass too.
		if t.Failed() || os.Getenv("K8SGW_E2E_CERTMANAGER_LOG") != "" {
			t.Logf("cert-manager output:\n%s", proc.Out.String())
		}
	})
}

// certManagerIssuer creates, in ns, an ACME Issuer of Pebble whose DNS-01
// solver is rfc2136 against s with key k, whose secret is in Secret ns/acme.
func certManagerIssuer(t *testing.T, tools acmeTools, dirURL string, s *server, ns string, k tsigKey) {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(tools.certs, "pebble.minica.pem"))
	if err != nil {
		t.Fatal(err)
	}
	kubectl(t, fmt.Sprintf(`
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: pebble, namespace: %s}
spec:
  acme:
    server: %s
    caBundle: %s
    privateKeySecretRef: {name: pebble-account}
    solvers:
      - dns01:
          rfc2136:
            nameserver: 127.0.0.1:%d
            tsigKeyName: %s
            tsigAlgorithm: HMACSHA256
            tsigSecretSecretRef: {name: acme, key: secret}
`, ns, dirURL, base64.StdEncoding.EncodeToString(ca), s.updatePort(t), strings.TrimSuffix(k.name, ".")), "apply", "-f", "-")
}

func certificate(t *testing.T, ns, dnsName string) {
	t.Helper()
	kubectl(t, fmt.Sprintf(`
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: wildcard, namespace: %s}
spec:
  secretName: wildcard-tls
  issuerRef: {name: pebble}
  dnsNames: [%q]
  privateKey: {algorithm: ECDSA, size: 256}
`, ns, dnsName), "apply", "-f", "-")
}

// TestACMECertManager issues a wildcard certificate with cert-manager's
// rfc2136 solver and Pebble, with the key of team-a's labelled Secret (which
// both the plugin and cert-manager read), and checks that team-b's Issuer
// gets none for team-a's name: its updates are refused, its challenge never
// presented.
func TestACMECertManager(t *testing.T) {
	tools := buildACMETools(t)
	a := acmeSetup(t)
	keyA := keySecret(t, a.nsA, "acme", "hmac-sha256")
	keyB := keySecret(t, a.nsB, "acme", "hmac-sha256")
	dirURL := startPebble(t, tools, a.s)
	// Once cert-manager is stopped, its Challenges' finalizers would keep the
	// namespaces from going: remove them (the cleanups run in reverse).
	t.Cleanup(func() { dropChallengeFinalizers(a.nsA, a.nsB) })
	startCertManager(t, a.s)
	wildcard := "*." + a.domainA
	certManagerIssuer(t, tools, dirURL, a.s, a.nsA, keyA)
	certManagerIssuer(t, tools, dirURL, a.s, a.nsB, keyB)

	// team-a first: cert-manager never works on two challenges of one name
	// at once, and team-b's is never done.
	start := time.Now()
	certificate(t, a.nsA, wildcard)
	if out, err := kubectlErr("", "-n", a.nsA, "wait", "certificate/wildcard", "--for=condition=Ready", "--timeout=180s"); err != nil {
		desc, _ := kubectlErr("", "-n", a.nsA, "describe", "certificates,certificaterequests,orders,challenges")
		t.Fatalf("team-a's Certificate not ready: %v\n%s\n%s", err, out, desc)
	}
	t.Logf("cert-manager issued %s in %s", wildcard, time.Since(start).Round(time.Millisecond))
	crt := kubectl(t, "", "-n", a.nsA, "get", "secret", "wildcard-tls", "-o", "jsonpath={.data.tls\\.crt}")
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(crt))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		t.Fatalf("tls.crt is not PEM: %q", raw)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cert.DNSNames, []string{wildcard}) || !strings.HasPrefix(cert.Issuer.CommonName, "Pebble") {
		t.Fatalf("certificate for %q issued by %q", cert.DNSNames, cert.Issuer.CommonName)
	}

	// team-b: the challenge is never presented (REFUSED), so no certificate.
	certificate(t, a.nsB, wildcard)
	waitFor(t, 60*time.Second, func() bool {
		out, _ := kubectlErr("", "-n", a.nsB, "get", "challenges", "-o", "jsonpath={.items[*].status.reason}")
		return strings.Contains(out, "REFUSED")
	})
	if ready, _ := kubectlErr("", "-n", a.nsB, "get", "certificate", "wildcard", "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}"); ready == "True" {
		t.Fatal("team-b got a certificate for team-a's name")
	}
	if _, err := kubectlErr("", "-n", a.nsB, "get", "secret", "wildcard-tls"); err == nil {
		t.Fatal("team-b has a wildcard-tls Secret")
	}
	if got := endpointTargets(t, a.nsB); len(got) != 0 {
		t.Fatalf("team-b's refused updates left DNSEndpoints: %q", got)
	}
}

// dropChallengeFinalizers removes the finalizers of the Challenges of the
// namespaces, which only a running cert-manager would.
func dropChallengeFinalizers(namespaces ...string) {
	for _, ns := range namespaces {
		out, _ := kubectlErr("", "-n", ns, "get", "challenges", "-o", "name")
		for _, name := range strings.Fields(out) {
			kubectlErr("", "-n", ns, "patch", name, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
		}
	}
}
