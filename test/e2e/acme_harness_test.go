//go:build e2e

package e2e

import (
	"fmt"
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

// The tools of the ACME tests, built by hack/acme.sh from the module proxy.
type acmeTools struct{ pebble, client, certs string }

func buildACMETools(t *testing.T) acmeTools {
	t.Helper()
	script := filepath.Join(repoRoot, "hack/acme.sh")
	if out, err := exec.Command(script, "build").CombinedOutput(); err != nil {
		t.Fatalf("hack/acme.sh build: %v\n%s", err, out)
	}
	out, err := exec.Command(script, "path").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := strings.TrimSpace(string(out))
	return acmeTools{pebble: filepath.Join(bin, "pebble"), client: filepath.Join(bin, "acmeclient"), certs: filepath.Join(bin, "pebble-certs")}
}

// tsigKey is a key as the tests hold it.
type tsigKey struct{ name, alg, secret string }

// newSecret returns a random base64 secret of 32 bytes.
func newSecret(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("openssl", "rand", "-base64", "32").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// keySecret creates a labelled Secret holding a key in ns; the key's name is
// <name>.<ns>.
func keySecret(t *testing.T, ns, name, alg string) tsigKey {
	t.Helper()
	k := tsigKey{name: name + "." + ns + ".", alg: alg, secret: newSecret(t)}
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata:
  name: %s
  namespace: %s
  labels: {k8s-gateway.dns/tsig-key: "true"}
stringData: {secret: %q, algorithm: %q}
`, name, ns, k.secret, alg), "apply", "-f", "-")
	return k
}

// nsupdate runs Debian's nsupdate against s for zone with the commands
// given (server, zone and send are added), signed with k unless k.name is empty.
func nsupdate(t *testing.T, s *server, zone string, k tsigKey, commands ...string) (string, error) {
	t.Helper()
	args := []string{"-t", "5"}
	if k.name != "" {
		args = append(args, "-y", k.alg+":"+k.name+":"+k.secret)
	}
	script := fmt.Sprintf("server 127.0.0.1 %d\nzone %s\n%s\nsend\n", s.updatePort(t), zone, strings.Join(commands, "\n"))
	cmd := exec.Command("nsupdate", args...)
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// txtValues asks s for the TXT values at name.
func (s *server) txtValues(t *testing.T, name string) []string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeTXT)
	in, err := dns.Exchange(m, fmt.Sprintf("127.0.0.1:%d", s.port))
	if err != nil {
		t.Fatalf("TXT %s: %v", name, err)
	}
	var out []string
	for _, rr := range in.Answer {
		if x, ok := rr.(*dns.TXT); ok {
			out = append(out, strings.Join(x.Txt, ""))
		}
	}
	return out
}

// signedUpdate returns an UPDATE of zone adding value at name, signed with k at ts.
func signedUpdate(t *testing.T, zone string, k tsigKey, name, value string, ts time.Time) []byte {
	t.Helper()
	m := new(dns.Msg)
	m.SetUpdate(zone)
	rr, err := dns.NewRR(fmt.Sprintf("%s 60 IN TXT %q", name, value))
	if err != nil {
		t.Fatal(err)
	}
	m.Insert([]dns.RR{rr})
	m.SetTsig(k.name, dns.CanonicalName(k.alg), 300, ts.Unix())
	wire, _, err := dns.TsigGenerate(m, k.secret, "", false)
	if err != nil {
		t.Fatal(err)
	}
	return wire
}

// updatePort returns the port s reads UPDATE messages on (the updates
// block's listen address, $ACME_UPDATE_PORT; the last one given counts).
func (s *server) updatePort(t *testing.T) int {
	t.Helper()
	for _, e := range slices.Backward(s.Env) {
		if v, ok := strings.CutPrefix(e, "ACME_UPDATE_PORT="); ok {
			p, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatal("no ACME_UPDATE_PORT")
	return 0
}

// sendRaw sends wire over UDP to s's UPDATE port and returns the reply.
func sendRaw(t *testing.T, s *server, wire []byte) *dns.Msg {
	t.Helper()
	_, in := exchangeUpdate(t, s, wire)
	return in
}

// startPebble runs Pebble with its DNS-01 resolver on s, and returns its
// directory URL.
func startPebble(t *testing.T, tools acmeTools, s *server) string {
	t.Helper()
	port, mport := freePort(t), freePort(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`{"pebble": {"listenAddress": "127.0.0.1:%d", "managementListenAddress": "127.0.0.1:%d",
  "certificate": %q, "privateKey": %q, "httpPort": %d, "tlsPort": %d, "ocspResponderURL": "",
  "externalAccountBindingRequired": false, "retryAfter": {"authz": 1, "order": 1},
  "profiles": {"default": {"description": "tests", "validityPeriod": 86400}}}}`,
		port, mport, filepath.Join(tools.certs, "cert.pem"), filepath.Join(tools.certs, "key.pem"), freePort(t), freePort(t))
	if err := os.WriteFile(filepath.Join(dir, "pebble.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tools.pebble, "-config", filepath.Join(dir, "pebble.json"), "-dnsserver", "127.0.0.1:"+strconv.Itoa(s.port))
	// No sleeping before validation, every nonce good: the tests are about DNS.
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_AUTHZREUSE=0")
	proc, err := harness.Start(cmd)
	if err != nil {
		t.Fatalf("starting Pebble: %v", err)
	}
	t.Cleanup(func() {
		proc.Stop(5 * time.Second)
		if t.Failed() {
			t.Logf("Pebble output:\n%s", proc.Out.String())
		}
	})
	url := fmt.Sprintf("https://127.0.0.1:%d/dir", port)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(proc.Out.String(), "Listening on") {
		if time.Now().After(deadline) {
			t.Fatalf("Pebble did not start:\n%s", proc.Out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return url
}

// obtain runs the ACME client for domains with key k against Pebble and s;
// it returns the certificate (PEM) and the client's output.
func obtain(t *testing.T, tools acmeTools, dirURL string, s *server, zone string, k tsigKey, domains ...string) (string, string, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "cert.pem")
	cmd := exec.Command(tools.client, "-ca", dirURL, "-ca-cert", filepath.Join(tools.certs, "pebble.minica.pem"),
		// UPDATE goes to the updates listener, the propagation check asks
		// the DNS port.
		"-nameserver", "127.0.0.1:"+strconv.Itoa(s.updatePort(t)), "-resolver", "127.0.0.1:"+strconv.Itoa(s.port), "-zone", zone,
		"-tsig-key", k.name, "-tsig-secret", k.secret, "-tsig-algorithm", dns.CanonicalName(k.alg),
		"-domains", strings.Join(domains, ","), "-out", out, "-timeout", "90s")
	output, err := cmd.CombinedOutput()
	if err != nil {
		return "", string(output), err
	}
	pem, rerr := os.ReadFile(out)
	if rerr != nil {
		return "", string(output), rerr
	}
	return string(pem), string(output), nil
}
