package gateway

import (
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
		Help:      "1 when the informer of a kind runs, at the group version given, 0 when the cluster does not serve it or RBAC forbids it; by namespace with the namespaces option, else namespace \"\".",
	}, []string{"zones", "kind", "namespace", "version"})
	apiRequests = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: "k8s_gateway",
		Name:      "api_requests_total",
		Help:      "Counter of list and watch requests sent to the API server, by kind and verb.",
	}, []string{"kind", "verb"})
	relistsTotal = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: "k8s_gateway",
		Name:      "relists_total",
		Help:      "Counter of lists after an informer's first, by kind: after an expired watch or an outage.",
	}, []string{"kind"})
	zoneSerial = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: "k8s_gateway",
		Name:      "zone_serial",
		Help:      "The SOA serial of each zone.",
	}, []string{"zone"})
)

// setKindEnabled sets the kind_enabled series of informer w, replacing the
// one of another version.
func setKindEnabled(zones string, w *watched, version string, v float64) {
	kindEnabled.DeletePartialMatch(prometheus.Labels{"zones": zones, "kind": w.kind.name, "namespace": w.namespace})
	kindEnabled.WithLabelValues(zones, w.kind.name, w.namespace, version).Set(v)
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
			set(w, w.version.groupVersion, 0) // refused since it started
			continue
		}
		set(w, w.version.groupVersion, 1)
	}
	for _, w := range disabled {
		set(w, "", 0)
	}
}

func init() {
	prometheus.MustRegister(contactCollector{prometheus.NewDesc(
		prometheus.BuildFQName(plugin.Namespace, "k8s_gateway", "api_contact_age_seconds"),
		"Seconds since an informer last heard from the API server: 0 while its watch is open.",
		[]string{"zones", "kind"}, nil)})
}

// The metrics of the clusters that cluster blocks name.
var (
	clusterSynced = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: "k8s_gateway",
		Name:      "cluster_synced",
		Help:      "1 once a cluster's informers have synced, else 0, by cluster.",
	}, []string{"cluster"})
	clusterConnected = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: "k8s_gateway",
		Name:      "cluster_connected",
		Help:      "1 while a cluster's API server answers, 0 while it has not for a while (its last known records are served), by cluster.",
	}, []string{"cluster"})
	clusterLastContact = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: "k8s_gateway",
		Name:      "cluster_last_contact_timestamp_seconds",
		Help:      "Unix time of the last successful contact with a cluster's API server, by cluster.",
	}, []string{"cluster"})
	clusterEvents = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: "k8s_gateway",
		Name:      "cluster_events_total",
		Help:      "Counter of Kubernetes object changes applied to the index, by cluster.",
	}, []string{"cluster"})
	clusterConflicts = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: "k8s_gateway",
		Name:      "cluster_conflicts_total",
		Help:      "Counter of names that objects of several clusters publish with conflicting records, or that the ownership policy gave to another cluster's namespace, by zone.",
	}, []string{"zone"})
)
