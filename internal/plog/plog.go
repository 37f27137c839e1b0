// Package plog is the plugin's logger. Every package of the plugin logs
// through Log, so that each line carries the plugin/k8s_gateway: prefix (and
// the plugin's name wherever CoreDNS's logging puts it), as the lines of
// CoreDNS's own plugins do.
//
// It imports no Kubernetes module, so that every layer may use it; watch
// routes client-go's klog lines through it (watch/klog.go).
package plog

import clog "github.com/coredns/coredns/plugin/pkg/log"

// name is the plugin's name, as it stands in the Corefile and in the prefix.
const name = "k8s_gateway"

// Log is the plugin's logger.
var Log = clog.NewWithPlugin(name)
