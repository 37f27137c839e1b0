package gateway

import (
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// TestKindMetricsIgnoreNameserverWatch: a disabled watch of the nameserver's
// own Service does not report the Service kind as disabled, nor the reverse.
func TestKindMetricsIgnoreNameserverWatch(t *testing.T) {
	svc := kindByName("Service")
	for _, c := range []struct {
		desc            string
		all, disabled   []*watched
		wantServiceFlag float64
	}{
		{
			desc:            "kind enabled, nameserver watch disabled",
			all:             []*watched{{kind: svc}, {kind: svc, nameserver: true}},
			disabled:        []*watched{{kind: svc, nameserver: true}},
			wantServiceFlag: 1,
		},
		{
			desc:            "kind disabled, nameserver watch enabled",
			all:             []*watched{{kind: svc}, {kind: svc, nameserver: true}},
			disabled:        []*watched{{kind: svc}},
			wantServiceFlag: 0,
		},
	} {
		g := &Gateway{Zones: []string{"metrics-" + c.desc + "."}}
		setKindMetrics(g, c.all, c.disabled)
		var m dto.Metric
		if err := kindEnabled.WithLabelValues(g.Zones[0], "Service").Write(&m); err != nil {
			t.Fatal(err)
		}
		if got := m.GetGauge().GetValue(); got != c.wantServiceFlag {
			t.Errorf("%s: kind_enabled{kind=Service} = %v, want %v", c.desc, got, c.wantServiceFlag)
		}
	}
}
