#!/usr/bin/env bash
# jobs/fsx.sh: fsx (tests/tools/fsx.c) for BENCH_FSX_OPS operations with a
# fixed seed: seconds, and CPU s.  Its data checks make a wrong answer fail
# the job (a missing result in the table) rather than run fast.
set -eu
. "$(dirname "$0")/../lib.sh"
NAME=${BENCH_JOBNAME:-fsx} EXE=$BENCH_TOP/build/tools/fsx
[ -x "$EXE" ] || bench_skip "no $EXE (make build/tools/fsx)"
bench_measure "$EXE" -q -N "$BENCH_FSX_OPS" -S 1 "$BENCH_MNT/fsx.dat" || exit 1
bench_result "$NAME" seconds "$MEAS_WALL" s
bench_result "$NAME" cpu "$MEAS_CPU" s
rm -f "$BENCH_MNT/fsx.dat" "$BENCH_MNT"/fsx.dat.*
