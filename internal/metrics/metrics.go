// Package metrics holds what the plugin's packages share for their
// metrics: the plugin's name, constructors that register
// coredns_k8s_gateway_* series in the default registry (as CoreDNS plugins
// do), and the live sets that collectors read at scrape time.
package metrics

import (
	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// CounterVec registers the counter coredns_k8s_gateway_<name> (promauto, the
// default registry, as CoreDNS plugins do).
func CounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace, Subsystem: Plugin, Name: name, Help: help,
	}, labels)
}

// GaugeVec registers the gauge coredns_k8s_gateway_<name>.
func GaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace, Subsystem: Plugin, Name: name, Help: help,
	}, labels)
}

// HistogramVec registers the histogram coredns_k8s_gateway_<name>.
func HistogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return promauto.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: plugin.Namespace, Subsystem: Plugin, Name: name, Help: help, Buckets: buckets,
	}, labels)
}

// Renamed is a counter and its old name, kept for a release: both count the
// same.
type Renamed struct{ current, old *prometheus.CounterVec }

// RenamedCounterVec registers the counter coredns_k8s_gateway_<name> and, as
// coredns_k8s_gateway_<old>, its old name, whose help is "Deprecated: use
// <name>." and oldHelp.
func RenamedCounterVec(name, help, old, oldHelp string, labels ...string) Renamed {
	return Renamed{CounterVec(name, help, labels...), CounterVec(old, "Deprecated: use "+name+". "+oldHelp, labels...)}
}

// Inc adds one to the series of the label values, under both names.
func (r Renamed) Inc(values ...string) {
	r.current.WithLabelValues(values...).Inc()
	r.old.WithLabelValues(values...).Inc()
}

// Desc describes coredns_k8s_gateway_<name> for a collector.
func Desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(plugin.Namespace, Plugin, name), help, labels, nil)
}

// Plugin is the directive of the plugin.
const Plugin = "k8s_gateway"
