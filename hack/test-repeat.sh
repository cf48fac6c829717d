#!/usr/bin/env bash
# Runs the given packages N times (each time in fresh test processes, -count=1) and prints every test that failed
# with how often. Exits non-zero if any run failed. Usage: hack/test-repeat.sh N PACKAGES...
set -uo pipefail
n=${1:?usage: test-repeat.sh N PACKAGES...}
shift
pkgs=("$@")
logdir=$(mktemp -d "${TMPDIR:-/tmp}/test-repeat.XXXXXX")
failed_runs=0
for i in $(seq 1 "$n"); do
	start=$(date +%s)
	if go test -count=1 "${pkgs[@]}" >"$logdir/run-$i.log" 2>&1; then
		result=ok
	else
		result=FAIL
		failed_runs=$((failed_runs + 1))
	fi
	echo "run $i/$n: $result in $(($(date +%s) - start))s (log: $logdir/run-$i.log)"
done
echo
# Top-level and subtests: "--- FAIL: TestX (1.2s)" and "    --- FAIL: TestX/sub (0.1s)"; packages that failed
# without a failing test (build errors, panics, timeouts) appear as "FAIL <package>".
summary=$(cat "$logdir"/run-*.log | sed -nE 's/^ *--- FAIL: ([^ ]+).*/\1/p; s/^FAIL\t([^ \t]+)\t.*/package \1/p' | sort | uniq -c | sort -rn)
if [ -z "$summary" ]; then
	echo "0 failures in $n runs of: ${pkgs[*]}"
	exit 0
fi
echo "Failures in $n runs (count, test):"
echo "$summary" | awk -v n="$n" '{ printf "  %d/%d  %s %s\n", $1, n, $2, $3 }'
echo "$failed_runs of $n runs failed; logs in $logdir"
exit 1
