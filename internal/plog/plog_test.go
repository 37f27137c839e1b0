package plog

import (
	"bytes"
	golog "log"
	"os"
	"strings"
	"testing"

	clog "github.com/coredns/coredns/plugin/pkg/log"
)

// TestPrefix: every level of Log writes one line with the plugin's prefix,
// as CoreDNS's own plugins' lines carry theirs.
func TestPrefix(t *testing.T) {
	var out bytes.Buffer
	golog.SetOutput(&out)
	defer golog.SetOutput(os.Stderr)
	clog.D.Set()
	defer clog.D.Clear()

	for _, tc := range []struct {
		level string
		log   func(format string, v ...any)
	}{
		{"[DEBUG]", Log.Debugf},
		{"[INFO]", Log.Infof},
		{"[WARNING]", Log.Warningf},
		{"[ERROR]", Log.Errorf},
	} {
		out.Reset()
		tc.log("listing %s: retrying", "Service")
		line := strings.TrimSpace(out.String())
		if want := tc.level + " plugin/" + name + ": listing Service: retrying"; !strings.HasSuffix(line, want) || strings.Count(line, "\n") != 0 {
			t.Errorf("%s: got %q, want one line ending in %q", tc.level, line, want)
		}
	}
}
