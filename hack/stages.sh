#!/usr/bin/env bash
# stages.sh runs the stages of `make test` in order, each as `make STAGE`,
# and stops at the first that fails. Each stage's verdict goes to the file
# K8SGW_TEST_SUMMARY names, followed by what hack/gotest.sh wrote of it (its
# tests' verdict, the flaky tests, the tests run again, the skipped ones),
# so that `make test` can print all of it last, whatever failed.
#
# Usage: K8SGW_TEST_SUMMARY=FILE hack/stages.sh MAKE STAGE...
set -uo pipefail

summary=${K8SGW_TEST_SUMMARY:?set K8SGW_TEST_SUMMARY to the summary file}
make=$1
shift
own=$(mktemp "${TMPDIR:-/tmp}/k8sgw-stage-XXXXXX")
trap 'rm -f "$own"' EXIT

echo "==== make test: the stages" >>"$summary"
rc=0
for stage in "$@"; do
	if ((rc != 0)); then
		printf '%-12s not run: an earlier stage failed\n' "$stage" >>"$summary"
		continue
	fi
	: >"$own"
	start=$(date +%s)
	K8SGW_STAGE=$stage K8SGW_TEST_SUMMARY=$own $make --no-print-directory "$stage"
	rc=$?
	took="$(($(date +%s) - start)) s"
	if ((rc == 0)); then
		printf '%-12s ok (%s)\n' "$stage" "$took" >>"$summary"
	else
		printf '%-12s FAILED (exit %d, %s)\n' "$stage" "$rc" "$took" >>"$summary"
	fi
	sed 's/^/    /' "$own" >>"$summary"
done
exit "$rc"
