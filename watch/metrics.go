package watch

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
)

// The metrics of the informers.
var (
	eventsTotal = metrics.CounterVec("events_total",
		"Counter of Kubernetes object changes applied to the index, by kind.",
		"kind")
	KindEnabled = metrics.GaugeVec("kind_enabled",
		"1 when the informer of a kind runs, at the group version given, 0 when the cluster does not serve it or RBAC forbids it; by namespace with the namespaces option, else namespace \"\".",
		"zones", "kind", "namespace", "version")
	apiRequests = metrics.CounterVec("api_requests_total",
		"Counter of list and watch requests sent to the API server, by kind and verb.",
		"kind", "verb")
	relistsTotal = metrics.CounterVec("relists_total",
		"Counter of lists after an informer's first, by kind: after an expired watch or an outage.",
		"kind")
	clusterEvents = metrics.CounterVec("cluster_events_total",
		"Counter of Kubernetes object changes applied to the index, by cluster.",
		"cluster")
)

// setKindEnabled sets the kind_enabled series of informer w, replacing the
// one of another version.
func setKindEnabled(zones string, w *Watched, version string, v float64) {
	KindEnabled.DeletePartialMatch(prometheus.Labels{"zones": zones, "kind": w.Kind.Name, "namespace": w.Namespace})
	KindEnabled.WithLabelValues(zones, w.Kind.Name, w.Namespace, version).Set(v)
}

// SetKindMetrics records which kinds run, at which version, and which are disabled.
func SetKindMetrics(zones string, running, disabled []*Watched) {
	set := func(w *Watched, version string, v float64) {
		// The nameservers' own Services are not the Service kind: leave them out.
		if w.Nameserver {
			return
		}
		setKindEnabled(zones, w, version, v)
	}
	for _, w := range running {
		if w.api != nil && !w.api.isAllowed() {
			set(w, w.Version.GroupVersion, 0) // refused since it started
			continue
		}
		set(w, w.Version.GroupVersion, 1)
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
