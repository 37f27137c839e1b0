//go:build e2e

package e2e

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// acme is the setup of an ACME test: the plugin with the updates option for
// a zone of the test's own, team-a's Corefile key (from a file), and the
// namespaces of team-a and team-b.
type acme struct {
	s                *server
	zone             string // fully qualified
	domainA, domainB string // team-a.<zone>, team-b.<zone>, without the dot
	nsA, nsB         string
	nsKeys           string // the namespace of tenant_secrets
	coreA            tsigKey
	env              []string
}

func acmeSetup(t *testing.T) acme {
	t.Helper()
	var a acme
	a.zone = fmt.Sprintf("z%d.example.com.", rand.IntN(1_000_000))
	a.domainA, a.domainB = "team-a."+strings.TrimSuffix(a.zone, "."), "team-b."+strings.TrimSuffix(a.zone, ".")
	chartEnsureCRDs(t, []string{"dnsendpoints.externaldns.k8s.io"}, false, filepath.Join(repoRoot, "test/e2e/testdata/dnsendpoint-crd.yaml"))
	a.nsA, a.nsB, a.nsKeys = namespace(t), namespace(t), namespace(t)
	a.coreA = tsigKey{name: "core-a.example.", alg: "hmac-sha256", secret: newSecret(t)}
	keyFile := filepath.Join(t.TempDir(), "core-a.key")
	// A BIND key file, as tsig-keygen writes it.
	bind := fmt.Sprintf("key \"core-a.example\" {\n\talgorithm hmac-sha256;\n\tsecret %q;\n};\n", a.coreA.secret)
	if err := os.WriteFile(keyFile, []byte(bind), 0o600); err != nil {
		t.Fatal(err)
	}
	// team-a owns team-a.<zone>'s names: it publishes www below it.
	claimingService(t, a.nsA, "web", "www."+a.domainA, "192.0.2.10")
	a.env = []string{"ACME_KEY_FILE=" + keyFile, "ACME_NS_A=" + a.nsA, "ACME_NS_KEYS=" + a.nsKeys, "ACME_ZONE=" + a.zone, "ACME_UPDATE_PORT=" + strconv.Itoa(freePort(t)), "ACME_METRICS_PORT=" + strconv.Itoa(freePort(t))}
	a.s = startServer(t, "test/e2e/testdata/Corefile.acme", kubeconfig, a.env...)
	waitFor(t, 10*time.Second, func() bool {
		r, err := a.s.query("www."+a.domainA, dns.TypeA)
		return err == nil && len(r.Answer) == 1
	})
	return a
}

func waitFor(t *testing.T, timeout time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %s", timeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// endpointTargets returns the TXT values the plugin's DNSEndpoints in ns hold.
func endpointTargets(t *testing.T, ns string) []string {
	t.Helper()
	out := kubectl(t, "", "-n", ns, "get", "dnsendpoints", "-l", "k8s-gateway.dns/written-by=acmeupdate", "-o", "jsonpath={.items[*].spec.endpoints[*].targets[*]}")
	f := strings.Fields(out)
	sort.Strings(f)
	return f
}

// TestACMEUpdateProtocol drives the plugin with nsupdate: TSIG failures,
// prerequisites, the scope, deletes, and replays (with the Go client).
func TestACMEUpdateProtocol(t *testing.T) {
	a := acmeSetup(t)
	s, nsA, nsB, coreA := a.s, a.nsA, a.nsB, a.coreA
	name := "_acme-challenge." + a.domainA
	wrongSecret := coreA
	wrongSecret.secret = newSecret(t)
	unknown := tsigKey{name: "nobody.example.", alg: "hmac-sha256", secret: coreA.secret}
	keyB := keySecret(t, nsB, "acme", "hmac-sha512")
	time.Sleep(500 * time.Millisecond) // the Secret's informer

	cases := []struct {
		name string
		key  tsigKey
		cmds []string
		want string // "" for success, else a fragment of nsupdate's output
	}{
		{"add", coreA, []string{"update add " + name + " 60 TXT v1"}, ""},
		{"unsigned", tsigKey{}, []string{"update add " + name + " 60 TXT x"}, "REFUSED"},
		{"wrong secret", wrongSecret, []string{"update add " + name + " 60 TXT x"}, "NOTAUTH"},
		{"unknown key", unknown, []string{"update add " + name + " 60 TXT x"}, "NOTAUTH"},
		{"wrong type", coreA, []string{"check-names no", "update add " + name + " 60 A 192.0.2.1"}, "REFUSED"},
		{"other owner", coreA, []string{"update add www." + a.domainA + " 60 TXT x"}, "REFUSED"},
		{"delete the name", coreA, []string{"update delete " + name}, "REFUSED"},
		{"ttl above maxttl", coreA, []string{"update add " + name + " 86400 TXT x"}, "REFUSED"},
		{"other zone", coreA, []string{"update add _acme-challenge.example.org 60 TXT x"}, "NOTZONE"},
		{"prereq nxrrset", coreA, []string{"prereq nxrrset " + name + " TXT", "update add " + name + " 60 TXT x"}, "YXRRSET"},
		{"prereq yxdomain", coreA, []string{"prereq yxdomain nope." + a.zone, "update add " + name + " 60 TXT x"}, "NXDOMAIN"},
		{"prereq nxdomain", coreA, []string{"prereq nxdomain www." + a.domainA, "update add " + name + " 60 TXT x"}, "YXDOMAIN"},
		{"prereq yxrrset value", coreA, []string{"prereq yxrrset " + name + " TXT v1", "update add " + name + " 60 TXT v2"}, ""},
		{"prereq yxrrset wrong value", coreA, []string{"prereq yxrrset " + name + " TXT nope", "update add " + name + " 60 TXT x"}, "NXRRSET"},
		{"team-b for team-a", keyB, []string{"update add " + name + " 60 TXT stolen"}, "REFUSED"},
		{"team-b own name", keyB, []string{"update add _acme-challenge." + a.domainB + " 60 TXT b1"}, ""},
		{"delete one value", coreA, []string{"update delete " + name + " TXT v1"}, ""},
	}
	for _, tc := range cases {
		out, err := nsupdate(t, s, a.zone, tc.key, tc.cmds...)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(out, tc.want)) {
			t.Errorf("%s: nsupdate err=%v, want %q:\n%s", tc.name, err, tc.want, out)
		}
	}
	// What stayed: v2 only, in the cluster and on this replica once its
	// informer has the delete (the overlay never hides what the index shows).
	waitFor(t, overlayWithin, func() bool { return slices.Equal(s.txtValues(t, name), []string{"v2"}) })
	if got := endpointTargets(t, nsA); !slices.Equal(got, []string{"v2"}) {
		t.Errorf("team-a's DNSEndpoints hold %q, want [v2]", got)
	}
	if got := endpointTargets(t, nsB); !slices.Equal(got, []string{"b1"}) {
		t.Errorf("team-b's DNSEndpoints hold %q, want [b1]", got)
	}
	// The refusal of team-b's update is an Event on its key's Secret.
	waitFor(t, 10*time.Second, func() bool {
		out, _ := kubectlErr("", "-n", nsB, "get", "events", "--field-selector", "reason=DNSUpdateRefused", "-o", "jsonpath={.items[*].message}")
		return strings.Contains(out, a.domainA)
	})

	// A replayed message is refused and changes nothing, even after its
	// value was deleted; a message signed too long ago is BADTIME.
	add := signedUpdate(t, a.zone, coreA, name+".", "replayed", time.Now())
	if r := sendRaw(t, s, add); r.Rcode != dns.RcodeSuccess {
		t.Fatalf("first send: %s", dns.RcodeToString[r.Rcode])
	}
	if out, err := nsupdate(t, s, a.zone, coreA, "update delete "+name+" TXT replayed"); err != nil {
		t.Fatalf("delete: %v\n%s", err, out)
	}
	if r := sendRaw(t, s, add); r.Rcode != dns.RcodeRefused {
		t.Errorf("replay: %s, want REFUSED", dns.RcodeToString[r.Rcode])
	}
	old := signedUpdate(t, a.zone, coreA, name+".", "old", time.Now().Add(-10*time.Minute))
	if r := sendRaw(t, s, old); r.Rcode != dns.RcodeNotAuth || r.IsTsig() == nil || r.IsTsig().Error != dns.RcodeBadTime {
		t.Errorf("old message: %v, want NOTAUTH with BADTIME", r)
	}
	if got := endpointTargets(t, nsA); !slices.Equal(got, []string{"v2"}) {
		t.Errorf("after the replay team-a's DNSEndpoints hold %q, want [v2]", got)
	}
}

// TestACMECertificate issues a wildcard certificate with Pebble through the
// RFC 2136 client and a Secret's key, and checks that team-b's key gets none
// for team-a's name.
func TestACMECertificate(t *testing.T) {
	tools := buildACMETools(t)
	a := acmeSetup(t)
	s, nsA, nsB := a.s, a.nsA, a.nsB
	wildcard := "*." + a.domainA
	keyA := keySecret(t, nsA, "acme", "hmac-sha256")
	keyB := keySecret(t, nsB, "acme", "hmac-sha256")
	time.Sleep(500 * time.Millisecond) // the Secrets' informer
	dirURL := startPebble(t, tools, s)

	start := time.Now()
	certPEM, out, err := obtain(t, tools, dirURL, s, a.zone, keyA, wildcard)
	if err != nil {
		t.Fatalf("team-a's certificate: %v\n%s", err, out)
	}
	t.Logf("wildcard certificate issued in %s", time.Since(start).Round(time.Millisecond))
	block, _ := pem.Decode([]byte(certPEM))
	if block == nil {
		t.Fatalf("no PEM:\n%s", certPEM)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cert.DNSNames, []string{wildcard}) {
		t.Fatalf("certificate names %q", cert.DNSNames)
	}
	// The client removed its challenge: no TXT value is left.
	waitFor(t, 10*time.Second, func() bool { return len(endpointTargets(t, nsA)) == 0 })

	_, out, err = obtain(t, tools, dirURL, s, a.zone, keyB, wildcard)
	if err == nil {
		t.Fatalf("team-b got a certificate for team-a's name:\n%s", out)
	}
	if !strings.Contains(out, "REFUSED") {
		t.Errorf("team-b's failure does not say REFUSED:\n%s", out)
	}
	if got := endpointTargets(t, nsB); len(got) != 0 {
		t.Errorf("team-b's refused update left DNSEndpoints: %q", got)
	}
	if !strings.Contains(s.output(), "update refused (REFUSED, ownership)") {
		t.Errorf("the refusal is not logged:\n%s", s.output())
	}
}

// TestACMETwoReplicas sends updates to one replica and measures when the
// other answers them (through the DNSEndpoint and its informer).
func TestACMETwoReplicas(t *testing.T) {
	a := acmeSetup(t)
	s1, coreA := a.s, a.coreA
	s2 := startServer(t, "test/e2e/testdata/Corefile.acme", kubeconfig, append(slices.Clone(a.env), "ACME_UPDATE_PORT="+strconv.Itoa(freePort(t)), "ACME_METRICS_PORT="+strconv.Itoa(freePort(t)))...)
	name := "_acme-challenge." + a.domainA
	var delays []time.Duration
	for i := range 20 {
		value := fmt.Sprintf("replica-%d-%d", i, time.Now().UnixNano())
		// The Go client: the time of the reply is known to the microsecond.
		if r := sendRaw(t, s1, signedUpdate(t, a.zone, coreA, name+".", value, time.Now())); r.Rcode != dns.RcodeSuccess {
			t.Fatalf("update: %s", dns.RcodeToString[r.Rcode])
		}
		replied := time.Now()
		waitFor(t, 10*time.Second, func() bool { return slices.Contains(s2.txtValues(t, name), value) })
		delays = append(delays, time.Since(replied))
		if got := s1.txtValues(t, name); !slices.Contains(got, value) {
			t.Fatalf("replica 1 does not answer its own update: %q", got)
		}
		if out, err := nsupdate(t, s1, a.zone, coreA, "update delete "+name+" TXT "+value); err != nil {
			t.Fatalf("delete: %v\n%s", err, out)
		}
		waitFor(t, 10*time.Second, func() bool { return !slices.Contains(s2.txtValues(t, name), value) })
	}
	slices.Sort(delays)
	t.Logf("update reply → answer on the other replica over %d updates: min %s, median %s, p90 %s, max %s",
		len(delays), delays[0].Round(time.Microsecond), delays[len(delays)/2].Round(time.Microsecond),
		delays[len(delays)*9/10].Round(time.Microsecond), delays[len(delays)-1].Round(time.Microsecond))
	if delays[len(delays)/2] > 2*time.Second {
		t.Errorf("the median delay %s is above 2s", delays[len(delays)/2])
	}
}

// tenantKeySecret creates a labelled Secret in ns whose label
// k8s-gateway.dns/tenant names tenant; the key's name is <name>.<ns>.
func tenantKeySecret(t *testing.T, ns, name, tenant string) tsigKey {
	t.Helper()
	k := tsigKey{name: name + "." + ns + ".", alg: "hmac-sha256", secret: newSecret(t)}
	labels := `{k8s-gateway.dns/tsig-key: "true"}`
	if tenant != "" {
		labels = fmt.Sprintf(`{k8s-gateway.dns/tsig-key: "true", k8s-gateway.dns/tenant: %q}`, tenant)
	}
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata:
  name: %s
  namespace: %s
  labels: %s
stringData: {secret: %q, algorithm: hmac-sha256}
`, name, ns, labels, k.secret), "apply", "-f", "-")
	return k
}

// TestACMETenantSecrets: keys kept in one namespace of the platform team's
// (tenant_secrets) act for the tenant their label names, and only there:
// the challenge is a DNSEndpoint in the tenant's namespace, another
// tenant's key is refused at its names, a Secret there without the label
// gives no key, and a tenant's Secret naming another tenant gives none.
func TestACMETenantSecrets(t *testing.T) {
	a := acmeSetup(t)
	name := "_acme-challenge." + a.domainA
	// One informer reads them all, in order: once for-a's key is there, the
	// Secrets made before it have been read.
	unlabelled := tenantKeySecret(t, a.nsKeys, "nobody", "")
	sneaky := tenantKeySecret(t, a.nsB, "sneaky", a.nsA)
	forB := tenantKeySecret(t, a.nsKeys, "for-b", a.nsB)
	forA := tenantKeySecret(t, a.nsKeys, "for-a", a.nsA)
	waitFor(t, 10*time.Second, func() bool {
		out, err := nsupdate(t, a.s, a.zone, forA, "update add "+name+" 60 TXT by-platform")
		return err == nil || !strings.Contains(out, "NOTAUTH") // the Secret's informer
	})
	if got := endpointTargets(t, a.nsA); !slices.Equal(got, []string{"by-platform"}) {
		t.Errorf("team-a's DNSEndpoints hold %q, want [by-platform]", got)
	}
	if got := endpointTargets(t, a.nsKeys); len(got) != 0 {
		t.Errorf("the keys' namespace holds challenges %q", got)
	}
	for _, c := range []struct {
		what string
		key  tsigKey
		want string
	}{
		{"team-b's key at team-a's name", forB, "REFUSED"},
		{"a Secret of the keys' namespace without a tenant", unlabelled, "NOTAUTH"},
		{"a tenant's Secret naming another tenant", sneaky, "NOTAUTH"},
	} {
		if out, err := nsupdate(t, a.s, a.zone, c.key, "update add "+name+" 60 TXT stolen"); err == nil || !strings.Contains(out, c.want) {
			t.Errorf("%s: err %v, want %s:\n%s", c.what, err, c.want, out)
		}
	}
	if out, err := nsupdate(t, a.s, a.zone, forB, "update add _acme-challenge."+a.domainB+" 60 TXT b-by-platform"); err != nil {
		t.Errorf("team-b's key at a free name: %v\n%s", err, out)
	}
	if got := endpointTargets(t, a.nsB); !slices.Equal(got, []string{"b-by-platform"}) {
		t.Errorf("team-b's DNSEndpoints hold %q, want [b-by-platform]", got)
	}
}
