#!/usr/bin/env bash
# jobs/links.sh: hard links and symlinks (issue 10: "about 6x slower than
# tmpfs"): BENCH_FILES / 2 files of 4 KiB created untimed, then a hard link
# to each and a symlink to each, each phase timed on its own with its
# syncfs (bench_meta.c); the directory removed untimed, also on failure.
# Half, so that the names' inodes are BENCH_FILES as in the meta job: the
# ceiling keeps a descriptor per inode, and a container's root cannot
# raise its limit (20,000 here).  Names/s, CPU us per name.
set -eu
. "$(dirname "$0")/../lib.sh"
NAME=${BENCH_JOBNAME:-links} D=$BENCH_MNT/links N=$(( BENCH_FILES / 2 ))
trap 'rm -rf "$D"' EXIT
"$BENCH_BIN/bench/bench_meta" create "$D" "$N" || exit 1
for phase in link symlink; do
	bench_measure "$BENCH_BIN/bench/bench_meta" "$phase" "$D" "$N" || exit 1
	bench_result "$NAME-$phase" files/s "$(bench_calc "$N / $MEAS_WALL" 0)" files/s
	bench_result "$NAME-$phase" cpu/op "$(bench_calc "$MEAS_CPU * 1000000 / $N" 1)" us
done
