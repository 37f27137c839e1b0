package acmeupdate

import (
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// replica is one plugin instance: its own Updater and overlay, its own
// (lagging) index, and the store every replica shares.
type replica struct {
	u     *Updater
	index memZone // what this replica's informer has brought so far
}

func newReplicas(t *testing.T, n int) ([]*replica, *memStore) {
	t.Helper()
	store := newMemStore()
	out := make([]*replica, n)
	for i := range out {
		r := &replica{}
		u, _, _ := testUpdater(t, nil)
		u.cfg.Store = store
		u.cfg.Zone = ZoneFunc(func(name string, t uint16) []dns.RR { return r.index.Records(name, t) })
		r.u = u
		out[i] = r
	}
	return out, store
}

// send signs an update built by build with team-a's key, sends it to r and
// returns the rcode.
func (r *replica) send(t *testing.T, build func(m *dns.Msg)) int {
	t.Helper()
	m := updateMsg(testZone)
	build(m)
	wire, _ := signed(t, m, keyA, dns.HmacSHA256, secretA, time.Now())
	reply, _ := serve(t, r.u, wire)
	return reply.Rcode
}

// answer returns the TXT values r answers at name: the overlay's when it
// has an entry, else the index's.
func (r *replica) answer(name string) []string {
	zone := r.index.Records(name, dns.TypeTXT)
	if rrs, ok := r.u.Answer(name, zone); ok {
		zone = rrs
	}
	v := txtValues(zone)
	slices.Sort(v)
	return v
}

// TestOverlayTwoReplicas: an apex and wildcard certificate asks for two
// values at one name, each sent to another replica. Whatever each replica's
// index has seen, it answers its own value, and both once its index has seen
// the other's: an overlay holds the change its replica made, never a copy of
// the RRset that hides what others wrote.
func TestOverlayTwoReplicas(t *testing.T) {
	rs, store := newReplicas(t, 2)
	a, b := rs[0], rs[1]
	add := func(v string) func(m *dns.Msg) {
		return func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, challengeA, 60, v)}) }
	}
	if rc := a.send(t, add(acmeValue)); rc != dns.RcodeSuccess {
		t.Fatal(dns.RcodeToString[rc])
	}
	if rc := b.send(t, add(acmeValue2)); rc != dns.RcodeSuccess {
		t.Fatal(dns.RcodeToString[rc])
	}
	both := []string{acmeValue2, acmeValue}
	slices.Sort(both)
	if got := store.values("team-a", challengeA); len(got) != 2 {
		t.Fatalf("store: %q", got)
	}
	steps := []struct {
		what  string
		index []string // what both indexes show
		a, b  []string // what a and b answer
	}{
		{"nothing seen yet", nil, []string{acmeValue}, []string{acmeValue2}},
		{"the first write seen", []string{acmeValue}, []string{acmeValue}, both},
		{"both writes seen", both, both, both},
	}
	for _, s := range steps {
		for _, r := range rs {
			r.index = nil
			for _, v := range s.index {
				r.index = append(r.index, txt(t, challengeA, 60, v))
			}
		}
		if got := a.answer(challengeA); !slices.Equal(got, s.a) {
			t.Errorf("%s: replica a answers %q, want %q", s.what, got, s.a)
		}
		if got := b.answer(challengeA); !slices.Equal(got, s.b) {
			t.Errorf("%s: replica b answers %q, want %q", s.what, got, s.b)
		}
	}
	// The indexes agree with both changes: the overlays have stepped aside.
	for i, r := range rs {
		if _, ok := r.u.Answer(challengeA, r.index.Records(challengeA, dns.TypeTXT)); ok {
			t.Errorf("replica %d: the overlay still answers once the index agrees", i)
		}
	}
	// Replica b removes a's value (ACME cleans up through another replica):
	// each replica answers what its index shows, and stops answering the
	// value as soon as its index drops it.
	if rc := b.send(t, func(m *dns.Msg) { m.Remove([]dns.RR{txt(t, challengeA, 0, acmeValue)}) }); rc != dns.RcodeSuccess {
		t.Fatal(dns.RcodeToString[rc])
	}
	for i, r := range rs {
		if got := r.answer(challengeA); !slices.Equal(got, both) {
			t.Errorf("after b's delete, replica %d (index not updated yet) answers %q", i, got)
		}
		r.index = memZone{txt(t, challengeA, 60, acmeValue2)}
		if got := r.answer(challengeA); !slices.Equal(got, []string{acmeValue2}) {
			t.Errorf("after b's delete, replica %d (index updated) answers %q", i, got)
		}
	}
}

// TestOverlayNeverHidesTheIndex: a value deleted through one replica and
// added again through another is in the cluster: the first replica answers
// it as soon as its index shows it, whatever it deleted there before.
func TestOverlayNeverHidesTheIndex(t *testing.T) {
	rs, store := newReplicas(t, 2)
	a, b := rs[0], rs[1]
	set := func(values ...string) {
		for _, r := range rs {
			r.index = nil
			for _, v := range values {
				r.index = append(r.index, txt(t, challengeA, 60, v))
			}
		}
	}
	if rc := a.send(t, func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)}) }); rc != dns.RcodeSuccess {
		t.Fatal(dns.RcodeToString[rc])
	}
	set(acmeValue)
	if got := a.answer(challengeA); !slices.Equal(got, []string{acmeValue}) {
		t.Fatalf("a answers %q", got)
	}
	if rc := a.send(t, func(m *dns.Msg) { m.Remove([]dns.RR{txt(t, challengeA, 0, acmeValue)}) }); rc != dns.RcodeSuccess {
		t.Fatal(dns.RcodeToString[rc])
	}
	if rc := b.send(t, func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)}) }); rc != dns.RcodeSuccess {
		t.Fatal(dns.RcodeToString[rc])
	}
	if got := store.values("team-a", challengeA); !slices.Equal(got, []string{acmeValue}) {
		t.Fatalf("store: %q", got)
	}
	// Whether a's index saw the value go and come back, or never saw it go.
	for _, seen := range [][]string{{acmeValue}, nil, {acmeValue}} {
		set(seen...)
		if len(seen) == 0 {
			a.answer(challengeA) // a's index saw it go
			continue
		}
		for i, r := range rs {
			if got := r.answer(challengeA); !slices.Equal(got, []string{acmeValue}) {
				t.Errorf("index %q: replica %d answers %q, want the value the cluster holds", seen, i, got)
			}
		}
	}
}

// TestOverlayConcurrent: queries read the overlay while updates replace it
// (run with -race: the query path takes no lock).
func TestOverlayConcurrent(t *testing.T) {
	o := newOverlay(time.Minute)
	now := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			o.record(challengeA, Change{Added: []string{fmtInt(i)}, TTL: 60}, now)
			o.record(challengeA, Change{Removed: []string{fmtInt(i - 1)}}, now)
		}
	}()
	for {
		select {
		case <-done:
			if rrs, ok := o.Answer(challengeA, nil, now); !ok || len(rrs) != 1 {
				t.Fatalf("after the updates: %v %v", rrs, ok)
			}
			return
		default:
			if rrs, ok := o.Answer(challengeA, nil, now); ok && len(rrs) == 0 {
				t.Fatal("an empty answer from the overlay")
			}
		}
	}
}

// TestOverlayForeignDelete: a delete of a value the plugin did not write
// (a DNSEndpoint made by hand) changes nothing in the store, so the replica
// keeps answering the value.
func TestOverlayForeignDelete(t *testing.T) {
	rs, store := newReplicas(t, 1)
	r := rs[0]
	r.index = memZone{txt(t, challengeA, 60, "by-hand")}
	if rc := r.send(t, func(m *dns.Msg) { m.Remove([]dns.RR{txt(t, challengeA, 0, "by-hand")}) }); rc != dns.RcodeSuccess {
		t.Fatal(dns.RcodeToString[rc])
	}
	if got := store.values("team-a", challengeA); len(got) != 0 {
		t.Fatalf("store: %q", got)
	}
	if got := r.answer(challengeA); !slices.Equal(got, []string{"by-hand"}) {
		t.Fatalf("after a delete that changed nothing, the replica answers %q", got)
	}
	// The RRset delete removes only the plugin's own values.
	if rc := r.send(t, func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)}) }); rc != dns.RcodeSuccess {
		t.Fatal(dns.RcodeToString[rc])
	}
	if rc := r.send(t, func(m *dns.Msg) { m.RemoveRRset([]dns.RR{txt(t, challengeA, 0, "x")}) }); rc != dns.RcodeSuccess {
		t.Fatal(dns.RcodeToString[rc])
	}
	if got := r.answer(challengeA); !slices.Equal(got, []string{"by-hand"}) {
		t.Fatalf("after the RRset delete, the replica answers %q", got)
	}
}
