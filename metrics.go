package gateway

import (
	"strings"

	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	eventsTotal = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: "k8s_gateway",
		Name:      "events_total",
		Help:      "Counter of Kubernetes object changes applied to the index, by kind.",
	}, []string{"kind"})
	conflictsTotal = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: "k8s_gateway",
		Name:      "conflicts_total",
		Help:      "Counter of names whose records several objects claim with different data, by zone.",
	}, []string{"zone"})
	rejectedTotal = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: "k8s_gateway",
		Name:      "rejected_total",
		Help:      "Counter of claims on names that the ownership policy rejected, by zone and reason (reserved, owned, undelegated).",
	}, []string{"zone", "reason"})
	kindEnabled = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: "k8s_gateway",
		Name:      "kind_enabled",
		Help:      "1 when the informer of a kind runs, 0 when the cluster does not serve it or RBAC forbids it.",
	}, []string{"zones", "kind"})
	zoneSerial = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: "k8s_gateway",
		Name:      "zone_serial",
		Help:      "The SOA serial of each zone.",
	}, []string{"zone"})
)

// setKindMetrics records which kinds run and which are disabled.
func setKindMetrics(g *Gateway, all, disabled []*watched) {
	zones := strings.Join(g.Zones, " ")
	// The nameservers' own Services are not the Service kind: leave them out.
	for _, w := range all {
		if !w.nameserver {
			kindEnabled.WithLabelValues(zones, w.kind.name).Set(1)
		}
	}
	for _, w := range disabled {
		if !w.nameserver {
			kindEnabled.WithLabelValues(zones, w.kind.name).Set(0)
		}
	}
}
