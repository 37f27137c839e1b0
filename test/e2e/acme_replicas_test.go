//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// overlayWithin is how soon a replica must answer what the cluster holds:
// well below the overlay's hold (30 s), so that an overlay hiding a value
// fails the tests.
const overlayWithin = 5 * time.Second

// sameValues reports whether got holds exactly want, in any order.
func sameValues(got, want []string) bool {
	got, want = slices.Clone(got), slices.Clone(want)
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(got, want)
}

// TestACMEReplicasTwoValues: a certificate for a name and its wildcard asks
// for two values at one challenge name, and each may reach another replica.
// Two plugin processes on one API server, one value sent to each: both
// answer both values as soon as their informers have both, not after the
// overlay's hold.
func TestACMEReplicasTwoValues(t *testing.T) {
	a := acmeSetup(t)
	s1 := a.s
	s2 := startServer(t, "test/e2e/testdata/Corefile.acme", kubeconfig, append(slices.Clone(a.env), "ACME_UPDATE_PORT="+strconv.Itoa(freePort(t)), "ACME_METRICS_PORT="+strconv.Itoa(freePort(t)))...)
	name := "_acme-challenge." + a.domainA
	for round := range 3 {
		v1, v2 := fmt.Sprintf("apex-%d-%d", round, time.Now().UnixNano()), fmt.Sprintf("wildcard-%d-%d", round, time.Now().UnixNano())
		if r := sendRaw(t, s1, signedUpdate(t, a.zone, a.coreA, name+".", v1, time.Now())); r.Rcode != dns.RcodeSuccess {
			t.Fatalf("update through replica 1: %s", dns.RcodeToString[r.Rcode])
		}
		if r := sendRaw(t, s2, signedUpdate(t, a.zone, a.coreA, name+".", v2, time.Now())); r.Rcode != dns.RcodeSuccess {
			t.Fatalf("update through replica 2: %s", dns.RcodeToString[r.Rcode])
		}
		if got := endpointTargets(t, a.nsA); !sameValues(got, []string{v1, v2}) {
			t.Fatalf("the DNSEndpoint holds %q", got)
		}
		start := time.Now()
		for i, s := range []*server{s1, s2} {
			deadline := start.Add(overlayWithin)
			for got := s.txtValues(t, name); !sameValues(got, []string{v1, v2}); got = s.txtValues(t, name) {
				if time.Now().After(deadline) {
					t.Fatalf("round %d: replica %d answers %q %s after both updates, want both values", round, i+1, got, overlayWithin)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		t.Logf("round %d: both replicas answer both values %s after the updates", round, time.Since(start).Round(time.Millisecond))
		// Clean up through the other replica, as ACME clients may.
		if out, err := nsupdate(t, s2, a.zone, a.coreA, "update delete "+name+" TXT "+v1, "update delete "+name+" TXT "+v2); err != nil {
			t.Fatalf("delete: %v\n%s", err, out)
		}
		for i, s := range []*server{s1, s2} {
			deadline := time.Now().Add(overlayWithin)
			for got := s.txtValues(t, name); len(got) != 0; got = s.txtValues(t, name) {
				if time.Now().After(deadline) {
					t.Fatalf("round %d: replica %d still answers %q after the delete", round, i+1, got)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
}

// TestACMEForeignDelete: a delete of a value in a DNSEndpoint the plugin did
// not write changes nothing in the cluster; the replica that took it keeps
// answering the value.
func TestACMEForeignDelete(t *testing.T) {
	a := acmeSetup(t)
	name := "_acme-challenge." + a.domainA
	kubectl(t, fmt.Sprintf(`
apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata: {name: by-hand, namespace: %s}
spec:
  endpoints:
  - {dnsName: %s, recordType: TXT, targets: [by-hand], recordTTL: 60}
`, a.nsA, name), "apply", "-f", "-")
	waitFor(t, 10*time.Second, func() bool { return slices.Contains(a.s.txtValues(t, name), "by-hand") })
	if out, err := nsupdate(t, a.s, a.zone, a.coreA, "update delete "+name+" TXT by-hand"); err != nil {
		t.Fatalf("delete: %v\n%s", err, out)
	}
	if out := kubectl(t, "", "-n", a.nsA, "get", "dnsendpoint", "by-hand", "-o", "jsonpath={.spec.endpoints[0].targets[0]}"); strings.TrimSpace(out) != "by-hand" {
		t.Fatalf("the hand-made DNSEndpoint changed: %q", out)
	}
	for range 20 {
		if got := a.s.txtValues(t, name); !slices.Contains(got, "by-hand") {
			t.Fatalf("after a delete that changed nothing, the replica answers %q", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestACMEReplicasDeleteThenAdd: a value deleted through one replica and
// added again through the other is in the cluster: both replicas answer it
// within overlayWithin, the first one too (its overlay never hides what its
// index shows; it used to answer NODATA for the overlay's hold, 30 s).
func TestACMEReplicasDeleteThenAdd(t *testing.T) {
	a := acmeSetup(t)
	s1 := a.s
	s2 := startServer(t, "test/e2e/testdata/Corefile.acme", kubeconfig, append(slices.Clone(a.env), "ACME_UPDATE_PORT="+strconv.Itoa(freePort(t)), "ACME_METRICS_PORT="+strconv.Itoa(freePort(t)))...)
	name := "_acme-challenge." + a.domainA
	v := fmt.Sprintf("again-%d", time.Now().UnixNano())
	if r := sendRaw(t, s1, signedUpdate(t, a.zone, a.coreA, name+".", v, time.Now())); r.Rcode != dns.RcodeSuccess {
		t.Fatalf("add through replica 1: %s", dns.RcodeToString[r.Rcode])
	}
	for _, s := range []*server{s1, s2} {
		waitFor(t, overlayWithin, func() bool { return sameValues(s.txtValues(t, name), []string{v}) })
	}
	if out, err := nsupdate(t, s1, a.zone, a.coreA, "update delete "+name+" TXT "+v); err != nil {
		t.Fatalf("delete through replica 1: %v\n%s", err, out)
	}
	if r := sendRaw(t, s2, signedUpdate(t, a.zone, a.coreA, name+".", v, time.Now())); r.Rcode != dns.RcodeSuccess {
		t.Fatalf("add again through replica 2: %s", dns.RcodeToString[r.Rcode])
	}
	if got := endpointTargets(t, a.nsA); !sameValues(got, []string{v}) {
		t.Fatalf("the DNSEndpoint holds %q", got)
	}
	start := time.Now()
	for i, s := range []*server{s1, s2} {
		deadline := start.Add(overlayWithin)
		for got := s.txtValues(t, name); !sameValues(got, []string{v}); got = s.txtValues(t, name) {
			if time.Now().After(deadline) {
				t.Fatalf("replica %d answers %q %s after the value was added again, want it", i+1, got, overlayWithin)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Logf("both replicas answer the value again %s after it was added back", time.Since(start).Round(time.Millisecond))
}
