package watch

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// contactAt is an informer's state that last talked to the API server at t.
type contactAt time.Time

func (c contactAt) ContactTime() time.Time { return time.Time(c) }

// TestContactMetric: the collector exports it per zones and kind, the stalest of several.
func TestContactMetric(t *testing.T) {
	open, closed := contactAt(time.Now()), contactAt(time.Now().Add(-90*time.Second))
	defer registerGuard(open, "contact.example.", "Service")()
	defer registerGuard(closed, "contact.example.", "Service")()
	ch := make(chan prometheus.Metric, 100)
	contactCollector{
		timestamp: prometheus.NewDesc("ts", "x", []string{"zone", "kind"}, nil),
		age:       prometheus.NewDesc("age", "x", []string{"zones", "kind"}, nil),
	}.Collect(ch)
	close(ch)
	found := map[string]bool{}
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		if d.GetLabel()[0].GetValue() != "Service" || d.GetLabel()[1].GetValue() != "contact.example." {
			continue
		}
		name := m.Desc().String()
		v := d.GetGauge().GetValue()
		switch {
		case strings.Contains(name, `"age"`):
			found["age"] = true
			if v < 90 || v > 100 {
				t.Errorf("age: exported %v, want the stalest, about 90", v)
			}
		case strings.Contains(name, `"ts"`):
			found["ts"] = true
			if want := float64(time.Now().Add(-90 * time.Second).Unix()); v < want-10 || v > want+1 {
				t.Errorf("timestamp: exported %v, want the stalest, about %v", v, want)
			}
		}
	}
	if !found["age"] || !found["ts"] {
		t.Errorf("samples for the registered informers: %v, want age and ts", found)
	}
}
