#!/usr/bin/env bash
# Runs make targets as timed steps and prints how long each took, then a
# summary table (also in build/test-times.txt). Used by `make test`.
#
#   scripts/steps.sh deps vet "unit|integration" "ui-test+desktop" e2e
#
# A step "a|b" runs its targets in one make at once (-j, output kept per
# target): for steps that mostly wait (real servers, browsers) beside ones
# that compute. "a+b" runs them in one make one after the other, so a
# target both need (frontend) runs once. Stops at the first failing step.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
times=build/test-times.txt
: >"$times"
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?"; }
total_start=$(date +%s)
for step in "$@"; do
	targets=${step//[|+]/ }
	jobs=1
	case "$step" in *"|"*) jobs=$(wc -w <<<"$targets") ;; esac
	echo "=== step $step (load $(load))"
	start=$(date +%s)
	# shellcheck disable=SC2086
	make --no-print-directory -j"$jobs" --output-sync=target $targets
	rc=$?
	secs=$(( $(date +%s) - start ))
	printf '%-32s %4ds  load %s\n' "$step" "$secs" "$(load)" | tee -a "$times"
	if [ "$rc" -ne 0 ]; then
		echo "=== step $step failed (exit $rc) after ${secs}s" >&2
		exit "$rc"
	fi
done
total=$(( $(date +%s) - total_start ))
printf '%-32s %4ds (%dm%02ds)\n' "total" "$total" $((total / 60)) $((total % 60)) | tee -a "$times"
echo "=== step times (build/test-times.txt):"
cat "$times"
