package index

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/miekg/dns"
)

// policyOp is one change applied to an index in a policy test.
type policyOp func(ix *Index)

// put publishes records for key, claimed by namespace ns at time created.
func put(key, ns string, created int64, rrs ...string) policyOp {
	return func(ix *Index) { ix.UpdateClaim(key, Claim{Namespace: ns, Created: created}, qtRRs(rrs...)) }
}

// del removes key.
func del(key string) policyOp { return func(ix *Index) { ix.UpdateClaim(key, Claim{}, nil) } }

// delegate sets the run-time domains of ns.
func delegate(ns string, domains ...string) policyOp {
	return func(ix *Index) { ix.SetDomains(ns, domains) }
}

// rejectionLog records the rejections an index reports.
type rejectionLog struct {
	testListener
	got []string
}

func (l *rejectionLog) Rejected(r Rejection) {
	l.got = append(l.got, fmt.Sprintf("%s %s %s %s", r.Name, r.Key, r.Reason, r.Owner))
}

func TestIndexPolicy(t *testing.T) {
	const (
		wwwA   = "www.example.com. 60 IN A 192.0.2.1"
		wwwB   = "www.example.com. 60 IN A 192.0.2.2"
		wwwA2  = "www.example.com. 60 IN A 192.0.2.3"
		shopA  = "shop.a.example.com. 60 IN A 192.0.2.1"
		shopB  = "shop.a.example.com. 60 IN A 192.0.2.2"
		starB  = "*.example.com. 60 IN A 192.0.2.2"
		starAB = "*.a.example.com. 60 IN A 192.0.2.2"
		starAA = "*.a.example.com. 60 IN A 192.0.2.1"
		apexB  = "example.com. 60 IN A 192.0.2.2"
		nsB    = "ns.example.com. 60 IN A 192.0.2.2"
		starNS = "*.ns.example.com. 60 IN A 192.0.2.2"
	)
	tests := []struct {
		name    string
		policy  Policy
		domains map[string][]string
		ops     []policyOp
		want    map[string]string // name → node dump, "" when the name must not exist
		events  []string          // rejections reported, in order
		now     []string          // rejections in force at the end (Rejections)
	}{
		{
			name:   "union unites namespaces",
			policy: Union,
			ops:    []policyOp{put("Service/a/x", "a", 2, wwwA), put("Service/b/y", "b", 1, wwwB), put("Service/b/z", "b", 1, apexB)},
			want: map[string]string{
				"www.example.com.": "www.example.com. [A 60:192.0.2.1 60:192.0.2.2]",
				"example.com.":     "example.com. [A 60:192.0.2.2]",
			},
		},
		{
			name:   "first: the older claim owns, whatever the event order",
			policy: First,
			ops:    []policyOp{put("Service/b/y", "b", 2, wwwB), put("Service/a/x", "a", 1, wwwA)},
			want:   map[string]string{"www.example.com.": "www.example.com. [A 60:192.0.2.1]"},
			events: []string{"www.example.com. Service/b/y owned a"},
			now:    []string{"www.example.com. Service/b/y owned a"},
		},
		{
			name:   "first: equal times fall back to the key",
			policy: First,
			ops:    []policyOp{put("Service/b/y", "b", 1, wwwB), put("Ingress/b/y", "b", 1, wwwB), put("Service/a/x", "a", 1, wwwA)},
			want:   map[string]string{"www.example.com.": "www.example.com. [A 60:192.0.2.2]"},
			now:    []string{"www.example.com. Service/a/x owned b"},
		},
		{
			name:   "first: the same namespace merges",
			policy: First,
			ops:    []policyOp{put("Service/a/x", "a", 1, wwwA), put("Ingress/a/z", "a", 5, wwwA2), put("Service/b/y", "b", 3, wwwB)},
			want:   map[string]string{"www.example.com.": "www.example.com. [A 60:192.0.2.1 60:192.0.2.3]"},
			now:    []string{"www.example.com. Service/b/y owned a"},
		},
		{
			// Ownership is a function of the claims that exist, so that it
			// survives a restart: the oldest remaining claim decides.
			name:   "first: ownership follows the oldest remaining claim",
			policy: First,
			ops: []policyOp{
				put("Service/a/x", "a", 1, wwwA), put("Ingress/a/z", "a", 4, wwwA2),
				put("Service/c/w", "c", 3, "www.example.com. 60 IN A 192.0.2.9"), put("Service/b/y", "b", 2, wwwB),
				del("Service/a/x"),
			},
			want: map[string]string{"www.example.com.": "www.example.com. [A 60:192.0.2.2]"},
			now:  []string{"www.example.com. Ingress/a/z owned b", "www.example.com. Service/c/w owned b"},
		},
		{
			name:   "first: takeover after the owner is gone",
			policy: First,
			ops: []policyOp{
				put("Service/a/x", "a", 1, wwwA), put("Service/c/w", "c", 3, "www.example.com. 60 IN A 192.0.2.9"), put("Service/b/y", "b", 2, wwwB),
				del("Service/a/x"),
			},
			want: map[string]string{"www.example.com.": "www.example.com. [A 60:192.0.2.2]"},
			events: []string{
				"www.example.com. Service/c/w owned a", "www.example.com. Service/b/y owned a",
				"www.example.com. Service/c/w owned b",
			},
			now: []string{"www.example.com. Service/c/w owned b"},
		},
		{
			name:   "first: a recreated object is a new claim, behind the others",
			policy: First,
			ops: []policyOp{
				put("Service/a/x", "a", 1, wwwA), put("Service/b/y", "b", 2, wwwB),
				del("Service/a/x"), put("Service/a/x", "a", 3, wwwA),
			},
			want: map[string]string{"www.example.com.": "www.example.com. [A 60:192.0.2.2]"},
			now:  []string{"www.example.com. Service/a/x owned b"},
		},
		{
			name:   "first: the apex, the nameserver names and wildcards covering them are reserved",
			policy: First,
			ops: []policyOp{
				put("Service/b/y", "b", 1, apexB, nsB, starB, starNS, "x.ns.example.com. 60 IN A 192.0.2.2"),
				put("Nameserver/kube-system/dns", "", 9, "ns.example.com. 60 IN A 192.0.2.53"),
			},
			want: map[string]string{
				"example.com.":        "example.com.",
				"ns.example.com.":     "ns.example.com. [A 60:192.0.2.53]",
				"*.example.com.":      "",
				"*.ns.example.com.":   "",
				"x.ns.example.com.":   "x.ns.example.com. [A 60:192.0.2.2]",
				"www.example.com.":    "",
				"shop.a.example.com.": "",
			},
			now: []string{
				"*.example.com. Service/b/y reserved ", "*.ns.example.com. Service/b/y reserved ",
				"example.com. Service/b/y reserved ", "ns.example.com. Service/b/y reserved ",
			},
		},
		{
			name:   "first: a wildcard below the apex is a name like others",
			policy: First,
			ops:    []policyOp{put("Service/a/x", "a", 1, shopA), put("Service/b/y", "b", 2, starAB, shopB)},
			want: map[string]string{
				"shop.a.example.com.": "shop.a.example.com. [A 60:192.0.2.1]",
				"*.a.example.com.":    "*.a.example.com. [A 60:192.0.2.2]",
			},
			now: []string{"shop.a.example.com. Service/b/y owned a"},
		},
		{
			name:   "delegated: only inside the namespace's domains; none without domains",
			policy: Delegated,
			domains: map[string][]string{
				"a": {"a.example.com."},
			},
			ops: []policyOp{
				put("Service/a/x", "a", 2, shopA, starAA, wwwA),
				put("Service/b/y", "b", 1, shopB, starAB, starB),
			},
			want: map[string]string{
				"shop.a.example.com.": "shop.a.example.com. [A 60:192.0.2.1]",
				"*.a.example.com.":    "*.a.example.com. [A 60:192.0.2.1]",
				"www.example.com.":    "",
				"*.example.com.":      "",
			},
			now: []string{
				"*.a.example.com. Service/b/y undelegated ", "*.example.com. Service/b/y reserved ",
				"shop.a.example.com. Service/b/y undelegated ", "www.example.com. Service/a/x undelegated ",
			},
		},
		{
			name:    "delegated: first rules inside shared domains",
			policy:  Delegated,
			domains: map[string][]string{"a": {"a.example.com."}, "b": {"example.com."}},
			ops:     []policyOp{put("Service/b/y", "b", 2, shopB, apexB), put("Service/a/x", "a", 1, shopA)},
			want: map[string]string{
				"shop.a.example.com.": "shop.a.example.com. [A 60:192.0.2.1]",
				"example.com.":        "example.com.",
			},
			now: []string{"example.com. Service/b/y reserved ", "shop.a.example.com. Service/b/y owned a"},
		},
		{
			name:   "delegated: domains given and taken at run time",
			policy: Delegated,
			ops: []policyOp{
				put("Service/a/x", "a", 1, shopA), put("Service/b/y", "b", 2, "www.b.example.com. 60 IN A 192.0.2.2"),
				delegate("a", "a.example.com."), delegate("b", "b.example.com."), delegate("a"),
			},
			want: map[string]string{
				"shop.a.example.com.": "",
				"www.b.example.com.":  "www.b.example.com. [A 60:192.0.2.2]",
			},
			events: []string{
				"shop.a.example.com. Service/a/x undelegated ", "www.b.example.com. Service/b/y undelegated ",
				"shop.a.example.com. Service/a/x undelegated ",
			},
			now: []string{"shop.a.example.com. Service/a/x undelegated "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &rejectionLog{}
			ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, NS: indexNS, Policy: tt.policy, Domains: tt.domains, Listener: l})
			t.Cleanup(ix.Close)
			ix.Flush()
			for _, op := range tt.ops {
				op(ix)
			}
			for name, want := range tt.want {
				n := ix.Snapshot().get(name)
				got := ""
				if n != nil {
					got = dumpNode(n)
				}
				if got != want {
					t.Errorf("%s: got %q, want %q", name, got, want)
				}
			}
			if tt.events != nil && !slices.Equal(l.got, tt.events) {
				t.Errorf("reported %q, want %q", l.got, tt.events)
			}
			var now []string
			for _, r := range ix.rejectionsNow() {
				now = append(now, fmt.Sprintf("%s %s %s %s", r.Name, r.Key, r.Reason, r.Owner))
			}
			if !slices.Equal(now, tt.now) {
				t.Errorf("rejections %q, want %q", now, tt.now)
			}
			checkIndexInvariants(t, ix)
		})
	}
}

// A rejected claim changes neither the zone's data nor its serial: no NOTIFY,
// and a transfer shows only what is answered.
func TestIndexPolicyRejectedClaimKeepsSerial(t *testing.T) {
	var serials []uint32
	ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, NS: indexNS, Policy: First,
		Listener: testListener{serial: func(_ string, s uint32) { serials = append(serials, s) }}})
	t.Cleanup(ix.Close)
	ix.Flush()
	ix.UpdateClaim("Service/a/x", Claim{Namespace: "a", Created: 1}, qtRRs("www.example.com. 60 IN A 192.0.2.1"))
	before := ix.Snapshot().Serial(0)
	n := len(serials)
	ix.UpdateClaim("Service/b/y", Claim{Namespace: "b", Created: 2}, qtRRs("www.example.com. 60 IN A 192.0.2.2"))
	if ix.Snapshot().Serial(0) != before || len(serials) != n {
		t.Errorf("serial changed for a rejected claim: %d → %d, announced %v", before, ix.Snapshot().Serial(0), serials[n:])
	}
	for _, rr := range ix.Snapshot().get("www.example.com.").rrs(dns.TypeA) {
		if rr.(*dns.A).A.String() != "192.0.2.1" {
			t.Errorf("rejected record answered: %v", rr)
		}
	}
}

// Until the first Flush nothing is reported; then only what remains rejected.
func TestIndexPolicyRejectionsReportedAtFlush(t *testing.T) {
	l := &rejectionLog{}
	ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, NS: indexNS, Policy: Delegated, Listener: l})
	t.Cleanup(ix.Close)
	put("Service/a/x", "a", 1, "www.a.example.com. 60 IN A 192.0.2.1")(ix)
	put("Service/b/y", "b", 1, "www.a.example.com. 60 IN A 192.0.2.2")(ix)
	delegate("a", "a.example.com.")(ix)
	if len(l.got) != 0 {
		t.Errorf("reported before the first Flush: %q", l.got)
	}
	ix.Flush()
	if want := []string{"www.a.example.com. Service/b/y undelegated "}; !slices.Equal(l.got, want) {
		t.Errorf("reported %q, want %q", l.got, want)
	}
}

// conflictKeysLog records the objects of each conflict.
type conflictKeysLog struct {
	testListener
	got []string
}

func (l *conflictKeysLog) Conflicted(c Conflict) {
	l.got = append(l.got, fmt.Sprintf("%s %q %q", c.Name, c.Keys, c.Namespaces))
}

// A conflict names the objects the policy accepted, never the rejected ones.
func TestIndexPolicyConflictKeys(t *testing.T) {
	l := &conflictKeysLog{}
	ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, NS: indexNS, Policy: First, Listener: l})
	t.Cleanup(ix.Close)
	ix.Flush()
	put("Service/a/x", "a", 1, "www.example.com. 60 IN A 192.0.2.1")(ix)
	put("Service/b/y", "b", 2, "www.example.com. 60 IN A 192.0.2.2")(ix)
	put("Ingress/a/z", "a", 3, "www.example.com. 60 IN A 192.0.2.3")(ix)
	want := []string{`www.example.com. ["Ingress/a/z" "Service/a/x"] ["a" "a"]`}
	if !slices.Equal(l.got, want) {
		t.Errorf("conflicts %q, want %q", l.got, want)
	}
}

// TestIndexPolicyRandomUpdates applies random claims of random namespaces
// (records in and out of the zones, several objects per name, the plugin's
// own claims, domains delegated at run time) under each policy, and checks
// that the index stays equal to one built from scratch from its objects and
// claims, given in another order: what the index keeps per name (the keys
// of its objects) rebuilds the same contributions as the objects; and that
// OwnersBelow answers as a walk over every object does.
func TestIndexPolicyRandomUpdates(t *testing.T) {
	zones := []string{"example.com.", "sub.example.com.", "example.org."}
	labels := []string{"a", "b", "*", "sub", "c", "ns"}
	suffixes := []string{"example.com.", "sub.example.com.", "example.org.", "other.net."}
	namespaces := []string{"n1", "n2", "n3", ""}
	for _, policy := range []Policy{Union, First, Delegated} {
		r := rand.New(rand.NewPCG(3, uint64(policy)))
		randName := randomName(r, labels, suffixes)
		randRR := func() dns.RR {
			name, ttl := randName(), 30+r.IntN(2)*30
			switch r.IntN(6) {
			case 0:
				return qtRR(fmt.Sprintf("%s %d IN CNAME %s", name, ttl, randName()))
			case 1:
				return qtRR(fmt.Sprintf("%s %d IN AAAA 2001:db8::%d", name, ttl, r.IntN(3)))
			case 2:
				return qtRR(fmt.Sprintf("%s %d IN NS %s", name, ttl, randName()))
			case 3:
				return qtRR(fmt.Sprintf(`%s %d IN TXT "%d"`, name, ttl, r.IntN(3)))
			default:
				return qtRR(fmt.Sprintf("%s %d IN A 192.0.2.%d", name, ttl, r.IntN(3)))
			}
		}
		ix := New(Config{Zones: zones, SOA: indexSOA, NS: indexNS, Policy: policy})
		ix.Flush()
		claims := map[string]Claim{}
		for step := range 2000 {
			if r.IntN(10) == 0 {
				ix.SetDomains(namespaces[r.IntN(3)], []string{randName()})
			}
			key := fmt.Sprintf("obj%d", r.IntN(10))
			claim := Claim{Namespace: namespaces[r.IntN(len(namespaces))], Created: int64(r.IntN(3))}
			var rrs []dns.RR
			for range r.IntN(6) {
				rrs = append(rrs, randRR())
			}
			ix.UpdateClaim(key, claim, rrs)
			claims[key] = claim
			checkIndexInvariants(t, ix)
			if step%25 != 0 && step != 1999 {
				continue
			}
			for _, name := range append([]string{"example.com.", "sub.example.com.", "com.", "other.net."}, randName(), randName(), randName()) {
				if got, want := ix.OwnersBelow(name), ownersWalk(ix, name); !slices.Equal(got, want) {
					t.Fatalf("%s, step %d: OwnersBelow(%s) = %q, a walk finds %q", policy, step, name, got, want)
				}
			}
			fresh := New(Config{Zones: zones, SOA: indexSOA, NS: indexNS, Policy: policy})
			ix.mu.Lock()
			for ns, domains := range ix.rules.domains {
				fresh.SetDomains(ns, domains)
			}
			objects, held := ix.heldObjects()
			for key, claim := range held {
				if claim != claims[key] {
					t.Errorf("%s: object with claim %+v held, %+v given", key, claim, claims[key])
				}
			}
			ix.mu.Unlock()
			keys := slices.Collect(maps.Keys(objects))
			r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			for _, key := range keys {
				slices.Reverse(objects[key])
				fresh.UpdateClaim(key, claims[key], objects[key])
			}
			fresh.Flush()
			got, want := dumpSnapshot(ix.Snapshot()), dumpSnapshot(fresh.Snapshot())
			fresh.Close()
			if !slices.Equal(got, want) {
				t.Fatalf("%s, step %d: the index differs from a fresh one\n got %q\nwant %q", policy, step, got, want)
			}
		}
		ix.Close()
	}
}

// TestIndexNameserversReserved: under every policy the nameserver names,
// the names between them and the apex, and the wildcards that would answer
// for them belong to the plugin's own sources; under union the apex and its
// wildcard stay the tenants', but for the wildcard while a nameserver name
// does not exist, which it would answer for.
func TestIndexNameserversReserved(t *testing.T) {
	const (
		ns      = "dns1.kube-system.example.com."
		nsB     = ns + " 60 IN A 198.51.100.66"
		aboveNS = "kube-system.example.com. 60 IN NS evil.example.net."
		starKS  = "*.kube-system.example.com. 60 IN A 198.51.100.66"
		starB   = "*.example.com. 60 IN A 198.51.100.66"
		apexB   = "example.com. 60 IN A 198.51.100.66"
		belowNS = "x.dns1.kube-system.example.com. 60 IN A 198.51.100.66"
		nsOwn   = ns + " 60 IN A 192.0.2.53"
	)
	nsRRs := func(zone string) []dns.RR {
		return []dns.RR{&dns.NS{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: 60}, Ns: ns}}
	}
	tenant := put("Service/b/y", "b", 1, nsB, aboveNS, starKS, starB, apexB)
	own := put("Nameserver/kube-system/dns1", "", 9, nsOwn)
	for _, tc := range []struct {
		name   string
		policy Policy
		ops    []policyOp
		want   map[string]string // name → node dump, "" when the name must not exist
		now    []string
	}{
		{
			name: "union, the nameserver's Service without an address", policy: Union, ops: []policyOp{tenant},
			want: map[string]string{ns: "", "kube-system.example.com.": "", "*.example.com.": "", "example.com.": "example.com. [A 60:198.51.100.66]"},
			now: []string{
				"*.example.com. Service/b/y reserved ", "*.kube-system.example.com. Service/b/y reserved ",
				ns + " Service/b/y reserved ", "kube-system.example.com. Service/b/y reserved ",
			},
		},
		{
			name: "union, with the nameserver's address", policy: Union, ops: []policyOp{tenant, own},
			want: map[string]string{
				ns: ns + " [A 60:192.0.2.53]", "*.example.com.": "*.example.com. [A 60:198.51.100.66]",
				"example.com.": "example.com. [A 60:198.51.100.66] wildcard=*.example.com.",
			},
			now: []string{
				"*.kube-system.example.com. Service/b/y reserved ", ns + " Service/b/y reserved ",
				"kube-system.example.com. Service/b/y reserved ",
			},
		},
		{
			name: "union, the address comes first and goes", policy: Union, ops: []policyOp{own, tenant, del("Nameserver/kube-system/dns1")},
			want: map[string]string{ns: "", "*.example.com.": ""},
			now: []string{
				"*.example.com. Service/b/y reserved ", "*.kube-system.example.com. Service/b/y reserved ",
				ns + " Service/b/y reserved ", "kube-system.example.com. Service/b/y reserved ",
			},
		},
		{
			// A name below the nameserver name makes it exist (an empty
			// non-terminal): the apex wildcard no longer answers for it.
			name: "union, a name below the nameserver name", policy: Union, ops: []policyOp{tenant, put("Service/c/z", "c", 2, belowNS)},
			want: map[string]string{ns: ns, "*.example.com.": "*.example.com. [A 60:198.51.100.66]"},
			now: []string{
				"*.kube-system.example.com. Service/b/y reserved ", ns + " Service/b/y reserved ",
				"kube-system.example.com. Service/b/y reserved ",
			},
		},
		{
			name: "first", policy: First, ops: []policyOp{tenant, own},
			want: map[string]string{ns: ns + " [A 60:192.0.2.53]", "*.example.com.": "", "example.com.": "example.com."},
			now: []string{
				"*.example.com. Service/b/y reserved ", "*.kube-system.example.com. Service/b/y reserved ",
				ns + " Service/b/y reserved ", "example.com. Service/b/y reserved ",
				"kube-system.example.com. Service/b/y reserved ",
			},
		},
		{
			name: "delegated, even inside the namespace's domains", policy: Delegated, ops: []policyOp{delegate("b", "example.com."), tenant, own},
			want: map[string]string{ns: ns + " [A 60:192.0.2.53]", "kube-system.example.com.": "kube-system.example.com."},
			now: []string{
				"*.example.com. Service/b/y reserved ", "*.kube-system.example.com. Service/b/y reserved ",
				ns + " Service/b/y reserved ", "example.com. Service/b/y reserved ",
				"kube-system.example.com. Service/b/y reserved ",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, NS: nsRRs, Policy: tc.policy})
			t.Cleanup(ix.Close)
			ix.Flush()
			for _, op := range tc.ops {
				op(ix)
			}
			for name, want := range tc.want {
				got := ""
				if n := ix.Snapshot().get(name); n != nil {
					got = dumpNode(n)
				}
				if got != want {
					t.Errorf("%s: got %q, want %q", name, got, want)
				}
			}
			var now []string
			for _, r := range ix.rejectionsNow() {
				now = append(now, fmt.Sprintf("%s %s %s %s", r.Name, r.Key, r.Reason, r.Owner))
			}
			if !slices.Equal(now, tc.now) {
				t.Errorf("rejections %q, want %q", now, tc.now)
			}
			checkIndexInvariants(t, ix)
		})
	}
}
