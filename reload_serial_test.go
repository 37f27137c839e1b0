package gateway

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// sortedTransfer returns a whole transfer as testutil.ApplyIXFR does: the
// SOA, the records by presentation form, the SOA.
func sortedTransfer(rrs []dns.RR) []dns.RR {
	out := slices.Clone(rrs)
	slices.SortFunc(out[1:len(out)-1], func(a, b dns.RR) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// TestReloadKeepsSerials: the instances a reload starts take over each zone
// from the one they replace. A zone whose content the reload does not change
// keeps its serial, and an IXFR from it is the SOA alone; a zone new to the
// block gets a serial; a zone the reload changes gets a serial past the old
// one, and the IXFR from the serial the old instance's transfers served is
// incremental, which applied to what they served gives the zone.
func TestReloadKeepsSerials(t *testing.T) {
	client := fake.NewSimpleClientset(testutil.NamedIngress("default", "web", []string{"www.example.com", "www.example.org"}, "192.0.2.1"))
	api := watchtest.API{Core: client, Share: "cluster-1"}
	zones := []string{"example.com.", "example.org."}
	// Each reload ten seconds after the last: a new instance that did not
	// take over would give every zone a new serial.
	clk := &testutil.Clock{}
	clk.Set(time.Now().Truncate(time.Second))
	at := func(configure func(*Gateway)) func(*Gateway) {
		clk.Add(10 * time.Second)
		return func(g *Gateway) {
			g.now = clk.Now
			if configure != nil {
				configure(g)
			}
		}
	}
	old := k8sStartGatewayAPI(t, api, zones, at(nil))
	www := "www.example.com."
	k8sAnswers(t, old, www, dns.TypeA, k8sExpect(t, "NOERROR", []string{www + " 60 IN A 192.0.2.1"}))
	serial := old.index.Snapshot().Serial(0)
	served := sortedTransfer(xtTransfer(t, old, "example.com.", 0)) // a secondary's copy

	// The same Corefile: nothing moves.
	same := k8sStartGatewayAPI(t, api, zones, at(nil))
	old.stop()
	for zi, z := range zones {
		if got, want := same.index.Snapshot().Serial(zi), old.index.Snapshot().Serial(zi); got != want {
			t.Errorf("a reload that changes nothing: %s has serial %d, want %d", z, got, want)
		}
	}
	if got := xtTransfer(t, same, "example.com.", serial); len(got) != 1 {
		t.Errorf("IXFR from the serial before the reload: %d records, want the SOA alone", len(got))
	}

	// A zone added: the others keep their serials.
	wider := k8sStartGatewayAPI(t, api, append(slices.Clone(zones), "example.net."), at(nil))
	same.stop()
	if got := wider.index.Snapshot().Serial(0); got != serial {
		t.Errorf("a reload that adds a zone: example.com. has serial %d, want %d", got, serial)
	}

	// A second nameserver name: example.com changes by an NS record.
	changed := k8sStartGatewayAPI(t, api, zones, at(func(g *Gateway) { g.secondary = "dns2" }))
	wider.stop()
	if got := changed.index.Snapshot().Serial(0); !index.SerialLess(serial, got) {
		t.Fatalf("a reload that changes example.com.: serial %d, want one past %d", got, serial)
	}
	ixfr := xtTransfer(t, changed, "example.com.", serial)
	if !testutil.IncrementalIXFR(ixfr) {
		t.Fatalf("IXFR from %d after the reload that changed the zone: not incremental (%d records)", serial, len(ixfr))
	}
	got, err := testutil.ApplyIXFR(served, ixfr)
	if err != nil {
		t.Fatal(err)
	}
	if want := sortedTransfer(xtTransfer(t, changed, "example.com.", 0)); !slices.Equal(qtStrings(got), qtStrings(want)) {
		t.Errorf("the IXFR applied:\n%s\nthe zone:\n%s", strings.Join(qtStrings(got), "\n"), strings.Join(qtStrings(want), "\n"))
	}
}
