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

// TestACMEViews: two views of a zone take updates, each on an address of
// its own. A challenge written through either is answered by both views:
// at once by the view that took it, by the other as soon as it reads the
// DNSEndpoint; another tenant's challenge is refused through either.
func TestACMEViews(t *testing.T) {
	a := acmeSetup(t)
	keyB := keySecret(t, a.nsB, "acme", "hmac-sha256")
	internalPort, externalPort := freePort(t), freePort(t)
	env := append(slices.Clone(a.env), "ACME_UPDATE_PORT="+strconv.Itoa(internalPort), "ACME_UPDATE_PORT2="+strconv.Itoa(externalPort))
	s := startServer(t, "test/e2e/testdata/Corefile.acme-views", kubeconfig, env...)
	challenge := "_acme-challenge." + a.domainA + "."
	txt := func(from string) string {
		out, _ := exec.Command(digBin, "-b", from, "@127.0.0.1", "-p", strconv.Itoa(s.port), "+short", challenge, "TXT").CombinedOutput()
		return string(out)
	}
	for _, v := range []struct{ through, first, other string }{
		{"127.0.0.1:" + strconv.Itoa(internalPort), "127.0.0.2", "127.0.0.1"},
		{"127.0.0.1:" + strconv.Itoa(externalPort), "127.0.0.1", "127.0.0.2"},
	} {
		value := "through-" + v.through
		if rc, _ := tcpUpdate(v.through, signedUpdate(t, a.zone, a.coreA, challenge, value, time.Now())); rc != dns.RcodeSuccess {
			t.Fatalf("team-a's challenge through %s: rcode %d", v.through, rc)
		}
		if got := txt(v.first); !strings.Contains(got, value) {
			t.Errorf("the view of %s, which took the update through %s, answers %q at once, want %q", v.first, v.through, got, value)
		}
		waitFor(t, 10*time.Second, func() bool { return strings.Contains(txt(v.other), value) })
		waitFor(t, 10*time.Second, func() bool {
			return tcpRcode(v.through, signedUpdate(t, a.zone, keyB, "_acme-challenge.b-own."+a.domainB+".", "probe", time.Now())) == dns.RcodeSuccess
		})
		if rc := tcpRcode(v.through, signedUpdate(t, a.zone, keyB, "_acme-challenge.www."+a.domainA+".", "stolen", time.Now())); rc != dns.RcodeRefused {
			t.Errorf("team-b's challenge at team-a's www through %s: rcode %s, want REFUSED", v.through, dns.RcodeToString[rc])
		}
	}
}

// tcpRcode sends wire to addr over TCP and returns the reply's rcode (-1
// without one).
func tcpRcode(addr string, wire []byte) int {
	rc, _ := tcpUpdate(addr, wire)
	return rc
}

// TestACMEViewsOneAddress: the views of a zone with alike updates on one
// address, as the chart renders them, start: one service answers for both,
// a challenge written through it is answered by both views, and another
// tenant's challenge is refused.
func TestACMEViewsOneAddress(t *testing.T) {
	a := acmeSetup(t)
	keyB := keySecret(t, a.nsB, "acme", "hmac-sha256")
	port := strconv.Itoa(freePort(t))
	env := append(slices.Clone(a.env), "ACME_UPDATE_PORT="+port, "ACME_UPDATE_PORT2="+port)
	s := startServer(t, "test/e2e/testdata/Corefile.acme-views", kubeconfig, env...)
	addr := "127.0.0.1:" + port
	challenge := "_acme-challenge." + a.domainA + "."
	if rc := tcpRcode(addr, signedUpdate(t, a.zone, a.coreA, challenge, "one-address", time.Now())); rc != dns.RcodeSuccess {
		t.Fatalf("team-a's challenge: rcode %d", rc)
	}
	for _, from := range []string{"127.0.0.1", "127.0.0.2"} {
		waitFor(t, 10*time.Second, func() bool {
			out, _ := exec.Command(digBin, "-b", from, "@127.0.0.1", "-p", strconv.Itoa(s.port), "+short", challenge, "TXT").CombinedOutput()
			return strings.Contains(string(out), "one-address")
		})
	}
	waitFor(t, 10*time.Second, func() bool {
		return tcpRcode(addr, signedUpdate(t, a.zone, keyB, "_acme-challenge.b-own."+a.domainB+".", "probe", time.Now())) == dns.RcodeSuccess
	})
	if rc := tcpRcode(addr, signedUpdate(t, a.zone, keyB, "_acme-challenge.www."+a.domainA+".", "stolen", time.Now())); rc != dns.RcodeRefused {
		t.Errorf("team-b's challenge at team-a's www: rcode %s, want REFUSED", dns.RcodeToString[rc])
	}
}
