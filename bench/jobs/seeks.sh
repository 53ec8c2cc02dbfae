#!/usr/bin/env bash
# jobs/seeks.sh: the seeds' program (bench_seeks.c): a BENCH_SEEK_MB MiB
# file written with fsync before close, BENCH_SEEKS random seeks + 4 KiB
# reads, then one sequential read, the page cache dropped before each read
# phase.  Each phase: its rate and its CPU load (CPU s / wall s, in %, the
# daemon's and kernel threads' included: bench_measure).
set -eu
. "$(dirname "$0")/../lib.sh"
NAME=${BENCH_JOBNAME:-seeks} F=$BENCH_MNT/seeks.dat EXE=$BENCH_BIN/bench/bench_seeks

load() { bench_result "$NAME-$1" cpu% "$(bench_calc "100 * $MEAS_CPU / $MEAS_WALL" 0)" %; }

bench_measure "$EXE" write "$F" "$BENCH_SEEK_MB" || exit 1
bench_result "$NAME-write" MiB/s "$(bench_calc "$BENCH_SEEK_MB / $MEAS_WALL" 0)" MiB/s
load write
bench_drop_caches
bench_measure "$EXE" seek "$F" "$BENCH_SEEKS" || exit 1
bench_result "$NAME-seek" seeks/s "$(bench_calc "$BENCH_SEEKS / $MEAS_WALL" 0)" seeks/s
load seek
bench_drop_caches
bench_measure "$EXE" read "$F" || exit 1
bench_result "$NAME-read" MiB/s "$(bench_calc "$BENCH_SEEK_MB / $MEAS_WALL" 0)" MiB/s
load read
rm -f "$F"
