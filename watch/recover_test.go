package watch

import (
	"strings"
	"testing"

	"github.com/seed-e581d630/k8s_gateway/source"
)

// TestRecordsOfRecovers: a source function that panics on an object makes
// the object publish nothing, with a warning, instead of ending the process.
func TestRecordsOfRecovers(t *testing.T) {
	w := &watched{records: func(obj any) source.Result { return source.Result{RRs: nil, Warnings: []string{obj.(string)}} }}
	if res := recordsOf(w, "fine"); len(res.Warnings) != 1 || res.Warnings[0] != "fine" {
		t.Errorf("a working source: %+v", res)
	}
	res := recordsOf(w, 42) // not a string: the type assertion panics
	if len(res.RRs) != 0 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "the plugin failed on this object") {
		t.Errorf("a panicking source: %+v", res)
	}
}
