#!/usr/bin/env bash
# jobs/cache.sh: the seeds' cached / uncached table, BENCH_CACHE_MB MiB in
# 1 MiB requests (fio, psync; rates by fio's run time), each with its CPU
# load (CPU s / wall s of the fio process, in %):
#   write-cached    into the page cache, no fsync (what the caller waits for)
#   write-uncached  O_DIRECT writes
#   read-cached     read again at once, from the page cache
#   read-uncached   O_DIRECT reads
# A target that refuses O_DIRECT leaves its uncached rows empty.
set -eu
. "$(dirname "$0")/../lib.sh"
NAME=${BENCH_JOBNAME:-cache} F=$BENCH_MNT/cache.dat

one() {	# ROW FIO-ARGS...
	local row=$1
	shift
	bench_measure fio --name="$row" --filename="$F" --size="${BENCH_CACHE_MB}M" --bs=1M \
		--ioengine=psync --output-format=json "$@" || return 0
	read -r _ _ _ secs < <(python3 "$(dirname "$0")/../fio_json.py" "$BENCH_TGT/out")
	bench_result "$NAME-$row" MiB/s "$(bench_calc "$BENCH_CACHE_MB / $secs" 0)" MiB/s
	bench_result "$NAME-$row" cpu% "$(bench_calc "100 * $MEAS_CPU / $MEAS_WALL" 0)" %
}

rm -f "$F"
one write-cached --rw=write --end_fsync=0
one read-cached --rw=read --invalidate=0
sync
one write-uncached --rw=write --direct=1
one read-uncached --rw=read --direct=1
rm -f "$F"
