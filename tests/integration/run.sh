#!/bin/bash
# Runs the integration tests: every tests/integration/tNNN_*.sh, in order,
# each in its own process (each makes and removes its own temporary
# directory, and unmounts what it mounted even when it fails).
#
#   RAIDFS_BIN=build/asan tests/integration/run.sh [NAME-PREFIX...]
#
# A test exits 0 (passed), 77 (skipped: the machine lacks what it needs,
# such as root or /dev/fuse; the automake/libfuse convention) or anything
# else (failed).  Prints PASS, SKIP (with the reason the test gave) or FAIL
# per test with its time, and ends with "integration: N passed, M failed,
# K skipped"; exits non-zero when any test failed.  A test listed in
# tests/integration/SKIP ("name reason...") is skipped with its reason
# printed; the file exists only when the lead engineer decides so.
# RAIDFS_TEST_VERBOSE=1 prints every test's output, not only a failure's.
# RAIDFS_TEST_JOBS tests (default: the number of CPUs) run at once, each
# in its own directory, their results printed in order once all are done;
# a test marked "# raidfs-test: alone" runs by itself.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
export RAIDFS_BIN=${RAIDFS_BIN:-build/asan}
TIMEOUT=${RAIDFS_TEST_TIMEOUT:-900}
VERBOSE=${RAIDFS_TEST_VERBOSE:-0}
JOBS=${RAIDFS_TEST_JOBS:-$(nproc)}
SKIPPED=77

skip_reason() {
	[ -f "$HERE/SKIP" ] || return 1
	awk -v t="$1" '$1 == t { $1 = ""; sub(/^ /, ""); print; found = 1 } END { exit !found }' "$HERE/SKIP"
}

selected() {
	local name=$1 p
	[ ${#PREFIXES[@]} -eq 0 ] && return 0
	for p in "${PREFIXES[@]}"; do
		case $name in "$p"*) return 0 ;; esac
	done
	return 1
}

# The FUSE mounts now under directory $1 (a test's RAIDFS_TEST_TMP).
test_mounts() {
	awk -v d="$1/" '$3 ~ /^fuse/ && index($2, d) == 1 { print $2 }' /proc/self/mounts
}

# run_one NAME SCRIPT DIR: runs one test with its own temporary directory
# and leaves its exit code, time and output in DIR/NAME.{rc,secs,out}.
run_one() {
	local name=$1 t=$2 dir=$3 start out rc left m
	start=$(date +%s)
	RAIDFS_TEST_TMP=$(mktemp -d /tmp/raidfs-run.XXXXXX)
	chmod 755 "$RAIDFS_TEST_TMP"     # tests run programs as nobody in it
	export RAIDFS_TEST_TMP
	out=$(timeout -k 10 "$TIMEOUT" bash "$t" 2>&1)
	rc=$?
	# A test that leaves a mount behind fails (a later test's tools, such
	# as mkfs.btrfs, trip over a dead one); the runner removes it: it is
	# under the directory this test alone was given.
	left=$(test_mounts "$RAIDFS_TEST_TMP")
	if [ -n "$left" ]; then
		out="$out
  left mounted: $(echo $left)"
		case $rc in 0 | "$SKIPPED") rc=1 ;; esac
		for m in $left; do
			fusermount3 -u -z "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
		done
	fi
	rm -rf --one-file-system "$RAIDFS_TEST_TMP"
	[ $rc -eq 124 ] && out="$out
  timed out after ${TIMEOUT}s"
	printf '%s\n' "$out" >"$dir/$name.out"
	echo $(($(date +%s) - start)) >"$dir/$name.secs"
	echo $rc >"$dir/$name.rc.new" && mv "$dir/$name.rc.new" "$dir/$name.rc"
}

# A test whose script has a line "# raidfs-test: alone" runs with no other
# test beside it (it measures time, or needs the machine to itself).
alone() {
	grep -q '^# raidfs-test: alone' "$1"
}

# report NAME: prints a finished test's result (and output when it failed,
# or always with RAIDFS_TEST_VERBOSE=1) and counts it.
report() {
	local name=$1 rc secs out reason
	if [ -f "$RESULTS/$name.skip" ]; then
		echo "SKIP $name ($(cat "$RESULTS/$name.skip"))"
		skip=$((skip + 1))
		return
	fi
	rc=$(cat "$RESULTS/$name.rc")
	secs=$(cat "$RESULTS/$name.secs")
	out=$(cat "$RESULTS/$name.out")
	if [ "$rc" -eq 0 ]; then
		echo "PASS $name (${secs}s)"
		pass=$((pass + 1))
	elif [ "$rc" -eq $SKIPPED ]; then
		reason=$(sed -n 's/^  SKIP: //p' <<<"$out" | tail -n 1)
		echo "SKIP $name (${reason:-no reason given}, ${secs}s)"
		skip=$((skip + 1))
	else
		echo "FAIL $name (${secs}s, exit $rc)"
		echo "$out" | sed 's/^/    /' | tail -n 60
		fail=$((fail + 1))
		failed+=("$name")
		return
	fi
	[ "$VERBOSE" = 1 ] && echo "$out" | sed 's/^/    /'
}

# report_done: reports, in the tests' order, those finished so far.
report_done() {
	while [ $shown -lt ${#names[@]} ]; do
		local name=${names[$shown]}
		[ -f "$RESULTS/$name.skip" ] || [ -f "$RESULTS/$name.rc" ] || break
		report "$name"
		shown=$((shown + 1))
	done
}

PREFIXES=("$@")
pass=0
fail=0
skip=0
failed=()
names=()
shown=0
RESULTS=$(mktemp -d /tmp/raidfs-results.XXXXXX)
trap 'rm -rf "$RESULTS"' EXIT
for t in "$HERE"/t[0-9]*.sh; do
	name=$(basename "$t" .sh)
	selected "$name" || continue
	names+=("$name")
	if reason=$(skip_reason "$name"); then
		echo "$reason" >"$RESULTS/$name.skip"
		continue
	fi
	if alone "$t"; then
		wait
		report_done
		run_one "$name" "$t" "$RESULTS"
		continue
	fi
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n
		report_done
	done
	run_one "$name" "$t" "$RESULTS" &
done
wait
report_done
echo "integration: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] || { echo "failed: ${failed[*]}"; exit 1; }
