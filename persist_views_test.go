package gateway

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/caddy/caddyfile"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// TestPersistDirPerBlock: two blocks of one Corefile (two views of a zone,
// say) that would keep the copy of one zone in one file are refused, naming
// the line of the other; other zones, or other directories, are fine.
func TestPersistDirPerBlock(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(t.TempDir(), "other")
	for _, tc := range []struct {
		name   string
		second string
		err    []string // empty: accepted
	}{
		{name: "same dir, same zone", second: "k8s_gateway example.com {\n ttl 30\n persist " + dir + "\n}", err: []string{"Testfile:3", "persist", "example.com.", "by the block of Testfile:2"}},
		{name: "same dir through another path", second: "k8s_gateway example.com {\n persist " + dir + "/.\n}", err: []string{"Testfile:2", "by the block of Testfile:2"}},
		{name: "same dir, another zone", second: "k8s_gateway example.org {\n persist " + dir + "\n}"},
		{name: "another dir", second: "k8s_gateway example.com {\n persist " + other + "\n}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := caddy.NewTestController("dns", "k8s_gateway example.com {\n persist "+dir+"\n}")
			if _, err := parse(c); err != nil {
				t.Fatalf("first block: %v", err)
			}
			c.Dispenser = caddyfile.NewDispenser("Testfile", strings.NewReader(tc.second))
			_, err := parse(c)
			if len(tc.err) == 0 {
				if err != nil {
					t.Fatalf("second block: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("second block accepted, want a refusal")
			}
			for _, s := range tc.err {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
	// A reload is another instance: the same block again is fine.
	for range 2 {
		if _, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n persist "+dir+"\n}")); err != nil {
			t.Fatalf("a reload: %v", err)
		}
	}
}

// TestHealthGaugesPerView: the per-zone health gauges of two views of one
// zone are apart.
func TestHealthGaugesPerView(t *testing.T) {
	internal, external := newGateway(), newGateway()
	internal.view, external.view = "internal", "external"
	zone := "views.example.com."
	indexListener{internal}.HealthChanged(zone, index.ZoneHealth{Unhealthy: 3, FailOpen: 1, Standby: 2})
	indexListener{external}.HealthChanged(zone, index.ZoneHealth{})
	if got := gaugeValue(t, unhealthyTargets.WithLabelValues(zone, "internal")); got != 3 {
		t.Errorf("unhealthy_targets{internal} %v, want 3", got)
	}
	if got := gaugeValue(t, unhealthyTargets.WithLabelValues(zone, "external")); got != 0 {
		t.Errorf("unhealthy_targets{external} %v, want 0", got)
	}
	if got := gaugeValue(t, failOpenNames.WithLabelValues(zone, "internal")); got != 1 {
		t.Errorf("failopen_names{internal} %v, want 1", got)
	}
	if got := gaugeValue(t, standbyNames.WithLabelValues(zone, "internal")); got != 2 {
		t.Errorf("standby_names{internal} %v, want 2", got)
	}
}

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}
