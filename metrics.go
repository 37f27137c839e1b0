package gateway

import (
	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
)

var (
	conflictsTotal = metrics.CounterVec("conflicts_total",
		"Counter of names whose records several objects claim with different data, by zone.",
		"zone")
	rejectedTotal = metrics.CounterVec("rejected_total",
		"Counter of claims on names that the ownership policy rejected, by zone and reason (reserved, owned, undelegated).",
		"zone", "reason")
	zoneSerial = metrics.GaugeVec("zone_serial",
		"The SOA serial of each zone.",
		"zone")
)

// The metrics of the clusters that cluster blocks name.
var (
	clusterConflicts = metrics.CounterVec("cluster_conflicts_total",
		"Counter of names that objects of several clusters publish with conflicting records, or that the ownership policy gave to another cluster's namespace, by zone.",
		"zone")
)
