package watch

import (
	"errors"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
)

// The metrics of the informers.
var (
	// objectChanges, with its old name events_total kept for one release.
	objectChanges = metrics.RenamedCounterVec("object_changes_total",
		"Counter of Kubernetes object changes (adds, updates, deletes) applied to the index, by kind.",
		"events_total", "Counter of Kubernetes object changes applied to the index, by kind.",
		"kind")
	programmingDuration = metrics.HistogramVec("programming_duration_seconds",
		"Time from an informer handing over an object change to the new snapshot being published (answered), by kind; after the initial sync.",
		[]float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
		"kind")
	kindEnabled = metrics.GaugeVec("kind_enabled",
		"1 when the informer of a kind runs, at the group version given, 0 when it does not, with the reason: not_served (the cluster serves none of its versions), refused (RBAC), failing (listing it fails otherwise); by zone, and by namespace with the namespaces option, else namespace \"\".",
		"zone", "kind", "namespace", "version", "reason")
	// clusterChanges, with its old name cluster_events_total kept for one release.
	clusterChanges = metrics.RenamedCounterVec("cluster_object_changes_total",
		"Counter of Kubernetes object changes applied to the index, by cluster.",
		"cluster_events_total", "Counter of Kubernetes object changes applied to the index, by cluster.",
		"cluster")
)

// The reason label of kind_enabled: why a kind is off ("" while it runs).
// Only a refusal or a failure needs someone: a cluster without a kind's CRD
// (the experimental Gateway API kinds, say) has nothing of it to publish.
const (
	offNotServed = "not_served" // the cluster serves none of its versions
	offRefused   = "refused"    // RBAC refuses it (403, 401)
	offFailing   = "failing"    // listing it fails otherwise (a timeout, a conversion webhook down)
)

// offReason is the reason label of a kind that err disables.
func offReason(err error) string {
	switch {
	case errors.Is(err, errNotServed) || apierrors.IsNotFound(err):
		return offNotServed
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return offRefused
	}
	return offFailing
}

// setKindEnabled sets the kind_enabled series of informer w in each of the
// block's zones (space-separated), replacing those of another version or
// reason: 1 with reason "" while it runs, else 0 and why it is off.
func setKindEnabled(zones string, w *watched, version, off string) {
	v := 0.0
	if off == "" {
		v = 1
	}
	for _, zone := range strings.Fields(zones) {
		kindEnabled.DeletePartialMatch(prometheus.Labels{"zone": zone, "kind": w.Kind.Name, "namespace": w.Namespace})
		kindEnabled.WithLabelValues(zone, w.Kind.Name, w.Namespace, version, off).Set(v)
	}
}

// setKindMetrics records which kinds run, at which version, and which are
// disabled, and why (w.off).
func setKindMetrics(zones string, running, disabled []*watched) {
	set := func(w *watched, version, off string) {
		// The nameservers' own Services are not the Service kind: leave them out.
		if w.nameserver {
			return
		}
		setKindEnabled(zones, w, version, off)
	}
	for _, w := range running {
		if w.api != nil && !w.api.IsAllowed() {
			set(w, w.Version.GroupVersion, offRefused) // refused since it started
			continue
		}
		set(w, w.Version.GroupVersion, "")
	}
	for _, w := range disabled {
		off := w.off
		if off == "" {
			off = offFailing // disabled, for no reason recorded: never 1
		}
		set(w, "", off)
	}
}

func init() {
	prometheus.MustRegister(contactCollector{
		timestamp: metrics.Desc("api_last_contact_timestamp_seconds",
			"Unix time an informer of the kind last heard from the API server (now while its watch is open), by zone and kind; the stalest of several.",
			"zone", "kind"),
		age: metrics.Desc("api_contact_age_seconds",
			"Deprecated: use api_last_contact_timestamp_seconds. Seconds since an informer last heard from the API server: 0 while its watch is open.",
			"zones", "kind"),
	})
}
