package gateway

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// ptCopyAnswered collects the copy metric and returns its value per zone.
func ptCopyAnswered(t *testing.T) map[string]float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 100)
	copyCollector{prometheus.NewDesc("x", "x", []string{"zone"}, nil)}.Collect(ch)
	close(ch)
	out := map[string]float64{}
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		out[d.GetLabel()[0].GetValue()] = d.GetGauge().GetValue()
	}
	return out
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
	other.Zones, other.persistDir = zones[1:], t.TempDir()
	other.init()
	t.Cleanup(other.index.Close)
	defer registerCopies(other)()

	var d dto.Metric
	if err := copyWritten.WithLabelValues(zones[0]).Write(&d); err != nil || d.GetGauge().GetValue() != float64(ptWritten.Unix()) {
		t.Errorf("copy_written_timestamp_seconds %v, %v; want %d", d.GetGauge().GetValue(), err, ptWritten.Unix())
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
		got := ptCopyAnswered(t)
		if got[zones[0]] != tc.want || got[zones[1]] != 0 {
			t.Errorf("%s: copy_answered %v, want %s %v and %s 0", tc.name, got, zones[0], tc.want, zones[1])
		}
	}
	if _, ok := ptCopyAnswered(t)[zones[1]]; !ok {
		t.Error("no sample for a zone without a copy")
	}
}
