package persist

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// Tests of the writer of the copies (persist_writer.go).

func TestPersisterWritesDue(t *testing.T) {
	ix, clk := ptIndex(t, []string{"example.com.", "example.org."}, map[string][]string{
		"k": {"a.example.com. 60 IN A 192.0.2.1", "a.example.org. 60 IN A 192.0.2.2"},
	})
	dir := t.TempDir()
	p := NewWriter(dir, ix.Snapshot().Zones(), Timing{Interval: time.Second, Refresh: time.Hour}, clk.Now, ix.Snapshot, nil)
	written := func(zone string) time.Time {
		t.Helper()
		c, err := readCopy(Path(dir, zone), zone)
		if err != nil {
			t.Fatal(err)
		}
		return c.Written
	}
	serial := func(zone string) uint32 {
		t.Helper()
		s, err := SerialOf(Path(dir, zone))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	p.writeDue()
	t0 := clk.Now().Truncate(time.Second)
	for zi, zone := range ix.Snapshot().Zones() {
		if serial(zone) != ix.Snapshot().Serial(zi) || !written(zone).Equal(t0) {
			t.Fatalf("%s: serial %d written %s, want %d at %s", zone, serial(zone), written(zone), ix.Snapshot().Serial(zi), t0)
		}
	}

	// Nothing changed: nothing written.
	clk.Add(time.Minute)
	p.writeDue()
	if !written("example.com.").Equal(t0) {
		t.Error("a copy rewritten without a change")
	}

	// A change of one zone: that zone alone is written.
	ix.Update("k", testutil.RRs("a.example.com. 60 IN A 192.0.2.9", "a.example.org. 60 IN A 192.0.2.2"))
	p.writeDue()
	if serial("example.com.") != ix.Snapshot().Serial(0) || !written("example.com.").Equal(t0.Add(time.Minute)) {
		t.Errorf("the changed zone was not written: serial %d", serial("example.com."))
	}
	if !written("example.org.").Equal(t0) {
		t.Error("the unchanged zone was rewritten")
	}

	// Older than refresh: written again, with the same serial.
	clk.Add(time.Hour)
	p.writeDue()
	if !written("example.org.").Equal(t0.Add(time.Hour+time.Minute)) || serial("example.org.") != ix.Snapshot().Serial(1) {
		t.Errorf("not refreshed: written %s", written("example.org."))
	}

	// A newer serial on disk (another instance's, during a reload) stays.
	ix.Update("k", testutil.RRs("a.example.com. 60 IN A 192.0.2.10", "a.example.org. 60 IN A 192.0.2.2"))
	newer := ix.Snapshot().Serial(0) + 100
	soa := dns.Copy(ix.Snapshot().SOA(0)[0]).(*dns.SOA)
	soa.Serial = newer
	if err := Write(Path(dir, "example.com."), "example.com.", soa, testutil.RRs("example.com. 60 IN NS ns.example.com."), clk.Now()); err != nil {
		t.Fatal(err)
	}
	p.writeDue()
	if serial("example.com.") != newer {
		t.Errorf("a copy with a newer serial was replaced by serial %d", serial("example.com."))
	}
}

// TestPersisterRetries: a copy that cannot be written is tried again on the
// next round, and the old copy stays meanwhile.
func TestPersisterRetries(t *testing.T) {
	ix, clk := ptIndex(t, []string{"example.com."}, map[string][]string{"k": {"a.example.com. 60 IN A 192.0.2.1"}})
	dir := t.TempDir()
	path := Path(dir, "example.com.")
	// A directory in the way of the rename.
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := NewWriter(dir, ix.Snapshot().Zones(), Timing{Interval: time.Second, Refresh: time.Hour}, clk.Now, ix.Snapshot, nil)
	p.writeDue()
	if p.failed[0] == "" {
		t.Fatal("no failure recorded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries in the directory, want the one in the way (no temporary file left)", len(entries))
	}
	os.RemoveAll(path)
	p.writeDue()
	if s, err := SerialOf(path); err != nil || s != ix.Snapshot().Serial(0) || p.failed[0] != "" {
		t.Errorf("not written on the next round: serial %d, %v", s, err)
	}
}

// TestPersisterRun: the loop writes when it starts, and the last state when
// it stops.
func TestPersisterRun(t *testing.T) {
	ix, clk := ptIndex(t, []string{"example.com."}, map[string][]string{"k": {"a.example.com. 60 IN A 192.0.2.1"}})
	dir := t.TempDir()
	// An interval longer than the test: only the first round and the last one write.
	p := NewWriter(dir, ix.Snapshot().Zones(), Timing{Interval: time.Hour, Refresh: time.Hour}, clk.Now, ix.Snapshot, nil)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { p.Run(stop); close(done) }()
	path := Path(dir, "example.com.")
	testutil.Eventually(t, "first copy", func() string {
		if _, err := SerialOf(path); err != nil {
			return err.Error()
		}
		return ""
	})
	clk.Add(time.Second)
	ix.Update("k", testutil.RRs("a.example.com. 60 IN A 192.0.2.2"))
	close(stop)
	<-done
	c, err := readCopy(path, "example.com.")
	if err != nil || c.Serial != ix.Snapshot().Serial(0) || testutil.Strings(c.Records)[0] != testutil.Strings(testutil.RRs("a.example.com. 60 IN A 192.0.2.2"))[0] {
		t.Errorf("last copy: %v, %v; want the state at the stop", c, err)
	}
}

// ptIndex returns an index of zones holding objects (key → records), on a
// clock one second past its first serial.
func ptIndex(t *testing.T, zones []string, objects map[string][]string) (*index.Index, *testutil.Clock) {
	t.Helper()
	clk := &testutil.Clock{}
	clk.Set(time.Now().Truncate(time.Second))
	ix := index.New(index.Config{
		Zones: zones,
		SOA: func(zone string, serial uint32) *dns.SOA {
			return testutil.RR(fmt.Sprintf("%s 60 IN SOA ns.%s hostmaster.%s %d 300 60 604800 60", zone, zone, zone, serial)).(*dns.SOA)
		},
		NS:  func(zone string) []dns.RR { return testutil.RRs(fmt.Sprintf("%s 60 IN NS ns.%s", zone, zone)) },
		Now: clk.Now,
	})
	clk.Add(time.Second)
	t.Cleanup(ix.Close)
	for k, rrs := range objects {
		ix.Update(k, testutil.RRs(rrs...))
	}
	ix.Flush()
	return ix, clk
}

// BenchmarkPersistWrite: one write of the copy of a zone of 100,000 names,
// as the persister makes it after a change, and one read at startup.
func BenchmarkPersistWrite(b *testing.B) {
	ix := index.New(index.Config{
		Zones: []string{"example.com."},
		SOA: func(zone string, serial uint32) *dns.SOA {
			return testutil.RR(fmt.Sprintf("%s 60 IN SOA ns.%s hostmaster.%s %d 300 60 604800 60", zone, zone, zone, serial)).(*dns.SOA)
		},
		NS: func(zone string) []dns.RR { return testutil.RRs("example.com. 60 IN NS ns.example.com.") },
	})
	b.Cleanup(ix.Close)
	for i := range 100_000 {
		hdr := dns.RR_Header{Name: fmt.Sprintf("host%d.ns%d.example.com.", i, i%100), Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}
		ix.Update("Ingress/ns/host"+fmt.Sprint(i), []dns.RR{index.AddressRecord(hdr, netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))})
	}
	ix.Flush()
	dir := b.TempDir()
	p := NewWriter(dir, ix.Snapshot().Zones(), Timing{Interval: time.Second, Refresh: time.Hour}, time.Now, ix.Snapshot, nil)
	b.Run("write", func(b *testing.B) {
		for b.Loop() {
			p.written[0] = 0
			p.writeDue()
		}
	})
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			if _, err := readCopy(Path(dir, "example.com."), "example.com."); err != nil {
				b.Fatal(err)
			}
		}
	})
}
