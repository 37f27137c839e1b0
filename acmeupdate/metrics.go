package acmeupdate

import "github.com/seed-e581d630/k8s_gateway/internal/metrics"

var (
	rejectedTotal = metrics.CounterVec("update_rejected_total",
		"Counter of refused RFC 2136 updates, by zone (\"\" before the zone section is read) and reason.",
		"zone", "reason")
	appliedTotal = metrics.CounterVec("update_applied_total",
		"Counter of owner names changed by accepted RFC 2136 updates, by zone.",
		"zone")
)
