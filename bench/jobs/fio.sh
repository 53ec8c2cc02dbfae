#!/usr/bin/env bash
# jobs/fio.sh KIND: one fio job of issue 10's table on BENCH_MNT/bench.dat
# (psync, the file BENCH_SIZE_MB MiB):
#   seqwrite   1 MiB writes, fsync at the end          MiB/s, CPU s/GiB
#   seqread    1 MiB reads, page cache dropped first   MiB/s, CPU s/GiB
#   randread1  4 KiB O_DIRECT random reads, 1 job      IOPS, CPU us/op
#   randread4  the same, 4 jobs                        IOPS, CPU us/op
#   randwrite  4 KiB random writes, fsync every 32     IOPS, CPU us/op
#   randwrite-direct  4 KiB random O_DIRECT writes, no fsync  IOPS, CPU us/op
# The random jobs run BENCH_RUNTIME seconds; the reads need seqwrite's file.
# Rates are fio's own (its run time includes the end fsync: checked, and
# leaves out fio's start-up); CPU is the whole fio process's and what it
# costs outside (bench_measure).
set -eu
. "$(dirname "$0")/../lib.sh"
KIND=$1 NAME=${BENCH_JOBNAME:-fio-$1}
F=$BENCH_MNT/bench.dat

args=(--name="$KIND" --filename="$F" --size="${BENCH_SIZE_MB}M" --ioengine=psync
	--group_reporting --output-format=json)
random=(--bs=4k --time_based --runtime="$BENCH_RUNTIME")
case $KIND in
seqwrite)  rm -f "$F"; args+=(--rw=write --bs=1M --end_fsync=1) ;;
seqread)   bench_drop_caches; args+=(--rw=read --bs=1M --invalidate=1) ;;
randread1) args+=(--rw=randread --direct=1 "${random[@]}") ;;
randread4) args+=(--rw=randread --direct=1 --numjobs=4 "${random[@]}") ;;
randwrite) args+=(--rw=randwrite --fsync=32 "${random[@]}") ;;
randwrite-direct) args+=(--rw=randwrite --direct=1 "${random[@]}") ;;
*) echo "fio.sh: no job $KIND" >&2; exit 2 ;;
esac
[ "$KIND" = seqwrite ] || [ -s "$F" ] || bench_skip "$NAME: no $F (seqwrite first)"

bench_measure fio "${args[@]}" || exit 1
read -r bytes ios iops secs < <(python3 "$(dirname "$0")/../fio_json.py" "$BENCH_TGT/out")

case $KIND in
seq*)
	bench_result "$NAME" MiB/s "$(bench_calc "$bytes / 1048576 / $secs" 0)" MiB/s
	bench_result "$NAME" cpu/GiB "$(bench_calc "$MEAS_CPU / ($bytes / 1073741824)" 2)" s ;;
*)
	bench_result "$NAME" IOPS "$(bench_calc "$iops" 0)" IOPS
	bench_result "$NAME" cpu/op "$(bench_calc "$MEAS_CPU * 1000000 / $ios" 1)" us ;;
esac
