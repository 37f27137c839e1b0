package harness

import (
	"strings"
	"testing"
)

func TestNeedsRoot(t *testing.T) {
	for _, tc := range []struct {
		euid      int
		skipValue string
		skip, err string // substrings; "" for none
	}{
		{euid: 0},
		{euid: 65534, err: "needs root (it mounts) and runs as uid 65534: run it as root, or set K8SGW_SKIP_X=1"},
		{euid: 65534, skipValue: "1", skip: "suite x skipped: K8SGW_SKIP_X=1"},
		{euid: 0, skipValue: "1", skip: "suite x skipped: K8SGW_SKIP_X=1"},
		{euid: 65534, skipValue: "yes", err: `K8SGW_SKIP_X="yes": set it to 1`},
		{euid: 0, skipValue: "0", err: `K8SGW_SKIP_X="0"`},
	} {
		skip, err := needsRoot(tc.euid, tc.skipValue, "suite x", "K8SGW_SKIP_X", "it mounts")
		if tc.skip == "" && skip != "" || !strings.Contains(skip, tc.skip) {
			t.Errorf("uid %d, %q: skip %q, want %q", tc.euid, tc.skipValue, skip, tc.skip)
		}
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("uid %d, %q: error %v, want %q", tc.euid, tc.skipValue, err, tc.err)
		}
	}
}
