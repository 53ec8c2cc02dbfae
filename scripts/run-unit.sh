#!/bin/sh
# Runs every unit test binary given; one line per test that did not pass,
# one summary line at the end.  A binary exiting 77 was skipped (it lacks
# what it needs, such as root for loop devices: the automake/libfuse
# convention) and is counted apart, never as passed or failed.
set -u
SKIPPED=77
pass=0
fail=0
skip=0
failed=""
for t in "$@"; do
	"$t"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
	elif [ "$rc" -eq "$SKIPPED" ]; then
		echo "SKIP $(basename "$t")"
		skip=$((skip + 1))
	else
		fail=$((fail + 1))
		failed="$failed $(basename "$t")"
	fi
done
echo "unit: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] || { echo "failed:$failed"; exit 1; }
