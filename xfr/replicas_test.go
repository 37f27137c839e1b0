package xfr

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// replica is one replica of the plugin in the tests: its index and its
// history, told of each serial the index assigns as the plugin's listener
// tells it (Assigned).
type replica struct {
	ix *index.Index
	h  *Histories
}

func (r *replica) SerialChanged(zone string, _ uint32) { r.h.Assigned(zone, 0, r.ix.Snapshot()) }
func (r *replica) Conflict(string, string)             {}

// newReplica returns a replica of example.com. with 20 names on clk.
func newReplica(t *testing.T, clk *testutil.Clock) *replica {
	t.Helper()
	r := &replica{h: &Histories{}}
	r.ix = index.New(index.Config{Zones: []string{"example.com."}, SOA: testSOA, NS: testNS, Now: clk.Now, Listener: r})
	t.Cleanup(r.ix.Close)
	for i := range 20 {
		r.ix.Update(fmt.Sprintf("Service/ns/s%d", i), testutil.RRs(fmt.Sprintf("s%d.example.com. 60 IN A 192.0.2.%d", i, i+1)))
	}
	r.ix.Flush()
	return r
}

// waitSerial waits until r's serial is serial: a change within the second
// of the last serial gets its own on the next second, by a timer.
func (r *replica) waitSerial(t *testing.T, serial uint32) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); r.ix.Snapshot().Serial(0) != serial; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serial %d, want %d", r.ix.Snapshot().Serial(0), serial)
		}
	}
}

// TestIXFRReplicas: two replicas that see the same changes serve, under a
// serial, the content of the moment they assigned it, whenever their
// transfers happen: a secondary that takes a serial from one replica and its
// IXFR from the other ends with the zone. Here a second change within the
// serial's second is pending, and the other replica serves its first transfer
// under that serial only then.
func TestIXFRReplicas(t *testing.T) {
	clk := &testutil.Clock{}
	base := time.Now().Truncate(time.Second)
	clk.Set(base)
	a, b := newReplica(t, clk), newReplica(t, clk)
	secondary := wholeSorted(t, a.h, a.ix)
	wholeSorted(t, b.h, b.ix)

	clk.Set(base.Add(11 * time.Second))
	for _, r := range []*replica{a, b} {
		r.ix.Update("Service/ns/s1", testutil.RRs("s1.example.com. 60 IN A 198.51.100.1"))
	}
	serial := a.ix.Snapshot().Serial(0)
	if b.ix.Snapshot().Serial(0) != serial {
		t.Fatalf("the replicas' serials differ: %d, %d", serial, b.ix.Snapshot().Serial(0))
	}
	// The secondary takes the serial from replica a.
	got, err := testutil.ApplyIXFR(secondary, transferred(t, a.h, a.ix, secondary[0].(*dns.SOA).Serial))
	if err != nil {
		t.Fatal(err)
	}
	secondary = got

	// Half a second later, a change within the same second: pending. Only
	// now does replica b serve a transfer under the serial (to another
	// secondary).
	clk.Set(base.Add(11*time.Second + 500*time.Millisecond))
	for _, r := range []*replica{a, b} {
		r.ix.Update("Service/ns/s2", testutil.RRs("s2.example.com. 60 IN A 198.51.100.2"))
	}
	wholeSorted(t, b.h, b.ix)
	a.waitSerial(t, serial+1)
	b.waitSerial(t, serial+1)

	// The secondary's next IXFR goes to replica b.
	ixfr := transferred(t, b.h, b.ix, serial)
	if testutil.IncrementalIXFR(ixfr) {
		if secondary, err = testutil.ApplyIXFR(secondary, ixfr); err != nil {
			t.Fatalf("IXFR from %d of replica b on replica a's copy: %v", serial, err)
		}
	} else {
		secondary = ixfr
		body := secondary[1 : len(secondary)-1]
		slices.SortFunc(body, func(a, b dns.RR) int { return strings.Compare(a.String(), b.String()) })
	}
	want := wholeSorted(t, b.h, b.ix)
	if !slices.Equal(inOrder(secondary), inOrder(want)) {
		t.Errorf("the secondary holds\n%s\nthe replicas\n%s", strings.Join(inOrder(secondary), "\n"), strings.Join(inOrder(want), "\n"))
	}
}
