package gateway

import (
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestRejectedMetric: each rejection counts once in rejected_total, by zone and reason.
func TestRejectedMetric(t *testing.T) {
	value := func(zone, reason string) float64 {
		var d dto.Metric
		if err := rejectedTotal.WithLabelValues(zone, reason).Write(&d); err != nil {
			t.Fatal(err)
		}
		return d.GetCounter().GetValue()
	}
	const zone = "metric.test."
	g := newGateway()
	g.Zones = []string{zone}
	g.ownership = index.First
	g.buildIndex()
	t.Cleanup(g.index.Close)
	g.index.Flush()
	owned, reserved := value(zone, index.ReasonOwned), value(zone, index.ReasonReserved)
	g.index.UpdateClaim("Service/a/x", index.Claim{Namespace: "a", Created: 1}, testutil.RRs("www.metric.test. 60 IN A 192.0.2.1"))
	for range 3 { // the same rejection again and again counts once
		g.index.UpdateClaim("Service/b/y", index.Claim{Namespace: "b", Created: 2}, testutil.RRs("www.metric.test. 60 IN A 192.0.2.2", "*.metric.test. 60 IN A 192.0.2.2"))
		g.index.UpdateClaim("Service/b/y", index.Claim{Namespace: "b", Created: 2}, testutil.RRs("www.metric.test. 60 IN A 192.0.2.2", "*.metric.test. 60 IN A 192.0.2.2", "b.metric.test. 60 IN A 192.0.2.2"))
	}
	if got := value(zone, index.ReasonOwned) - owned; got != 1 {
		t.Errorf("owned: counted %v, want 1", got)
	}
	if got := value(zone, index.ReasonReserved) - reserved; got != 1 {
		t.Errorf("reserved: counted %v, want 1", got)
	}
}
