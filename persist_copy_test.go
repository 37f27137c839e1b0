package gateway

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/persist"
)

// Tests of the copies served until the informers sync (persist.Copies).

// ptWritten is the write time of the copies of the tests.
var ptWritten = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// ptObjects are the records of the copies of the tests: a wildcard, a CNAME,
// TXT with spaces and quotes, SRV, a delegation with glue.
var ptObjects = map[string][]string{
	"Service/a/web": {"web.example.com. 60 IN A 192.0.2.1", "web.example.com. 60 IN AAAA 2001:db8::1"},
	"Ingress/a/app": {"*.apps.example.com. 60 IN A 192.0.2.2", "www.example.com. 30 IN CNAME lb.example.net."},
	"DNSEndpoint/a/txt": {`txt.example.com. 60 IN TXT "v=spf1 -all" "a \"quoted\" one"`,
		"_https._tcp.web.example.com. 60 IN SRV 0 0 443 web.example.com.",
		"sub.example.com. 60 IN NS ns.sub.example.com.", "ns.sub.example.com. 60 IN A 192.0.2.53"},
}

// ptWriteCopy writes the copy of zone zi of g to dir as the persister does,
// and returns its path.
func ptWriteCopy(t *testing.T, g *Gateway, dir string, zi int) string {
	t.Helper()
	s := g.index.Snapshot()
	path := persist.Path(dir, g.Zones[zi])
	records := append(append([]dns.RR{}, s.NS(zi)...), s.Records(zi)...)
	if err := persist.Write(path, g.Zones[zi], s.SOA(zi)[0].(*dns.SOA), records, ptWritten); err != nil {
		t.Fatal(err)
	}
	return path
}

// ptCopyGateway writes the copies of zones of a gateway holding objects to a
// directory, written at ptWritten, and returns a gateway configured with
// persist on that directory, initialized (copies loaded) but not started, on
// a clock set to ptWritten+age; and the gateway the copies were made from.
func ptCopyGateway(t *testing.T, zones []string, objects map[string][]string, age time.Duration) (g, from *Gateway, clk *testutil.Clock) {
	t.Helper()
	from = xtGateway(t, zones, objects)
	dir := t.TempDir()
	for zi := range zones {
		ptWriteCopy(t, from, dir, zi)
	}
	g = newGateway()
	g.Zones, g.persist.dir = zones, dir
	clk = &testutil.Clock{}
	clk.Set(ptWritten.Add(age))
	g.now = clk.Now
	g.buildIndex()
	t.Cleanup(g.index.Close)
	return g, from, clk
}

func TestPersistServesCopy(t *testing.T) {
	zones := []string{"example.com.", "in.example.com."}
	objects := map[string][]string{
		"Service/a/web": {"web.example.com. 60 IN A 192.0.2.1", "www.in.example.com. 60 IN A 192.0.2.3"},
		"Ingress/a/app": {"*.apps.example.com. 60 IN A 192.0.2.2", "x.y.example.com. 60 IN TXT hello"},
		// The glue of the nested zone's nameserver.
		"Service/kube-system/dns1": {"dns1.kube-system.in.example.com. 60 IN A 192.0.2.53"},
	}
	g, from, _ := ptCopyGateway(t, zones, objects, time.Hour)
	if !g.Ready() {
		t.Fatal("not ready with fresh copies of every zone")
	}
	serial := from.index.Snapshot().Serial(0)
	soa := strings.Replace(qtSOA("example.com."), " 0 ", fmt.Sprintf(" %d ", serial), 1)
	for _, tc := range []test.Case{
		{Qname: "web.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("web.example.com. 60 IN A 192.0.2.1")},
		{Qname: "a.b.apps.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("a.b.apps.example.com. 60 IN A 192.0.2.2")},
		{Qname: "y.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soa)},
		{Qname: "none.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soa)},
		{Qname: "example.com.", Qtype: dns.TypeSOA, Answer: testutil.RRs(soa)},
		{Qname: "www.in.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("www.in.example.com. 60 IN A 192.0.2.3")},
	} {
		qtCheck(t, g, tc)
	}
	// The copies' serials, which AXFR sends with the same records.
	for _, zone := range zones {
		got, want := xtStrings(xtTransfer(t, g, zone, 0)), xtStrings(xtTransfer(t, from, zone, 0))
		if !slices.Equal(got, want) {
			t.Errorf("AXFR %s from the copy:\n%s\nwant\n%s", zone, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	// IXFR from the copy's serial: the single SOA (RFC 1995 §2).
	if got := xtTransfer(t, g, "example.com.", serial); len(got) != 1 || got[0].(*dns.SOA).Serial != serial {
		t.Errorf("IXFR=%d from the copy: %q, want its SOA alone", serial, xtStrings(got))
	}
	// The live index starts past the copies' serials.
	g.index.Flush()
	for zi := range zones {
		if p, l := from.index.Snapshot().Serial(zi), g.index.Snapshot().Serial(zi); !index.SerialLess(p, l) {
			t.Errorf("zone %d: live serial %d not past the copy's %d", zi, l, p)
		}
	}
}

// TestPersistCopyExpires: a copy is served until its SOA expire after it was
// written, then SERVFAIL, and the plugin is not ready.
func TestPersistCopyExpires(t *testing.T) {
	g, _, clk := ptCopyGateway(t, []string{"example.com."}, ptObjects, 0)
	web := test.Case{Qname: "web.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("web.example.com. 60 IN A 192.0.2.1")}
	expire := soaExpire * time.Second
	for _, tc := range []struct {
		age   time.Duration
		fresh bool
	}{
		{0, true},
		{expire - time.Second, true},
		{expire - time.Nanosecond, true},
		{expire, false},
		{expire + time.Hour, false},
	} {
		clk.Set(ptWritten.Add(tc.age))
		if g.Ready() != tc.fresh {
			t.Errorf("age %s: Ready() = %v, want %v", tc.age, g.Ready(), tc.fresh)
		}
		if tc.fresh {
			qtCheck(t, g, web)
			continue
		}
		if code, m := qtServe(t, g, web.Msg()); code != dns.RcodeServerFailure || m != nil {
			t.Errorf("age %s: rcode %s, want SERVFAIL", tc.age, dns.RcodeToString[code])
		}
		if _, err := g.Transfer("example.com.", 0); err == nil {
			t.Errorf("age %s: a transfer of an expired copy", tc.age)
		}
	}
}

// TestPersistCopyLoad: what is loaded, per zone, from which files.
func TestPersistCopyLoad(t *testing.T) {
	zones := []string{"example.com.", "example.org."}
	objects := map[string][]string{"k": {"a.example.com. 60 IN A 192.0.2.1", "a.example.org. 60 IN A 192.0.2.2"}}
	from := xtGateway(t, zones, objects)
	serials := []uint32{from.index.Snapshot().Serial(0), from.index.Snapshot().Serial(1)}
	tests := []struct {
		name        string
		prepare     func(t *testing.T, dir string) // after both copies are written
		age         time.Duration
		ready       bool
		served      []bool   // per zone
		liveSerials []uint32 // per zone, the live index's first serial; 0: the clock's
	}{
		{"both", nil, time.Minute, true, []bool{true, true}, serials},
		{"one missing", func(t *testing.T, dir string) { os.Remove(persist.Path(dir, "example.org.")) }, time.Minute, false, []bool{true, false}, []uint32{serials[0], 0}},
		{"one corrupt", func(t *testing.T, dir string) {
			path := persist.Path(dir, "example.com.")
			data, _ := os.ReadFile(path)
			os.WriteFile(path, data[:len(data)-20], 0o644)
		}, time.Minute, false, []bool{false, true}, []uint32{0, serials[1]}},
		// An expired copy is not served, but the serial never goes back.
		{"expired", nil, soaExpire * time.Second, false, []bool{false, false}, serials},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for zi := range zones {
				ptWriteCopy(t, from, dir, zi)
			}
			if tc.prepare != nil {
				tc.prepare(t, dir)
			}
			g := newGateway()
			g.Zones, g.persist.dir = zones, dir
			clk := &testutil.Clock{}
			clk.Set(ptWritten.Add(tc.age))
			g.now = clk.Now
			g.buildIndex()
			t.Cleanup(g.index.Close)
			if g.Ready() != tc.ready {
				t.Errorf("Ready() = %v, want %v", g.Ready(), tc.ready)
			}
			for zi, zone := range zones {
				code, m := qtServe(t, g, (&test.Case{Qname: "a." + zone, Qtype: dns.TypeA}).Msg())
				if served := m != nil && code == dns.RcodeSuccess && m.Authoritative && len(m.Answer) == 1; served != tc.served[zi] {
					t.Errorf("%s served: %v (rcode %s), want %v", zone, served, dns.RcodeToString[code], tc.served[zi])
				}
				want := tc.liveSerials[zi]
				if want == 0 {
					want = uint32(clk.Now().Unix())
				}
				if got := g.index.Snapshot().Serial(zi); got != want {
					t.Errorf("%s: live index starts at serial %d, want %d", zone, got, want)
				}
			}
		})
	}
}

// TestPersistSwitchToLive: started while the API server fails, the plugin
// answers from the copy at once; once the informers sync it answers the live
// data with a serial past the copy's, and writes it to disk.
func TestPersistSwitchToLive(t *testing.T) {
	from := xtGateway(t, []string{"example.com."}, map[string][]string{"k": {"db.apps.example.com. 60 IN A 192.0.2.10"}})
	dir := t.TempDir()
	copyPath := ptWriteCopy(t, from, dir, 0)
	persisted := from.index.Snapshot().Serial(0)

	client := fake.NewSimpleClientset(testutil.NamedService("apps", "db", "192.0.2.20"))
	var down atomic.Bool
	down.Store(true)
	client.PrependReactor("list", "*", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		if down.Load() {
			return true, nil, apierrors.NewServiceUnavailable("down")
		}
		return false, nil, nil
	})
	g := k8sNewGateway(client, []string{"example.com."}, func(g *Gateway) {
		g.persist.dir = dir
		g.now = func() time.Time { return ptWritten.Add(time.Minute) }
	})
	g.noStartupWait = true
	t.Cleanup(g.stop)
	if err := g.start(); err != nil {
		t.Fatal(err)
	}
	if !g.Ready() {
		t.Fatal("not ready while serving a fresh copy")
	}
	k8sAnswers(t, g, "db.apps.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"db.apps.example.com. 60 IN A 192.0.2.10"}))
	if onDisk, err := persist.SerialOf(copyPath); err != nil || onDisk != persisted {
		t.Fatalf("the copy was rewritten before the sync: serial %d, %v", onDisk, err)
	}

	down.Store(false)
	k8sAnswers(t, g, "db.apps.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"db.apps.example.com. 60 IN A 192.0.2.20"}))
	if live := g.index.Snapshot().Serial(0); !index.SerialLess(persisted, live) {
		t.Errorf("live serial %d not past the copy's %d", live, persisted)
	}
	if g.persist.copies.Answering(0, ptWritten.Add(time.Minute)) != nil {
		t.Error("the copies are kept after the sync")
	}
	testutil.Eventually(t, "the live zone written to disk", func() string {
		c, serials := persist.Load(persist.LoadConfig{Dir: dir, Zones: []string{"example.com."}, Now: func() time.Time { return ptWritten.Add(time.Minute) }})
		defer c.Live()
		snap := c.Answering(0, ptWritten.Add(time.Minute))
		if snap == nil {
			return "no copy read"
		}
		if records := snap.Records(0); serials[0] != g.index.Snapshot().Serial(0) || len(records) != 1 || records[0].(*dns.A).A.String() != "192.0.2.20" {
			return fmt.Sprintf("copy has serial %d and %q", serials[0], xtStrings(records))
		}
		return ""
	})
}
