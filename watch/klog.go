package watch

import (
	"fmt"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/seed-e581d630/k8s_gateway/internal/plog"
)

// log is the plugin's logger: every line carries plugin/k8s_gateway:.
var log = plog.Log

var klogOnce sync.Once

// RouteKlog sends client-go's log lines (klog) through the plugin's logger,
// as CoreDNS's kubernetes plugin does with its own, so that they carry the
// plugin/k8s_gateway: prefix instead of klog's format. klog still filters by
// its own verbosity (-v, 0 by default) before a line reaches the sink.
func RouteKlog() {
	klogOnce.Do(func() { klog.SetLogger(logr.New(klogSink{})) })
}

// klogSink is a logr.LogSink that writes through plog.Log.
type klogSink struct {
	name   string
	values []any
}

func (klogSink) Init(logr.RuntimeInfo) {}
func (klogSink) Enabled(int) bool      { return true }

func (s klogSink) Info(level int, msg string, kv ...any) {
	plog.Log.Info(s.line(msg, nil, kv))
}

func (s klogSink) Error(err error, msg string, kv ...any) {
	plog.Log.Error(s.line(msg, err, kv))
}

func (s klogSink) WithValues(kv ...any) logr.LogSink {
	s.values = append(s.values[:len(s.values):len(s.values)], kv...)
	return s
}

func (s klogSink) WithName(name string) logr.LogSink {
	if s.name != "" {
		name = s.name + "/" + name
	}
	s.name = name
	return s
}

// line formats one klog line: "client-go: [name: ]msg[: err] key=value ...".
func (s klogSink) line(msg string, err error, kv []any) string {
	var b strings.Builder
	b.WriteString("client-go: ")
	if s.name != "" {
		b.WriteString(s.name)
		b.WriteString(": ")
	}
	b.WriteString(msg)
	if err != nil {
		b.WriteString(": ")
		b.WriteString(err.Error())
	}
	all := append(s.values[:len(s.values):len(s.values)], kv...)
	for i := 0; i+1 < len(all); i += 2 {
		fmt.Fprintf(&b, " %v=%v", all[i], all[i+1])
	}
	return b.String()
}
