#!/usr/bin/env bash
# gotest.sh runs one `go test` stage of `make test` against real components
# and gives it a verdict that cannot be green on tests that did not run
# (hack/gotest, whose tests run a module whose tests crash, panic, time out,
# flake and pass):
#
#   - every top-level test the command selects (go test -list) must report
#     PASS or SKIP; the ones that failed, crashed the binary, were running at
#     its timeout, or never ran, are run again, together. The stage passes
#     only if they all pass then; those that failed first are reported FLAKY,
#     so that a test that depends on machine load is seen and fixed, not
#     hidden. More than K8SGW_RETRY_MAX (3) that failed fail the stage at once;
#   - a command that exits non-zero although every test passed fails;
#   - the verdict, the flaky tests, the tests run again and the skipped ones
#     (with their reason) are printed last, and appended to the file
#     K8SGW_TEST_SUMMARY names, which make test prints at its very end.
#
# Usage: hack/gotest.sh go test -tags e2e -count=1 -v ./test/e2e
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$(mktemp -d "${TMPDIR:-/tmp}/k8sgw-gotest-XXXXXX")
trap 'rm -rf "$bin"' EXIT
(cd "$root" && GOFLAGS= "$1" build -o "$bin/gotest" ./hack/gotest)
"$bin/gotest" "$@"
