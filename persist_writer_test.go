package gateway

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Tests of the writer of the copies (persist_writer.go).

func TestPersisterWritesDue(t *testing.T) {
	g, clk := qtGateway(t, []string{"example.com.", "example.org."}, nil, map[string][]string{
		"k": {"a.example.com. 60 IN A 192.0.2.1", "a.example.org. 60 IN A 192.0.2.2"},
	})
	dir := t.TempDir()
	p := newPersister(dir, g.Zones, persistTiming{interval: time.Second, refresh: time.Hour}, clk.now, g.index.Snapshot)
	written := func(zone string) time.Time {
		t.Helper()
		c, err := readZoneCopy(copyPath(dir, zone), zone)
		if err != nil {
			t.Fatal(err)
		}
		return c.written
	}
	serial := func(zone string) uint32 {
		t.Helper()
		s, err := copySerial(copyPath(dir, zone))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	p.writeDue()
	t0 := clk.now().Truncate(time.Second)
	for zi, zone := range g.Zones {
		if serial(zone) != g.index.Snapshot().Serial(zi) || !written(zone).Equal(t0) {
			t.Fatalf("%s: serial %d written %s, want %d at %s", zone, serial(zone), written(zone), g.index.Snapshot().Serial(zi), t0)
		}
	}

	// Nothing changed: nothing written.
	clk.add(time.Minute)
	p.writeDue()
	if !written("example.com.").Equal(t0) {
		t.Error("a copy rewritten without a change")
	}

	// A change of one zone: that zone alone is written.
	g.index.Update("k", qtRRs("a.example.com. 60 IN A 192.0.2.9", "a.example.org. 60 IN A 192.0.2.2"))
	p.writeDue()
	if serial("example.com.") != g.index.Snapshot().Serial(0) || !written("example.com.").Equal(t0.Add(time.Minute)) {
		t.Errorf("the changed zone was not written: serial %d", serial("example.com."))
	}
	if !written("example.org.").Equal(t0) {
		t.Error("the unchanged zone was rewritten")
	}

	// Older than refresh: written again, with the same serial.
	clk.add(time.Hour)
	p.writeDue()
	if !written("example.org.").Equal(t0.Add(time.Hour+time.Minute)) || serial("example.org.") != g.index.Snapshot().Serial(1) {
		t.Errorf("not refreshed: written %s", written("example.org."))
	}

	// A newer serial on disk (another instance's, during a reload) stays.
	g.index.Update("k", qtRRs("a.example.com. 60 IN A 192.0.2.10", "a.example.org. 60 IN A 192.0.2.2"))
	newer := g.index.Snapshot().Serial(0) + 100
	if err := writeZoneCopy(copyPath(dir, "example.com."), "example.com.", g.newSOA("example.com.", newer), g.nsRecords("example.com."), clk.now()); err != nil {
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
	g, clk := qtGateway(t, []string{"example.com."}, nil, map[string][]string{"k": {"a.example.com. 60 IN A 192.0.2.1"}})
	dir := t.TempDir()
	path := copyPath(dir, "example.com.")
	// A directory in the way of the rename.
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := newPersister(dir, g.Zones, persistTiming{interval: time.Second, refresh: time.Hour}, clk.now, g.index.Snapshot)
	p.writeDue()
	if p.failed[0] == "" {
		t.Fatal("no failure recorded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries in the directory, want the one in the way (no temporary file left)", len(entries))
	}
	os.RemoveAll(path)
	p.writeDue()
	if s, err := copySerial(path); err != nil || s != g.index.Snapshot().Serial(0) || p.failed[0] != "" {
		t.Errorf("not written on the next round: serial %d, %v", s, err)
	}
}

// TestPersisterRun: the loop writes when it starts, and the last state when
// it stops.
func TestPersisterRun(t *testing.T) {
	g, clk := qtGateway(t, []string{"example.com."}, nil, map[string][]string{"k": {"a.example.com. 60 IN A 192.0.2.1"}})
	dir := t.TempDir()
	// An interval longer than the test: only the first round and the last one write.
	p := newPersister(dir, g.Zones, persistTiming{interval: time.Hour, refresh: time.Hour}, clk.now, g.index.Snapshot)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { p.run(stop); close(done) }()
	path := copyPath(dir, "example.com.")
	k8sEventually(t, "first copy", func() string {
		if _, err := copySerial(path); err != nil {
			return err.Error()
		}
		return ""
	})
	clk.add(time.Second)
	g.index.Update("k", qtRRs("a.example.com. 60 IN A 192.0.2.2"))
	close(stop)
	<-done
	c, err := readZoneCopy(path, "example.com.")
	if err != nil || c.serial != g.index.Snapshot().Serial(0) || xtStrings(c.records)[0] != xtStrings(qtRRs("a.example.com. 60 IN A 192.0.2.2"))[0] {
		t.Errorf("last copy: %v, %v; want the state at the stop", c, err)
	}
}
