#!/usr/bin/env bash
# fuzz.sh fuzzes each fuzz target of every package but test/ and cmd/ for
# FUZZTIME, one after the other, and stops at the first that fails: an
# input the fuzzer found (it writes it under the package's
# testdata/fuzz/TARGET and names it) or any other failure.
#
# One failure is Go's, not the target's: the fuzzing coordinator of Go 1.26
# may report its own -fuzztime deadline as a failure, a bare "context
# deadline exceeded", when a loaded machine preempts it at that moment
# (go.dev/issue/75804, fixed in Go 1.27). A run whose only failure is that
# line found no input; it is run again, twice at most, and the target is
# reported FLAKY last and in the file K8SGW_TEST_SUMMARY names (when set),
# as hack/gotest.sh reports flaky tests. No target at all fails.
#
# Usage: hack/fuzz.sh GO FUZZTIME
set -uo pipefail
usage="usage: hack/fuzz.sh GO FUZZTIME"
go=${1:?$usage}
fuzztime=${2:?$usage}
# Each input that finds new coverage is minimized before fuzzing goes on,
# for up to a minute by default: in a run of seconds that would be most of
# it (no executions are counted meanwhile) and the run would end inside a
# minimization. An input the fuzzer fails on is written whether or not its
# minimization ended.
minimize=${FUZZMINIMIZETIME:-1s}
out=$(mktemp "${TMPDIR:-/tmp}/k8sgw-fuzz-XXXXXX")
trap 'rm -f "$out"' EXIT

# deadline reports whether the run in $out of target $1 failed only with
# the coordinator's deadline: nothing but that line between its --- FAIL
# and FAIL lines (progress lines aside), and no input written.
deadline() {
	! grep -q 'Failing input written to ' "$out" &&
		awk -v t="$1" '
			index($0, "--- FAIL: " t " (") == 1 { f = 1; seen = 1; next }
			f && $0 == "FAIL" { f = 0; next }
			f && /^fuzz: elapsed: / { next }
			f { body = body $0 "\n" }
			END { exit !(seen && body == "    context deadline exceeded\n") }' "$out"
}

pkgs=$("$go" list ./...) || exit 1
flaky=() fuzzed=0
for pkg in $(grep -v -e /test/ -e /cmd/ <<<"$pkgs"); do
	list=$("$go" test -list '^Fuzz' "$pkg") || { echo "$list"; exit 1; }
	for target in $(grep '^Fuzz' <<<"$list"); do
		for try in 1 2 3; do
			echo "fuzzing $target ($pkg) for $fuzztime"
			"$go" test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg" 2>&1 | tee "$out"
			rc=${PIPESTATUS[0]}
			if ((rc == 0)); then
				((try == 1)) || flaky+=("$target ($pkg): the fuzzing coordinator's deadline (go.dev/issue/75804), $((try - 1)) of $try runs")
				break
			fi
			if ((try == 3)) || ! deadline "$target"; then
				echo "fuzz: $target ($pkg) FAILED"
				exit "$rc"
			fi
			echo "fuzz: $target ($pkg): the fuzzing coordinator reported its own deadline (go.dev/issue/75804), no input found: run again"
		done
		((fuzzed++))
	done
done
if ((fuzzed == 0)); then
	echo "fuzz: no fuzz target found"
	exit 1
fi
echo "fuzz: $fuzzed targets fuzzed for $fuzztime each"
for f in "${flaky[@]}"; do
	echo "FLAKY $f"
	[ -z "${K8SGW_TEST_SUMMARY:-}" ] || echo "FLAKY $f" >>"$K8SGW_TEST_SUMMARY"
done
