package fleet

import "github.com/seed-e581d630/k8s_gateway/internal/metrics"

// The metrics of the clusters that cluster blocks name.
var (
	clusterSynced = metrics.GaugeVec("cluster_synced",
		"1 once a cluster's informers have synced, else 0, by cluster.",
		"cluster")
	clusterConnected = metrics.GaugeVec("cluster_connected",
		"1 while a cluster's API server answers, 0 while it has not for a while (its last known records are served), by cluster.",
		"cluster")
	clusterFailedOver = metrics.GaugeVec("cluster_failed_over",
		"1 while a cluster counts as unhealthy because its API server has been silent longer than its failover time, by cluster.",
		"cluster")
	clusterLastContact = metrics.GaugeVec("cluster_last_contact_timestamp_seconds",
		"Unix time of the last successful contact with a cluster's API server, by cluster.",
		"cluster")
)
