package gateway

import (
	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
)

// PluginName is the directive of the plugin in a Corefile and in plugin.cfg.
const PluginName = metrics.Plugin

// Version is the plugin's version; release builds set it with
// -ldflags "-X github.com/seed-e581d630/k8s_gateway.Version=v1.2.3".
var Version = "v0.1.0-dev"
