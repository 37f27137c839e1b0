package index

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// quotaOf returns a Config.Quota: limits by tenant, def for the others.
func quotaOf(def int, limits map[string]int) func(string) int {
	return func(tenant string) int {
		if n, ok := limits[tenant]; ok {
			return n
		}
		return def
	}
}

// refusedNow returns the keys the quota refuses, with their records.
func refusedNow(ix *Index) []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var out []string
	for _, r := range ix.refusalsNow() {
		out = append(out, fmt.Sprintf("%s %d/%d", r.Key, r.Records, r.Quota))
	}
	return out
}

func TestIndexQuota(t *testing.T) {
	const (
		a1 = "a1.example.com. 60 IN A 192.0.2.1"
		a2 = "a2.example.com. 60 IN A 192.0.2.2"
		a3 = "a3.example.com. 60 IN A 192.0.2.3"
		a4 = "a4.example.com. 60 IN A 192.0.2.4"
		b1 = "b1.example.com. 60 IN A 192.0.2.11"
		w1 = "www.example.com. 60 IN A 192.0.2.1"
		w2 = "www.example.com. 60 IN A 192.0.2.2"
	)
	tests := []struct {
		name    string
		policy  Policy
		domains map[string][]string
		quota   func(string) int
		ops     []policyOp
		want    map[string]string // name → node dump, "" when the name must not exist
		events  []string          // rejections reported after the first Flush, in order
		now     []string          // objects refused at the end, by key: "key records/quota"
	}{
		{
			name:  "within the quota every object publishes",
			quota: quotaOf(3, nil),
			ops:   []policyOp{put("Service/a/x", "a", 1, a1, a2), put("Service/a/y", "a", 2, a3)},
			want:  map[string]string{"a1.example.com.": "a1.example.com. [A 60:192.0.2.1]", "a3.example.com.": "a3.example.com. [A 60:192.0.2.3]"},
		},
		{
			name:   "over it the newest object is refused, whole",
			quota:  quotaOf(3, nil),
			ops:    []policyOp{put("Service/a/x", "a", 1, a1, a2), put("Service/a/y", "a", 2, a3, a4)},
			want:   map[string]string{"a1.example.com.": "a1.example.com. [A 60:192.0.2.1]", "a3.example.com.": "", "a4.example.com.": ""},
			events: []string{"a3.example.com. Service/a/y quota "},
			now:    []string{"Service/a/y 2/3"},
		},
		{
			// The order is the objects' creation, not the events': an older
			// object that comes late takes its place.
			name:   "creation time decides, not the order of events",
			quota:  quotaOf(3, nil),
			ops:    []policyOp{put("Service/a/y", "a", 2, a3, a4), put("Service/a/x", "a", 1, a1, a2)},
			want:   map[string]string{"a1.example.com.": "a1.example.com. [A 60:192.0.2.1]", "a3.example.com.": ""},
			events: []string{"a3.example.com. Service/a/y quota "},
			now:    []string{"Service/a/y 2/3"},
		},
		{
			name:   "equal times fall back to the key",
			quota:  quotaOf(1, nil),
			ops:    []policyOp{put("Service/a/y", "a", 1, a2), put("Ingress/a/z", "a", 1, a3)},
			want:   map[string]string{"a2.example.com.": "", "a3.example.com.": "a3.example.com. [A 60:192.0.2.3]"},
			events: []string{"a2.example.com. Service/a/y quota "},
			now:    []string{"Service/a/y 1/1"},
		},
		{
			name:   "deleting an object lets a refused one in",
			quota:  quotaOf(2, nil),
			ops:    []policyOp{put("Service/a/x", "a", 1, a1, a2), put("Service/a/y", "a", 2, a3), del("Service/a/x")},
			want:   map[string]string{"a1.example.com.": "", "a3.example.com.": "a3.example.com. [A 60:192.0.2.3]"},
			events: []string{"a3.example.com. Service/a/y quota "},
		},
		{
			name:   "shrinking an object lets a refused one in",
			quota:  quotaOf(2, nil),
			ops:    []policyOp{put("Service/a/x", "a", 1, a1, a2), put("Service/a/y", "a", 2, a3), put("Service/a/x", "a", 1, a1)},
			want:   map[string]string{"a2.example.com.": "", "a3.example.com.": "a3.example.com. [A 60:192.0.2.3]"},
			events: []string{"a3.example.com. Service/a/y quota "},
		},
		{
			name:   "an older object that grows pushes a newer one out",
			quota:  quotaOf(2, nil),
			ops:    []policyOp{put("Service/a/x", "a", 1, a1), put("Service/a/y", "a", 2, a3), put("Service/a/x", "a", 1, a1, a2)},
			want:   map[string]string{"a2.example.com.": "a2.example.com. [A 60:192.0.2.2]", "a3.example.com.": ""},
			events: []string{"a3.example.com. Service/a/y quota "},
			now:    []string{"Service/a/y 1/2"},
		},
		{
			// An object that fits in no quota is refused alone: the newer
			// ones that fit in what is left publish.
			name:   "an object larger than the quota leaves room for smaller ones",
			quota:  quotaOf(2, nil),
			ops:    []policyOp{put("DNSEndpoint/a/big", "a", 1, a1, a2, a3), put("Service/a/y", "a", 2, a4)},
			want:   map[string]string{"a1.example.com.": "", "a4.example.com.": "a4.example.com. [A 60:192.0.2.4]"},
			events: []string{"a1.example.com. DNSEndpoint/a/big quota "},
			now:    []string{"DNSEndpoint/a/big 3/2"},
		},
		{
			name:  "every tenant has its own quota",
			quota: quotaOf(1, nil),
			ops: []policyOp{
				put("Service/a/x", "a", 1, a1), put("Service/a/y", "a", 2, a2), put("Service/b/x", "b", 3, b1),
			},
			want:   map[string]string{"a2.example.com.": "", "b1.example.com.": "b1.example.com. [A 60:192.0.2.11]"},
			events: []string{"a2.example.com. Service/a/y quota "},
			now:    []string{"Service/a/y 1/1"},
		},
		{
			// With cluster blocks a tenant is "<cluster>/<namespace>": the
			// same namespace in two clusters is two tenants, each with its
			// cluster's quota.
			name:  "cluster-prefixed tenants",
			quota: quotaOf(1, map[string]int{"west/a": 2}),
			ops: []policyOp{
				put("east/Service/a/x", "east/a", 1, a1), put("east/Service/a/y", "east/a", 2, a2),
				put("west/Service/a/x", "west/a", 1, a3), put("west/Service/a/y", "west/a", 2, a4),
			},
			want:   map[string]string{"a2.example.com.": "", "a4.example.com.": "a4.example.com. [A 60:192.0.2.4]"},
			events: []string{"a2.example.com. east/Service/a/y quota "},
			now:    []string{"east/Service/a/y 1/1"},
		},
		{
			name:  "a tenant whose quota is 0 has none",
			quota: quotaOf(1, map[string]int{"a": 0}),
			ops:   []policyOp{put("Service/a/x", "a", 1, a1), put("Service/a/y", "a", 2, a2, a3)},
			want:  map[string]string{"a3.example.com.": "a3.example.com. [A 60:192.0.2.3]"},
		},
		{
			name:  "the plugin's own records count for no tenant",
			quota: quotaOf(1, nil),
			ops: []policyOp{
				func(ix *Index) { ix.Update("Nameserver/kube-system/dns1", qtRRs(a1, a2)) },
				put("Service/a/x", "a", 1, a3),
			},
			want: map[string]string{"a1.example.com.": "a1.example.com. [A 60:192.0.2.1]", "a3.example.com.": "a3.example.com. [A 60:192.0.2.3]"},
		},
		{
			// The parts of one object (the watch layer's unhealthy part) are
			// admitted or refused together.
			name:  "the parts of an object are one",
			quota: quotaOf(2, nil),
			ops: []policyOp{
				put("Ingress/a/x", "a", 1, a1), put("Ingress/a/x#unhealthy", "a", 1, a2, a3), put("Service/a/y", "a", 2, a4),
			},
			want: map[string]string{"a1.example.com.": "", "a2.example.com.": "", "a4.example.com.": "a4.example.com. [A 60:192.0.2.4]"},
			events: []string{
				"a2.example.com. Ingress/a/x#unhealthy quota ", "a1.example.com. Ingress/a/x quota ",
			},
			now: []string{"Ingress/a/x 1/2", "Ingress/a/x#unhealthy 2/2"},
		},
		{
			name:  "an object moved to another tenant leaves the first one's quota",
			quota: quotaOf(1, nil),
			ops: []policyOp{
				put("Service/a/x", "a", 1, a1), put("Service/a/y", "a", 2, a2), put("Service/a/x", "b", 1, a1),
			},
			want:   map[string]string{"a1.example.com.": "a1.example.com. [A 60:192.0.2.1]", "a2.example.com.": "a2.example.com. [A 60:192.0.2.2]"},
			events: []string{"a2.example.com. Service/a/y quota "},
		},
		{
			// A refused object claims no name: under first, another
			// namespace's newer claim owns it until the refused one comes in.
			name:   "first: a refused object claims nothing",
			policy: First,
			quota:  quotaOf(1, nil),
			ops: []policyOp{
				put("Service/a/x", "a", 1, a1), put("Service/a/y", "a", 2, w1), put("Service/b/z", "b", 3, w2),
			},
			want:   map[string]string{"www.example.com.": "www.example.com. [A 60:192.0.2.2]"},
			events: []string{"www.example.com. Service/a/y quota "},
			now:    []string{"Service/a/y 1/1"},
		},
		{
			name:   "first: a re-admitted object takes its name back",
			policy: First,
			quota:  quotaOf(1, nil),
			ops: []policyOp{
				put("Service/a/x", "a", 1, a1), put("Service/a/y", "a", 2, w1), put("Service/b/z", "b", 3, w2),
				del("Service/a/x"),
			},
			want:   map[string]string{"www.example.com.": "www.example.com. [A 60:192.0.2.1]"},
			events: []string{"www.example.com. Service/a/y quota ", "www.example.com. Service/b/z owned a"},
		},
		{
			// The quota counts what a tenant's objects hold, whatever the
			// policy publishes of it.
			name:    "delegated: records outside the domains count",
			policy:  Delegated,
			quota:   quotaOf(1, nil),
			domains: map[string][]string{"a": {"a1.example.com."}},
			ops:     []policyOp{put("Service/a/x", "a", 1, a2), put("Service/a/y", "a", 2, a1)},
			want:    map[string]string{"a1.example.com.": "", "a2.example.com.": ""},
			events:  []string{"a2.example.com. Service/a/x undelegated ", "a1.example.com. Service/a/y quota "},
			now:     []string{"Service/a/y 1/1"},
		},
	}
	for _, tt := range tests {
		for _, live := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/live=%v", tt.name, live), func(t *testing.T) {
				l := &rejectionLog{}
				ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, NS: indexNS, Policy: tt.policy, Domains: tt.domains, Quota: tt.quota, Listener: l})
				t.Cleanup(ix.Close)
				if live {
					ix.Flush()
				}
				for _, op := range tt.ops {
					op(ix)
				}
				if !live {
					ix.Flush()
				}
				for name, want := range tt.want {
					got := ""
					if n := ix.Snapshot().get(name); n != nil {
						got = dumpNode(n)
					}
					if got != want {
						t.Errorf("%s: got %q, want %q", name, got, want)
					}
				}
				if live && !slices.Equal(l.got, tt.events) {
					t.Errorf("reported %q, want %q", l.got, tt.events)
				}
				if got := refusedNow(ix); !slices.Equal(got, tt.now) {
					t.Errorf("refused %q, want %q", got, tt.now)
				}
				checkIndexInvariants(t, ix)
				checkQuota(t, ix)
			})
		}
	}
}

// checkQuota checks the quota's state against its objects: each tenant's
// objects admitted in order while they fit, and the counts.
func checkQuota(t *testing.T, ix *Index) {
	t.Helper()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	byTenant := map[string][]member{}
	ix.objects.each(func(id objectID, wire []byte) {
		c := ix.objects.claim(id)
		if !c.plugin() {
			byTenant[c.Namespace] = append(byTenant[c.Namespace], member{key: ix.objects.key(id), created: c.Created, id: id, records: countWire(wire)})
		}
	})
	refused := 0
	for ns, ms := range byTenant {
		slices.SortFunc(ms, member.compare)
		limit, used, records := ix.quota.limitOf(ns), 0, 0
		for i := 0; i < len(ms); {
			j, n := i+1, ms[i].records
			for ; j < len(ms) && ms[j].partOf(ms[i]); j++ {
				n += ms[j].records
			}
			records += n
			fits := limit <= 0 || used+n <= limit
			if fits {
				used += n
			}
			for _, m := range ms[i:j] {
				if ix.quota.admitted(m.id) != fits {
					t.Errorf("%s: admitted %v, want %v", m.key, ix.quota.admitted(m.id), fits)
				}
				if !fits {
					refused++
				}
			}
			i = j
		}
		tn := ix.quota.tenants[ns]
		if tn == nil || tn.records != records || tn.used != used {
			t.Errorf("tenant %s: %+v, want %d records, %d used", ns, tn, records, used)
		}
	}
	if len(ix.quota.refused) != refused {
		t.Errorf("%d objects refused, want %d", len(ix.quota.refused), refused)
	}
	for ns := range ix.quota.tenants {
		if byTenant[ns] == nil {
			t.Errorf("tenant %s kept without objects", ns)
		}
	}
}

// TestIndexQuotaRandomUpdates: after any sequence of updates, an index
// with quotas answers what a fresh one does that is given the same objects
// in another order, and each tenant's objects are admitted in order.
func TestIndexQuotaRandomUpdates(t *testing.T) {
	zones := []string{"example.com.", "example.org."}
	labels := []string{"a", "b", "*", "c"}
	suffixes := []string{"example.com.", "example.org.", "other.net."}
	namespaces := []string{"n1", "n2", "c/n1", ""}
	quota := quotaOf(4, map[string]int{"n2": 2})
	for _, policy := range []Policy{Union, First} {
		r := rand.New(rand.NewPCG(7, uint64(policy)))
		randName := randomName(r, labels, suffixes)
		ix := New(Config{Zones: zones, SOA: indexSOA, NS: indexNS, Policy: policy, Quota: quota})
		ix.Flush()
		claims := map[string]Claim{}
		refusals := 0
		for step := range 1500 {
			key := fmt.Sprintf("Service/x/o%d", r.IntN(12))
			if r.IntN(4) == 0 {
				key += "#unhealthy"
			}
			claim := Claim{Namespace: namespaces[r.IntN(len(namespaces))], Created: int64(r.IntN(4))}
			if c, ok := claims[strings.TrimSuffix(key, "#unhealthy")]; ok && strings.HasSuffix(key, "#unhealthy") {
				claim = c // a part has its object's claim
			}
			var rrs []dns.RR
			for range r.IntN(4) {
				rrs = append(rrs, qtRR(fmt.Sprintf("%s 60 IN A 192.0.2.%d", randName(), r.IntN(4))))
			}
			ix.UpdateClaim(key, claim, rrs)
			claims[key] = claim
			checkIndexInvariants(t, ix)
			checkQuota(t, ix)
			refusals += len(ix.quota.refused)
			if step%25 != 0 && step != 1499 {
				continue
			}
			fresh := New(Config{Zones: zones, SOA: indexSOA, NS: indexNS, Policy: policy, Quota: quota})
			ix.mu.Lock()
			objects, _ := ix.heldObjects()
			ix.mu.Unlock()
			keys := slices.Collect(maps.Keys(objects))
			r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			for _, key := range keys {
				fresh.UpdateClaim(key, claims[key], objects[key])
			}
			fresh.Flush()
			got, want := dumpSnapshot(ix.Snapshot()), dumpSnapshot(fresh.Snapshot())
			if !slices.Equal(got, want) {
				t.Fatalf("%s, step %d: the index differs from a fresh one\n got %q\nwant %q", policy, step, got, want)
			}
			if got, want := refusedNow(ix), refusedNow(fresh); !slices.Equal(got, want) {
				t.Fatalf("%s, step %d: refused %q, a fresh index %q", policy, step, got, want)
			}
			checkQuota(t, fresh)
			fresh.Close()
		}
		ix.Close()
		if refusals < 500 {
			t.Errorf("%s: %d refusals in all, too few to test", policy, refusals)
		}
	}
}

// TestIndexQuotaViews: the views of a cluster share a Shared, each with
// its own quota over its own records: a view whose filter keeps fewer of
// an object's records can admit what another refuses.
func TestIndexQuotaViews(t *testing.T) {
	sh := newShared()
	cfg := Config{Zones: []string{"example.com."}, SOA: indexSOA, NS: indexNS, Shared: sh, Quota: quotaOf(2, nil)}
	all, some := New(cfg), New(cfg)
	t.Cleanup(some.Close)
	for _, ix := range []*Index{all, some} {
		ix.Flush()
	}
	both := qtRRs("a1.example.com. 60 IN A 192.0.2.1", "a1.example.com. 60 IN A 10.0.0.1")
	all.UpdateClaim("Service/a/x", Claim{Namespace: "a", Created: 1}, both)
	some.UpdateClaim("Service/a/x", Claim{Namespace: "a", Created: 1}, both[:1])
	for _, ix := range []*Index{all, some} {
		ix.UpdateClaim("Service/a/y", Claim{Namespace: "a", Created: 2}, qtRRs("a2.example.com. 60 IN A 192.0.2.2"))
	}
	if all.Snapshot().get("a2.example.com.") != nil {
		t.Error("the view of every address answers the object over its quota")
	}
	if some.Snapshot().get("a2.example.com.") == nil {
		t.Error("the filtered view does not answer the object within its quota")
	}
	checkQuota(t, all)
	checkQuota(t, some)
	// One view going leaves the other's decisions as they were.
	all.Close()
	some.UpdateClaim("Service/a/z", Claim{Namespace: "a", Created: 3}, qtRRs("a3.example.com. 60 IN A 192.0.2.3"))
	if some.Snapshot().get("a3.example.com.") != nil || some.Snapshot().get("a2.example.com.") == nil {
		t.Error("the filtered view's quota changed when the other view closed")
	}
	checkQuota(t, some)
}

// TestIndexQuotaRefusedKeepsSerial: a refused object changes neither the
// zone's data nor its serial, and nothing is announced.
func TestIndexQuotaRefusedKeepsSerial(t *testing.T) {
	var serials []uint32
	ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, NS: indexNS, Quota: quotaOf(1, nil),
		Listener: testListener{serial: func(_ string, s uint32) { serials = append(serials, s) }}})
	t.Cleanup(ix.Close)
	ix.Flush()
	put("Service/a/x", "a", 1, "a1.example.com. 60 IN A 192.0.2.1")(ix)
	before, n := ix.Snapshot().Serial(0), len(serials)
	put("Service/a/y", "a", 2, "a2.example.com. 60 IN A 192.0.2.2")(ix)
	put("Service/a/y", "a", 2, "a2.example.com. 60 IN A 192.0.2.3")(ix)
	if ix.Snapshot().Serial(0) != before || len(serials) != n {
		t.Errorf("serial changed for a refused object: %d → %d, announced %v", before, ix.Snapshot().Serial(0), serials[n:])
	}
}
