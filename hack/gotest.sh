#!/usr/bin/env bash
# gotest.sh runs one `go test -v` stage of `make test` against real components
# and makes its failures readable and its verdict fair:
#
#   - the output is kept in a log; on failure the failing tests and their
#     error lines are printed again at the end, where CI logs show them
#     (the daemons' logs dumped by a failing test push them out of sight);
#   - a top-level test that fails is run once more, alone. The stage passes
#     only if it passes then, and it is reported as FLAKY either way, so that
#     a test that depends on machine load is seen and fixed, not hidden. More
#     than K8SGW_RETRY_MAX (3) failing tests fail the stage at once.
#
# Usage: hack/gotest.sh go test -tags e2e -count=1 -v ./test/e2e
set -uo pipefail

max=${K8SGW_RETRY_MAX:-3}
log=$(mktemp "${TMPDIR:-/tmp}/k8sgw-gotest-XXXXXX.log")
trap 'rm -f "$log" "$log.retry"' EXIT

"$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] && exit 0

# summary prints the failing tests of a log and the lines their t.Errorf and
# t.Fatalf wrote (file:line at the start of an indented line).
summary() {
	echo "==== failures of: ${*:2}"
	grep -E '^\s*--- FAIL|^\s+[A-Za-z0-9_]+_test\.go:[0-9]+: ' "$1" | grep -v ' output:$' | tail -n 60
}

mapfile -t failed < <(sed -n 's/^--- FAIL: \([A-Za-z0-9_]*\) .*/\1/p' "$log" | sort -u)
if [ "${#failed[@]}" -eq 0 ] || [ "${#failed[@]}" -gt "$max" ]; then
	summary "$log" "$*"
	echo "==== ${#failed[@]} failing tests (a build error or a crash when 0): not retried"
	exit "$status"
fi

# The package is the last argument; -run goes before it.
pkg=${*: -1}
args=("${@:1:$#-1}")
pattern="^($(IFS='|'; echo "${failed[*]}"))\$"
echo "==== FLAKY? running again: ${failed[*]}"
"${args[@]}" -run "$pattern" "$pkg" 2>&1 | tee "$log.retry"
retry=${PIPESTATUS[0]}
summary "$log" "$*"
if [ "$retry" -eq 0 ]; then
	echo "==== FLAKY: ${failed[*]} failed, then passed alone; the stage passes"
	exit 0
fi
summary "$log.retry" "the retry"
echo "==== FAILED twice: ${failed[*]}"
exit "$retry"
