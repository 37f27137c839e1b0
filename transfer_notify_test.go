package gateway

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"
)

// TestTransferNotify: every serial change sends one NOTIFY to the
// secondaries the transfer plugin names, for the zone that changed; an update
// that changes nothing sends none.
func TestTransferNotify(t *testing.T) {
	notifies := make(chan string, 100)
	secondary := xtServer(t, plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		if r.Opcode == dns.OpcodeNotify && len(r.Question) == 1 {
			notifies <- r.Question[0].Name + " " + dns.TypeToString[r.Question[0].Qtype]
		}
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		w.WriteMsg(m)
		return dns.RcodeSuccess, nil
	}))
	// On a clock ten seconds after the initial serial, the first Flush
	// announces every zone at once, before NOTIFY is watched.
	clk := &xtClock{}
	clk.set(time.Now().Truncate(time.Second))
	g := newGateway()
	g.Zones = []string{"example.com.", "example.org."}
	g.now = clk.now
	g.buildIndex()
	t.Cleanup(g.index.Close)
	clk.set(clk.now().Add(10 * time.Second))
	g.index.Flush()
	g.ready.Store(true)
	// The first Flush gave both zones the clock's time: no serial waits.
	for zi, zone := range g.index.Snapshot().Zones() {
		if got, want := g.index.Snapshot().Serial(zi), uint32(clk.now().Unix()); got != want {
			t.Fatalf("%s: serial %d after the first Flush, want %d (the clock's time)", zone, got, want)
		}
	}
	g.xfer.notifier.Use(xtTransferPlugin(t, g, "transfer example.com example.org {\n to "+secondary+"\n}"))

	expect := func(step string, want ...string) {
		t.Helper()
		var got []string
		timeout := time.After(2 * time.Second)
		for len(got) < len(want) {
			select {
			case n := <-notifies:
				got = append(got, n)
			case <-timeout:
				t.Fatalf("%s: NOTIFY %q after 2s, want %q", step, got, want)
			}
		}
		select {
		case n := <-notifies:
			got = append(got, n)
		case <-time.After(300 * time.Millisecond):
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: NOTIFY %q, want %q", step, got, want)
		}
	}
	g.index.Update("Ingress/a/www", xtRRs("www.example.com. 60 IN A 192.0.2.1"))
	expect("a change of example.com", "example.com. SOA")
	g.index.Update("Ingress/a/www", xtRRs("www.example.com. 60 IN A 192.0.2.1"))
	expect("no change")
	clk.set(clk.now().Add(time.Second))
	g.index.Update("Ingress/a/www", xtRRs("www.example.com. 60 IN A 192.0.2.1", "www.example.org. 60 IN A 192.0.2.1"))
	expect("a change of example.org", "example.org. SOA")
	clk.set(clk.now().Add(time.Second))
	g.index.Update("Ingress/a/www", nil)
	expect("a change of both", "example.com. SOA", "example.org. SOA")
}
