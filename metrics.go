package gateway

import (
	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	eventsTotal = counterVec("events_total",
		"Counter of Kubernetes object changes applied to the index, by kind.",
		"kind")
	conflictsTotal = counterVec("conflicts_total",
		"Counter of names whose records several objects claim with different data, by zone.",
		"zone")
	rejectedTotal = counterVec("rejected_total",
		"Counter of claims on names that the ownership policy rejected, by zone and reason (reserved, owned, undelegated).",
		"zone", "reason")
	kindEnabled = gaugeVec("kind_enabled",
		"1 when the informer of a kind runs, at the group version given, 0 when the cluster does not serve it or RBAC forbids it; by namespace with the namespaces option, else namespace \"\".",
		"zones", "kind", "namespace", "version")
	apiRequests = counterVec("api_requests_total",
		"Counter of list and watch requests sent to the API server, by kind and verb.",
		"kind", "verb")
	relistsTotal = counterVec("relists_total",
		"Counter of lists after an informer's first, by kind: after an expired watch or an outage.",
		"kind")
	zoneSerial = gaugeVec("zone_serial",
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
	prometheus.MustRegister(contactCollector{metricDesc("api_contact_age_seconds",
		"Seconds since an informer last heard from the API server: 0 while its watch is open.",
		"zones", "kind")})
}

// The metrics of the clusters that cluster blocks name.
var (
	clusterSynced = gaugeVec("cluster_synced",
		"1 once a cluster's informers have synced, else 0, by cluster.",
		"cluster")
	clusterConnected = gaugeVec("cluster_connected",
		"1 while a cluster's API server answers, 0 while it has not for a while (its last known records are served), by cluster.",
		"cluster")
	clusterLastContact = gaugeVec("cluster_last_contact_timestamp_seconds",
		"Unix time of the last successful contact with a cluster's API server, by cluster.",
		"cluster")
	clusterEvents = counterVec("cluster_events_total",
		"Counter of Kubernetes object changes applied to the index, by cluster.",
		"cluster")
	clusterConflicts = counterVec("cluster_conflicts_total",
		"Counter of names that objects of several clusters publish with conflicting records, or that the ownership policy gave to another cluster's namespace, by zone.",
		"zone")
)

// counterVec registers the counter coredns_k8s_gateway_<name> (promauto, the
// default registry, as CoreDNS plugins do).
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace, Subsystem: pluginName, Name: name, Help: help,
	}, labels)
}

// gaugeVec registers the gauge coredns_k8s_gateway_<name>.
func gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace, Subsystem: pluginName, Name: name, Help: help,
	}, labels)
}

// metricDesc describes coredns_k8s_gateway_<name> for a collector.
func metricDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(plugin.Namespace, pluginName, name), help, labels, nil)
}
