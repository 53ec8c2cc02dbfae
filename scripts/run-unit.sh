#!/bin/sh
# Runs every unit test binary given; prints one summary line at the end.
set -u
pass=0
fail=0
failed=""
for t in "$@"; do
	if "$t"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed="$failed $(basename "$t")"
	fi
done
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ] || { echo "failed:$failed"; exit 1; }
