// Package fleet reads several clusters into one index: the cluster blocks of
// a Corefile, and the workload clusters that Cluster API discovery finds in
// a management cluster (clusterapi.go). Each Cluster wraps one
// watch.Controller, prefixes its object keys and namespaces with its name
// (so that tenants of two clusters never meet), watches the health of its
// API server (clusterhealth.go), and withdraws its records when it goes.
// With failover, a cluster silent for longer than that is set down in the
// index (Index.SetDown): its targets count as unhealthy for the choice of
// priority (each claim carries its cluster's priority, set by watch).
//
// In: the plugin's sink (the index), a watch.Config per cluster, and for
// discovery a DiscoveryConfig whose Join callback makes the cluster of a
// Cluster object. Out: records through the same sink, and a Fleet that maps
// an index key back to its cluster (for Events).
//
// Imports: watch, source and index; never the plugin.
package fleet

import "github.com/seed-e581d630/k8s_gateway/internal/plog"

// log is the plugin's logger: every line carries plugin/k8s_gateway:.
var log = plog.Log
