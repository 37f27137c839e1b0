package acmeupdate

import (
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

func TestOwnership(t *testing.T) {
	owners := map[string][]string{ // name → the namespaces owning it or a name below
		"a.example.com.":      {"team-a"},
		"www.a.example.com.":  {"team-a"},
		"example.com.":        {"", "team-a", "team-b"},
		"ns.example.com.":     {""},
		"shared.example.com.": {"team-a", "team-b"},
	}
	delegated := map[string]string{"team-a": "a.example.com.", "team-b": "b.example.com."}
	o := Ownership{
		Owners:     func(_, name string) []string { return owners[name] },
		MayPublish: func(ns, name string) bool { return dns.IsSubDomain(delegated[ns], name) },
		// A nameserver name that no object publishes (no glue), in a domain
		// delegated to team-a, and one outside the zone.
		Nameservers: []string{"ns1.a.example.com.", "ns.example.net."},
	}
	cases := []struct {
		policy   index.Policy
		ns, name string
		ok       bool
	}{
		{index.Union, "team-b", "b.example.com.", true},
		{index.Union, "team-b", "example.com.", true},    // no nameserver one label below the apex
		{index.First, "team-a", "a.example.com.", false}, // above ns1.a.example.com.
		{index.First, "team-a", "www.a.example.com.", true},
		{index.First, "team-b", "a.example.com.", false},
		{index.First, "team-b", "free.example.com.", true},
		{index.First, "team-b", "example.com.", false},
		{index.First, "team-a", "ns.example.com.", false},
		{index.First, "team-a", "shared.example.com.", false},
		{index.Delegated, "team-a", "x.a.example.com.", true},
		{index.Delegated, "team-b", "b.example.com.", true},
		{index.Delegated, "team-b", "a.example.com.", false},
		{index.Delegated, "team-b", "free.example.com.", false},
		// The nameserver names are the DNS server's under every policy;
		// the names above them under first and delegated.
		{index.Union, "team-a", "ns1.a.example.com.", false},
		{index.First, "team-a", "ns1.a.example.com.", false},
		{index.Delegated, "team-a", "ns1.a.example.com.", false},
		{index.Delegated, "team-a", "a.example.com.", false},
		// Under union too, a name between a nameserver name and the apex
		// (the index reserves it; its wildcard covers ns1.a.example.com.).
		{index.Union, "team-a", "a.example.com.", false},
		{index.Delegated, "team-a", "www.a.example.com.", true},
	}
	for _, c := range cases {
		o.Policy = c.policy
		ok, why := o.MayChallenge(c.ns, "example.com.", c.name)
		if ok != c.ok || !ok && why == "" {
			t.Errorf("%s: %s at %s: %v (%q), want %v", c.policy, c.ns, c.name, ok, why, c.ok)
		}
	}
}

// TestOwnershipApexWildcard: under union the apex's challenge is every
// key's, unless a nameserver name is one label below the apex, where the
// apex's wildcard would cover it; names between a nameserver name and the
// apex are the server's under every policy.
func TestOwnershipApexWildcard(t *testing.T) {
	cases := []struct {
		nameserver, name string
		ok               bool
	}{
		{"dns1.kube-system.example.com.", "example.com.", true},
		{"dns1.kube-system.example.com.", "kube-system.example.com.", false},
		{"dns1.kube-system.example.com.", "dns1.kube-system.example.com.", false},
		{"dns1.kube-system.example.com.", "other.example.com.", true},
		{"ns1.example.com.", "example.com.", false}, // *.example.com. covers ns1
		{"ns1.example.com.", "ns2.example.com.", true},
		{"ns.example.net.", "example.com.", true}, // outside the zone
	}
	for _, c := range cases {
		o := Ownership{Policy: index.Union, Nameservers: []string{c.nameserver}}
		if ok, why := o.MayChallenge("team-a", "example.com.", c.name); ok != c.ok || !ok && why == "" {
			t.Errorf("nameserver %s, challenge at %s: %v (%q), want %v", c.nameserver, c.name, ok, why, c.ok)
		}
	}
}

// TestOwnershipNestedZones: the apex of a nested zone (and what its
// wildcard covers) is the server's under first and delegated, also through
// an update that names the outer zone, and so are the names above it.
func TestOwnershipNestedZones(t *testing.T) {
	o := Ownership{
		Zones:      []string{"example.com.", "sub.example.com.", "c.b.example.com."},
		Owners:     func(_, name string) []string { return nil }, // nobody publishes there
		MayPublish: func(string, string) bool { return true },
	}
	cases := []struct {
		policy     index.Policy
		zone, name string
		ok         bool
	}{
		{index.First, "example.com.", "sub.example.com.", false},
		{index.First, "sub.example.com.", "sub.example.com.", false},
		{index.Delegated, "example.com.", "sub.example.com.", false},
		{index.First, "example.com.", "b.example.com.", false}, // *.b covers c.b.example.com.
		{index.Delegated, "example.com.", "c.b.example.com.", false},
		{index.First, "example.com.", "www.sub.example.com.", true},
		{index.First, "sub.example.com.", "www.sub.example.com.", true},
		{index.First, "example.com.", "other.example.com.", true},
		{index.Union, "example.com.", "sub.example.com.", true}, // every key may, as at the apex
	}
	for _, c := range cases {
		o.Policy = c.policy
		if ok, why := o.MayChallenge("team-a", c.zone, c.name); ok != c.ok || !ok && why == "" {
			t.Errorf("%s: update of zone %s at %s: %v (%q), want %v", c.policy, c.zone, c.name, ok, why, c.ok)
		}
	}
}

// incompleteAuth is an Authorizer whose data is not whole yet: it would let
// anyone through.
type incompleteAuth struct{ complete bool }

func (a *incompleteAuth) MayChallenge(string, string, string) (bool, string) { return true, "" }
func (a *incompleteAuth) Complete() (bool, string) {
	if !a.complete {
		return false, "Ingress is refused by the API server"
	}
	return true, ""
}

// TestIncompleteFailsClosed: while the data of the ownership decision is not
// whole, no update is accepted: SERVFAIL, signed, counted, logged, nothing
// stored; once it is, the same update goes through.
func TestIncompleteFailsClosed(t *testing.T) {
	u, store, rejected := testUpdater(t, nil)
	auth := &incompleteAuth{}
	u.cfg.Authorizer = auth
	counted := rejectedCount(t, testZone, ReasonIncomplete)
	send := func() *dns.Msg {
		m := updateMsg(testZone)
		m.Id = dns.Id() // a new message each time, not a replay
		m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)})
		wire, _ := signed(t, m, keyA, dns.HmacSHA256, secretA, time.Now())
		reply, _ := serve(t, u, wire)
		return reply
	}
	reply := send()
	if reply.Rcode != dns.RcodeServerFailure || reply.IsTsig() == nil || len(*rejected) != 1 || (*rejected)[0].Reason != ReasonIncomplete {
		t.Fatalf("incomplete: %s signed=%v, rejections %v", dns.RcodeToString[reply.Rcode], reply.IsTsig() != nil, *rejected)
	}
	if got := rejectedCount(t, testZone, ReasonIncomplete); got != counted+1 {
		t.Errorf("update_rejected_total{reason=incomplete} went from %v to %v", counted, got)
	}
	if got := store.values("team-a", challengeA); len(got) != 0 {
		t.Fatalf("stored while incomplete: %q", got)
	}
	auth.complete = true
	if reply := send(); reply.Rcode != dns.RcodeSuccess {
		t.Fatalf("complete: %s", dns.RcodeToString[reply.Rcode])
	}
}
