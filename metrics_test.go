package gateway

import (
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
)

// copyGauges collects the copy metrics: copy_answered and
// copy_written_timestamp_seconds by "name zone view".
func copyGauges(t *testing.T) map[string]float64 {
	t.Helper()
	return collectGauges(t, copyCollector{
		answered: metrics.Desc("copy_answered", "x", "zone", "view"),
		written:  metrics.Desc("copy_written_timestamp_seconds", "x", "zone", "view"),
	})
}

// TestCopyMetrics: copy_answered is 1 for a zone answered from its copy, 0
// once the copy expired or the informers synced; copy_written_timestamp_seconds
// is the copy's write time.
func TestCopyMetrics(t *testing.T) {
	zones := []string{"metric.example.", "nocopy.example."}
	g, _, clk := ptCopyGateway(t, zones[:1], map[string][]string{"k": {"a.metric.example. 60 IN A 192.0.2.1"}}, time.Minute)
	defer registerCopies(g)()
	// A second instance whose zone has no copy.
	other := newGateway()
	other.Zones, other.persist.dir = zones[1:], t.TempDir()
	other.buildIndex()
	t.Cleanup(other.index.Close)
	defer registerCopies(other)()

	// collectGauges joins the label values in the labels' order: view (""), zone.
	const answered, written = "coredns_k8s_gateway_copy_answered  ", "coredns_k8s_gateway_copy_written_timestamp_seconds  "
	got := copyGauges(t)
	if got[written+zones[0]] != float64(ptWritten.Unix()) {
		t.Errorf("copy_written_timestamp_seconds %v; want %d", got, ptWritten.Unix())
	}
	if _, ok := got[written+zones[1]]; ok {
		t.Errorf("copy_written_timestamp_seconds for a zone without a copy: %v", got)
	}
	for _, tc := range []struct {
		name  string
		setup func()
		want  float64
	}{
		{"fresh copy", func() {}, 1},
		{"expired", func() { clk.Add(soaExpire * time.Second) }, 0},
		{"synced", func() { clk.Set(ptWritten); g.ready.Store(true) }, 0},
	} {
		tc.setup()
		got := copyGauges(t)
		if got[answered+zones[0]] != tc.want || got[answered+zones[1]] != 0 {
			t.Errorf("%s: copy_answered %v, want %s %v and %s 0", tc.name, got, zones[0], tc.want, zones[1])
		}
	}
	if _, ok := copyGauges(t)[answered+zones[1]]; !ok {
		t.Error("no sample for a zone without a copy")
	}
	later := ptWritten.Add(time.Hour)
	g.persist.copies.SetWritten(zones[0], later)
	if got := copyGauges(t)[written+zones[0]]; got != float64(later.Unix()) {
		t.Errorf("after a write: copy_written_timestamp_seconds %v, want %d", got, later.Unix())
	}
}

// collectGauges collects c and returns each sample's value by its labels'
// values joined with spaces, prefixed with the metric's name from desc.
func collectGauges(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				key += " " + l.GetValue()
			}
			out[key] = m.GetGauge().GetValue()
		}
	}
	return out
}

// TestZoneSizeMetrics: zone_names, zone_records and zone_serial follow the
// served snapshot, one series per zone and view; an instance that stops is
// no longer counted.
func TestZoneSizeMetrics(t *testing.T) {
	const zone = "sizes.example."
	g, clk := qtGateway(t, []string{zone}, nil, map[string][]string{
		"Service/a/www": {"www.sizes.example. 60 IN A 192.0.2.1", "www.sizes.example. 60 IN A 192.0.2.2"},
		"Service/a/db":  {"db.sizes.example. 60 IN AAAA 2001:db8::1"},
	})
	// A second view of the zone that publishes only one name.
	internal, _ := qtGateway(t, []string{zone}, nil, map[string][]string{
		"Service/a/www": {"www.sizes.example. 60 IN A 10.0.0.1"},
	})
	internal.view = "internal"
	c := sizeCollector{
		names:   metrics.Desc("zone_names", "x", "zone", "view"),
		records: metrics.Desc("zone_records", "x", "zone", "view"),
		serial:  metrics.Desc("zone_serial", "x", "zone", "view"),
	}
	// collectGauges joins the label values in the labels' order: view, zone.
	key := func(metric, view string) string { return "coredns_k8s_gateway_" + metric + " " + view + " " + zone }
	remove := registerSizes(g)
	removeInternal := registerSizes(internal)
	defer removeInternal()
	got := collectGauges(t, c)
	if got[key("zone_names", "")] != 2 || got[key("zone_records", "")] != 3 || got[key("zone_names", "internal")] != 1 || got[key("zone_records", "internal")] != 1 {
		t.Errorf("sizes %v, want 2 names, 3 records, and 1, 1 in view internal", got)
	}
	before := got[key("zone_serial", "")]
	if want := float64(g.index.Snapshot().Serial(0)); before != want || before == 0 {
		t.Errorf("zone_serial %v, want %v", before, want)
	}
	clk.Add(time.Second) // a new second: the change gets a new serial at once
	g.index.Update("Service/a/db", nil)
	got = collectGauges(t, c)
	if got[key("zone_names", "")] != 1 || got[key("zone_records", "")] != 2 {
		t.Errorf("after a removal: sizes %v, want 1 name, 2 records", got)
	}
	if want := float64(g.index.Snapshot().Serial(0)); got[key("zone_serial", "")] != want || want == before {
		t.Errorf("after a removal: zone_serial %v, want %v (not %v)", got[key("zone_serial", "")], want, before)
	}
	remove()
	removeInternal()
	if got = collectGauges(t, c); len(got) != 0 {
		t.Errorf("after the instances stopped: %v, want no series", got)
	}
}

// TestBuildInfo: build_info carries the plugin's version and the Go version.
func TestBuildInfo(t *testing.T) {
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "coredns_k8s_gateway_build_info" {
			continue
		}
		l := map[string]string{}
		for _, p := range f.GetMetric()[0].GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["version"] != Version || l["goversion"] != runtime.Version() || f.GetMetric()[0].GetGauge().GetValue() != 1 {
			t.Errorf("build_info %v = %v", l, f.GetMetric()[0].GetGauge().GetValue())
		}
		return
	}
	t.Error("no coredns_k8s_gateway_build_info")
}
