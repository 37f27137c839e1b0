package acmeupdate

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	rejectedTotal = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: "coredns", Subsystem: "k8s_gateway", Name: "update_rejected_total",
		Help: "Counter of refused RFC 2136 updates, by zone (\"\" before the zone section is read) and reason.",
	}, []string{"zone", "reason"})
	appliedTotal = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: "coredns", Subsystem: "k8s_gateway", Name: "update_applied_total",
		Help: "Counter of owner names changed by accepted RFC 2136 updates, by zone.",
	}, []string{"zone"})
)
