#!/usr/bin/env bash
# jobs/meta.sh: BENCH_FILES files of 4 KiB created (then syncfs), stat'ed
# (page cache dropped first) and deleted (then syncfs), each phase timed
# on its own (bench_meta.c).  Files/s and CPU us per file.
set -eu
. "$(dirname "$0")/../lib.sh"
NAME=${BENCH_JOBNAME:-meta} D=$BENCH_MNT/meta N=$BENCH_FILES
for phase in create stat delete; do
	[ "$phase" != stat ] || bench_drop_caches
	bench_measure "$BENCH_BIN/bench/bench_meta" "$phase" "$D" "$N" || exit 1
	bench_result "$NAME-$phase" files/s "$(bench_calc "$N / $MEAS_WALL" 0)" files/s
	bench_result "$NAME-$phase" cpu/op "$(bench_calc "$MEAS_CPU * 1000000 / $N" 1)" us
done
