#!/bin/bash
# Runs every unit test binary given, RAIDFS_UNIT_JOBS (default: the number
# of CPUs) at a time - they are independent (each works in its own
# temporary files and loop devices) - and prints each one's output whole,
# in the order given, once it is done, then a line with its time (PASS,
# FAIL or SKIP); one summary line at the end.  A binary exiting 77 was skipped (it
# lacks what it needs, such as root for loop devices: the automake/libfuse
# convention) and is counted apart, never as passed or failed.
set -u
SKIPPED=77
jobs=${RAIDFS_UNIT_JOBS:-$(nproc)}
out=$(mktemp -d "${TMPDIR:-/tmp}/raidfs-unit.XXXXXX")
trap 'rm -rf "$out"' EXIT
pass=0
fail=0
skip=0
failed=""
i=0
for t in "$@"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	( start=$(date +%s); "$t" >"$out/$i.out" 2>&1; echo $? >"$out/$i.rc"
	  echo $(($(date +%s) - start)) >"$out/$i.secs" ) &
	i=$((i + 1))
done
wait
i=0
for t in "$@"; do
	cat "$out/$i.out"
	rc=$(cat "$out/$i.rc" 2>/dev/null || echo 1)
	secs=$(cat "$out/$i.secs" 2>/dev/null || echo "?")
	i=$((i + 1))
	if [ "$rc" -eq 0 ]; then
		echo "PASS $(basename "$t") (${secs}s)"
		pass=$((pass + 1))
	elif [ "$rc" -eq "$SKIPPED" ]; then
		echo "SKIP $(basename "$t") (${secs}s)"
		skip=$((skip + 1))
	else
		echo "FAIL $(basename "$t") (exit $rc, ${secs}s)"
		fail=$((fail + 1))
		failed="$failed $(basename "$t")"
	fi
done
echo "unit: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] || { echo "failed:$failed"; exit 1; }
