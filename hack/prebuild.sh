#!/usr/bin/env bash
# hack/prebuild.sh - build the test tools of `make test` in the background,
# so that their cold builds overlap the stages that do not need them yet
# (lint, unit, fuzz, and the e2e tests that only wait on the API server).
#
# Every tool script caches its binaries under ~/.cache/k8s_gateway and takes
# a lock per tool while it builds, so a test that needs a tool simply waits
# for the background build of it instead of starting a second one. With warm
# caches each step is a stamp check and the whole run takes a second.
#
# Usage: hack/prebuild.sh start|stop|wait
#   start  start the builds (niced) in the background; log in $CACHE/prebuild.log
#   stop   stop a background run (and its builds) that is still going
#   wait   wait for the background run to end; print its log's summary
set -euo pipefail

cd "$(dirname "$0")/.."
CACHE=${K8SGW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s_gateway}
PIDFILE=$CACHE/prebuild.pid
LOG=$CACHE/prebuild.log

# The order is the order in which make test needs them.
steps=(
	"hack/gotool.sh actionlint"
	"hack/gotool.sh helm-unittest"
	"hack/cluster.sh build"
	"hack/acme.sh build"
	"hack/helm.sh"
	"hack/acme.sh certmanager"
	"hack/baremetal.sh build"
	"hack/geo.sh build"
	"hack/fork.sh build"
	"hack/cluster.sh build-node"
	"hack/release.sh warm"
)

run() {
	local step start
	for step in "${steps[@]}"; do
		start=$(date +%s)
		if $step >>"$LOG" 2>&1 </dev/null; then
			echo "prebuild: $step: $(($(date +%s) - start)) s" >>"$LOG"
		else
			# Not fatal: the test that needs the tool builds it again and
			# reports the error where it matters.
			echo "prebuild: $step: FAILED after $(($(date +%s) - start)) s" >>"$LOG"
		fi
	done
}

case ${1:-} in
start)
	mkdir -p "$CACHE"
	: >"$LOG"
	# setsid: a process group of its own, so that stop ends every build.
	setsid nice -n 10 "$0" run </dev/null >/dev/null 2>&1 &
	echo $! >"$PIDFILE"
	echo "prebuild: building the test tools in the background (log: $LOG)"
	;;
run) run ;;
stop)
	if [[ -f $PIDFILE ]]; then
		pid=$(cat "$PIDFILE")
		kill -- "-$pid" 2>/dev/null || true
		rm -f "$PIDFILE"
	fi
	;;
wait)
	if [[ -f $PIDFILE ]]; then
		pid=$(cat "$PIDFILE")
		while kill -0 "$pid" 2>/dev/null; do sleep 1; done
		rm -f "$PIDFILE"
	fi
	grep '^prebuild:' "$LOG" 2>/dev/null || true
	;;
*)
	echo "usage: $0 start|stop|wait" >&2
	exit 2
	;;
esac
