package gateway

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
)

var (
	eventsTotal = metrics.CounterVec("events_total",
		"Counter of Kubernetes object changes applied to the index, by kind.",
		"kind")
	conflictsTotal = metrics.CounterVec("conflicts_total",
		"Counter of names whose records several objects claim with different data, by zone.",
		"zone")
	rejectedTotal = metrics.CounterVec("rejected_total",
		"Counter of claims on names that the ownership policy rejected, by zone and reason (reserved, owned, undelegated).",
		"zone", "reason")
	kindEnabled = metrics.GaugeVec("kind_enabled",
		"1 when the informer of a kind runs, at the group version given, 0 when the cluster does not serve it or RBAC forbids it; by namespace with the namespaces option, else namespace \"\".",
		"zones", "kind", "namespace", "version")
	apiRequests = metrics.CounterVec("api_requests_total",
		"Counter of list and watch requests sent to the API server, by kind and verb.",
		"kind", "verb")
	relistsTotal = metrics.CounterVec("relists_total",
		"Counter of lists after an informer's first, by kind: after an expired watch or an outage.",
		"kind")
	zoneSerial = metrics.GaugeVec("zone_serial",
		"The SOA serial of each zone.",
		"zone")
)

// setKindEnabled sets the kind_enabled series of informer w, replacing the
// one of another version.
func setKindEnabled(zones string, w *watched, version string, v float64) {
	kindEnabled.DeletePartialMatch(prometheus.Labels{"zones": zones, "kind": w.kind.Name, "namespace": w.namespace})
	kindEnabled.WithLabelValues(zones, w.kind.Name, w.namespace, version).Set(v)
}

// setKindMetrics records which kinds run, at which version, and which are disabled.
func setKindMetrics(zones string, running, disabled []*watched) {
	set := func(w *watched, version string, v float64) {
		// The nameservers' own Services are not the Service kind: leave them out.
		if w.nameserver {
			return
		}
		setKindEnabled(zones, w, version, v)
	}
	for _, w := range running {
		if w.api != nil && !w.api.isAllowed() {
			set(w, w.version.GroupVersion, 0) // refused since it started
			continue
		}
		set(w, w.version.GroupVersion, 1)
	}
	for _, w := range disabled {
		set(w, "", 0)
	}
}

func init() {
	prometheus.MustRegister(contactCollector{metrics.Desc("api_contact_age_seconds",
		"Seconds since an informer last heard from the API server: 0 while its watch is open.",
		"zones", "kind")})
}

// The metrics of the clusters that cluster blocks name.
var (
	clusterSynced = metrics.GaugeVec("cluster_synced",
		"1 once a cluster's informers have synced, else 0, by cluster.",
		"cluster")
	clusterConnected = metrics.GaugeVec("cluster_connected",
		"1 while a cluster's API server answers, 0 while it has not for a while (its last known records are served), by cluster.",
		"cluster")
	clusterLastContact = metrics.GaugeVec("cluster_last_contact_timestamp_seconds",
		"Unix time of the last successful contact with a cluster's API server, by cluster.",
		"cluster")
	clusterEvents = metrics.CounterVec("cluster_events_total",
		"Counter of Kubernetes object changes applied to the index, by cluster.",
		"cluster")
	clusterConflicts = metrics.CounterVec("cluster_conflicts_total",
		"Counter of names that objects of several clusters publish with conflicting records, or that the ownership policy gave to another cluster's namespace, by zone.",
		"zone")
)
