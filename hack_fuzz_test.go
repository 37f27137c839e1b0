package gateway

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGo is a go command for hack/fuzz.sh: two packages of two fuzz targets
// each (none with FAKE_NONE); each fuzz run of target T does what the next
// word of $FAKE_T says: pass, deadline (the coordinator's own deadline,
// go.dev/issue/75804, as Go 1.26 prints it), deadline+ (that line and an
// error of the target's), or crash (an input found). Each run is logged.
const fakeGo = `#!/usr/bin/env bash
dir=$(dirname "$0")
case "$1 $2" in
"list ./...") printf 'example/a\nexample/test/e2e\nexample/b\n'; exit 0 ;;
"test -list") [ -n "${FAKE_NONE:-}" ] || case $4 in example/a) printf 'FuzzA1\nFuzzA2\n' ;; example/b) printf 'FuzzB\n' ;; esac
	echo "ok  	$4	0.01s"; exit 0 ;;
esac
t=${5#^}; t=${t%$}; pkg=${@: -1}
echo "$t" >>"$dir/runs"
n=$(grep -c "^$t\$" "$dir/runs")
var=FAKE_$t
what=$(echo "${!var:-pass}" | cut -d, -f"$n")
echo "fuzz: elapsed: 0s, gathering baseline coverage: 0/3 completed"
case $what in
pass) printf 'fuzz: elapsed: 10s, execs: 99 (9/sec), new interesting: 0 (total: 3)\nPASS\nok  \t%s\t10.0s\n' "$pkg" ;;
deadline) printf 'fuzz: elapsed: 10s, execs: 99 (0/sec), new interesting: 0 (total: 3)\n--- FAIL: %s (10.02s)\n    context deadline exceeded\nFAIL\nexit status 1\nFAIL\t%s\t10.1s\n' "$t" "$pkg"; exit 1 ;;
deadline+) printf -- '--- FAIL: %s (10.02s)\n    context deadline exceeded\n    x_test.go:9: the target failed too\nFAIL\nexit status 1\nFAIL\t%s\t10.1s\n' "$t" "$pkg"; exit 1 ;;
crash) printf -- '--- FAIL: %s (0.50s)\n    --- FAIL: %s (0.00s)\n        x_test.go:9: context deadline exceeded\n    \n    Failing input written to testdata/fuzz/%s/0a1b\n    To re-run:\n    go test -run=%s/0a1b\nFAIL\nexit status 1\nFAIL\t%s\t0.6s\n' "$t" "$t" "$t" "$t" "$pkg"; exit 1 ;;
esac
`

// TestFuzzStage runs hack/fuzz.sh (make fuzz) with a fake go: every target
// of the packages but test/ is fuzzed; an input found fails the stage at
// once; a run that failed only with the fuzzing coordinator's own deadline
// is run again, at most twice, and reported FLAKY in the summary.
func TestFuzzStage(t *testing.T) {
	all := []string{"FuzzA1", "FuzzA2", "FuzzB"}
	for _, tc := range []struct {
		name  string
		env   []string
		fail  bool
		runs  []string // the fuzz runs, in order
		flaky string   // in the summary; "" for none
	}{
		{name: "pass", runs: all},
		{name: "found", env: []string{"FAKE_FuzzA2=crash"}, fail: true, runs: []string{"FuzzA1", "FuzzA2"}},
		{name: "deadline then pass", env: []string{"FAKE_FuzzA2=deadline,pass"}, runs: []string{"FuzzA1", "FuzzA2", "FuzzA2", "FuzzB"},
			flaky: "FLAKY FuzzA2 (example/a): the fuzzing coordinator's deadline (go.dev/issue/75804), 1 of 2 runs\n"},
		{name: "deadline twice", env: []string{"FAKE_FuzzB=deadline,deadline,pass"}, runs: []string{"FuzzA1", "FuzzA2", "FuzzB", "FuzzB", "FuzzB"},
			flaky: "FLAKY FuzzB (example/b): the fuzzing coordinator's deadline (go.dev/issue/75804), 2 of 3 runs\n"},
		{name: "deadline thrice", env: []string{"FAKE_FuzzA1=deadline,deadline,deadline"}, fail: true, runs: []string{"FuzzA1", "FuzzA1", "FuzzA1"}},
		{name: "deadline and an error", env: []string{"FAKE_FuzzA1=deadline+,pass"}, fail: true, runs: []string{"FuzzA1"}},
		{name: "found, its error the deadline", env: []string{"FAKE_FuzzA1=crash,pass"}, fail: true, runs: []string{"FuzzA1"}},
		{name: "no target", env: []string{"FAKE_NONE=1"}, fail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			goCmd, summary := filepath.Join(dir, "go"), filepath.Join(dir, "summary")
			if err := os.WriteFile(goCmd, []byte(fakeGo), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("hack/fuzz.sh", goCmd, "10s")
			cmd.Env = append(append(os.Environ(), "K8SGW_TEST_SUMMARY="+summary, "TMPDIR="+dir), tc.env...)
			out, err := cmd.CombinedOutput()
			if failed := err != nil; failed != tc.fail {
				t.Fatalf("fuzz.sh failed %v (%v), want %v:\n%s", failed, err, tc.fail, out)
			}
			runs, _ := os.ReadFile(filepath.Join(dir, "runs"))
			if got := strings.Fields(string(runs)); strings.Join(got, " ") != strings.Join(tc.runs, " ") {
				t.Errorf("fuzz runs %q, want %q:\n%s", got, tc.runs, out)
			}
			got, _ := os.ReadFile(summary)
			if string(got) != tc.flaky {
				t.Errorf("summary %q, want %q", got, tc.flaky)
			}
		})
	}
}
