#!/usr/bin/env bash
# jobs/bonnie.sh: the seeds' bonnie++ table: block sequential output,
# rewrite, block sequential input and random seeks, each with bonnie's own
# %CPU (the benchmark process only: a FUSE daemon's CPU is not in it; the
# other jobs' CPU columns include it).  File BENCH_BONNIE_MB MiB, RAM
# given as half of it (bonnie++ wants the file twice the RAM); per-char
# tests and file creation off (-f -n 0: meta.sh measures files).  The
# bulk I/O is O_DIRECT (-D): a file smaller than the machine's memory would
# otherwise be read back from the page cache, not from the target.
set -eu
. "$(dirname "$0")/../lib.sh"
NAME=${BENCH_JOBNAME:-bonnie}
command -v bonnie++ >/dev/null || bench_skip "bonnie++ not installed (make bench-deps)"
mkdir -p "$BENCH_MNT/bonnie"
bench_measure bonnie++ -d "$BENCH_MNT/bonnie" -s "$BENCH_BONNIE_MB" -r $((BENCH_BONNIE_MB / 2)) \
	-n 0 -u root -q -f -D || exit 1
# CSV (format 1.98): 12,13 block output K/s,%CPU; 14,15 rewrite; 18,19 block
# input; 20,21 random seeks/s.  "+++++" means too fast to measure: no value.
IFS=, read -r -a f < <(grep '^1\.9' "$BENCH_TGT/out" | tail -1)
num() { case $1 in *[!0-9.]* | "") ;; *) echo "$1" ;; esac; }
kib() { [ -z "$(num "$1")" ] || bench_calc "$1 / 1024" 0; }
bench_result "$NAME-output" MiB/s "$(kib "${f[11]:-}")" MiB/s
bench_result "$NAME-output" cpu% "$(num "${f[12]:-}")" %
bench_result "$NAME-rewrite" MiB/s "$(kib "${f[13]:-}")" MiB/s
bench_result "$NAME-rewrite" cpu% "$(num "${f[14]:-}")" %
bench_result "$NAME-input" MiB/s "$(kib "${f[17]:-}")" MiB/s
bench_result "$NAME-input" cpu% "$(num "${f[18]:-}")" %
bench_result "$NAME-seeks" seeks/s "$(num "${f[19]:-}")" seeks/s
bench_result "$NAME-seeks" cpu% "$(num "${f[20]:-}")" %
rm -rf "$BENCH_MNT/bonnie"
