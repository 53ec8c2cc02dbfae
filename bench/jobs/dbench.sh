#!/usr/bin/env bash
# jobs/dbench.sh: dbench, 4 clients, BENCH_DBENCH_S seconds (Debian's
# client.txt load): MB/s as dbench reports it, and CPU load in %.
set -eu
. "$(dirname "$0")/../lib.sh"
NAME=${BENCH_JOBNAME:-dbench}
command -v dbench >/dev/null || bench_skip "dbench not installed (make bench-deps)"
mkdir -p "$BENCH_MNT/dbench"
bench_measure dbench -D "$BENCH_MNT/dbench" -t "$BENCH_DBENCH_S" 4 || exit 1
mbs=$(sed -n 's/^Throughput \([0-9.]*\) MB\/sec.*/\1/p' "$BENCH_TGT/out")
bench_result "$NAME" MB/s "$mbs" MB/s
bench_result "$NAME" cpu% "$(bench_calc "100 * $MEAS_CPU / $MEAS_WALL" 0)" %
rm -rf "$BENCH_MNT/dbench"
