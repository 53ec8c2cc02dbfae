#!/usr/bin/env bash
# jobs/rebuild.sh: scrub and rebuild time of a fresh target filled to 10 %
# and then 90 % of its capacity (df).  The target script does the work
# (BENCH_TARGET_SCRIPT scrub | rebuild: offline or online, its choice) and
# prints "WALL CPU MEMBER_MB MEMBERS".  Rates: a scrub's in MiB of data
# (used before the fill + the fill) per second, a rebuild's in MiB of the rebuilt member per
# second (the member's whole size: what issue 10 compares with the
# members' sequential read speed).
set -eu
. "$(dirname "$0")/../lib.sh"
NAME=${BENCH_JOBNAME:-rebuild}

# The capacity is df's used + available: btrfs's size is the raw size of
# its devices, parity included.
fill_to() {	# PCT: one more file brings the use to PCT % of the capacity
	local cap used mb
	read -r cap used < <(df -Pm "$BENCH_MNT" | awk 'NR == 2 { print $3 + $4, $3 }')
	# A target's capacity is its members'; one far larger is its store's.
	[ "$cap" -le $((BENCH_CAP_MB * 4 + 1024)) ] || bench_skip "$BENCH_MNT: ${cap} MiB, not an array"
	mb=$(( cap * $1 / 100 - used ))
	[ "$mb" -le 0 ] || "$BENCH_BIN/bench/bench_seeks" write "$BENCH_MNT/fill$1.dat" "$mb" || return 1
	# What is there now; not df's word again: btrfs and zfs count late.
	echo $(( used + (mb > 0 ? mb : 0) )) >"$BENCH_TGT/used"
}

# shellcheck disable=SC2086
for pct in 10 90; do
	fill_to "$pct" || { bench_log "$BENCH_TARGET: cannot fill to $pct %"; continue; }
	for verb in scrub rebuild; do
		out=$("$BENCH_TARGET_SCRIPT" "$verb" $BENCH_TARGET_ARG) || { [ $? -eq 77 ] && continue; exit 1; }
		read -r wall cpu mb n <<<"$(echo "$out" | tail -1)"
		bench_result "$verb-$pct%" seconds "$wall" s
		if [ "$verb" = scrub ]; then
			rate=$(bench_calc "$(cat "$BENCH_TGT/used") / $wall" 0)
		else
			rate=$(bench_calc "$mb * $n / $wall" 0)
		fi
		bench_result "$verb-$pct%" MiB/s "$rate" MiB/s
		bench_result "$verb-$pct%" cpu "$cpu" s
	done
done
