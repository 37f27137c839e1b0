package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestRenamed: both names count the same; the old one's help says what
// replaces it.
func TestRenamed(t *testing.T) {
	r := RenamedCounterVec("test_renamed_total", "Counter of tests.", "test_old_total", "Counter of tests, by kind.", "kind")
	r.Inc("a")
	r.Inc("a")
	r.Inc("b")
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"coredns_k8s_gateway_test_renamed_total": "Counter of tests.",
		"coredns_k8s_gateway_test_old_total":     "Deprecated: use test_renamed_total. Counter of tests, by kind.",
	}
	for _, f := range families {
		help, ok := want[f.GetName()]
		if !ok {
			continue
		}
		delete(want, f.GetName())
		if f.GetHelp() != help {
			t.Errorf("%s: help %q, want %q", f.GetName(), f.GetHelp(), help)
		}
		got := map[string]float64{}
		for _, m := range f.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
		if len(got) != 2 || got["a"] != 2 || got["b"] != 1 {
			t.Errorf("%s: %v, want a=2 b=1", f.GetName(), got)
		}
	}
	if len(want) > 0 {
		t.Errorf("not registered: %v", want)
	}
}
