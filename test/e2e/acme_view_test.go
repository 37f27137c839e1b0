//go:build e2e

package e2e

import (
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestACMEOwnershipPastTheView: a block whose exclude hides team-a's web
// address (an internal-only name) still sees that team-a owns the name, so
// team-b's key cannot answer its challenge (and get a certificate for it)
// through that block; the nameserver names are the server's, whoever asks.
func TestACMEOwnershipPastTheView(t *testing.T) {
	a := acmeSetup(t)
	keyB := keySecret(t, a.nsB, "acme", "hmac-sha256")
	env := append(slices.Clone(a.env), "ACME_UPDATE_PORT="+strconv.Itoa(freePort(t)), "ACME_METRICS_PORT="+strconv.Itoa(freePort(t)))
	s := startServer(t, "test/e2e/testdata/Corefile.acme-view", kubeconfig, env...)
	www := "www." + a.domainA
	waitFor(t, 10*time.Second, func() bool {
		r, err := s.query(www, dns.TypeSOA)
		return err == nil && r.Rcode == "NXDOMAIN"
	})
	send := func(k tsigKey, name, value string) int {
		return sendRaw(t, s, signedUpdate(t, a.zone, k, "_acme-challenge."+name+".", value, time.Now())).Rcode
	}
	// The Secret's key comes through an informer: wait until it is known.
	waitFor(t, 10*time.Second, func() bool {
		return send(keyB, "b-own."+a.domainB, "probe-"+strconv.FormatInt(time.Now().UnixNano(), 10)) == dns.RcodeSuccess
	})
	if rc := send(keyB, www, "stolen"); rc != dns.RcodeRefused {
		t.Errorf("team-b's challenge at %s, hidden from the view: %s, want REFUSED", www, dns.RcodeToString[rc])
	}
	if rc := send(a.coreA, www, "owned"); rc != dns.RcodeSuccess {
		t.Errorf("team-a's challenge at its own %s: %s, want NOERROR", www, dns.RcodeToString[rc])
	}
	ns := "dns1.kube-system." + a.zone[:len(a.zone)-1]
	if rc := send(a.coreA, ns, "server"); rc != dns.RcodeRefused {
		t.Errorf("a challenge at the nameserver name %s: %s, want REFUSED", ns, dns.RcodeToString[rc])
	}
	if got := endpointTargets(t, a.nsB); slices.Contains(got, "stolen") {
		t.Errorf("team-b's DNSEndpoints hold %q", got)
	}
}

// TestACMEOwnershipOtherKinds: the block of the updates reads only
// DNSEndpoints, another view of the zone Services too. team-a's web Service
// publishes www in that view only, and the challenge (a DNSEndpoint) is
// answered in both: team-b's key cannot answer it, team-a's can, and its
// value is answered in the internal view.
func TestACMEOwnershipOtherKinds(t *testing.T) {
	a := acmeSetup(t)
	keyB := keySecret(t, a.nsB, "acme", "hmac-sha256")
	env := append(slices.Clone(a.env), "ACME_UPDATE_PORT="+strconv.Itoa(freePort(t)), "ACME_METRICS_PORT="+strconv.Itoa(freePort(t)))
	s := startServer(t, "test/e2e/testdata/Corefile.acme-kinds", kubeconfig, env...)
	www := "www." + a.domainA
	send := func(k tsigKey, name, value string) int {
		return sendRaw(t, s, signedUpdate(t, a.zone, k, "_acme-challenge."+name+".", value, time.Now())).Rcode
	}
	waitFor(t, 10*time.Second, func() bool {
		return send(keyB, "b-own."+a.domainB, "probe-"+strconv.FormatInt(time.Now().UnixNano(), 10)) == dns.RcodeSuccess
	})
	if rc := send(keyB, www, "stolen"); rc != dns.RcodeRefused {
		t.Errorf("team-b's challenge at %s, published by a kind the block does not read: %s, want REFUSED", www, dns.RcodeToString[rc])
	}
	if rc := send(a.coreA, www, "owned"); rc != dns.RcodeSuccess {
		t.Errorf("team-a's challenge at its own %s: %s, want NOERROR", www, dns.RcodeToString[rc])
	}
	if got := endpointTargets(t, a.nsB); slices.Contains(got, "stolen") {
		t.Errorf("team-b's DNSEndpoints hold %q", got)
	}
	// The internal view answers team-a's challenge from its DNSEndpoint.
	challenge := "_acme-challenge." + www + "."
	waitFor(t, 10*time.Second, func() bool {
		out, err := exec.Command(digBin, "-b", "127.0.0.2", "@127.0.0.1", "-p", strconv.Itoa(s.port), "+short", challenge, "TXT").CombinedOutput()
		return err == nil && strings.Contains(string(out), `"owned"`)
	})
}
