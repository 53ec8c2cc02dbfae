#!/usr/bin/env bash
# bench/run.sh: the benchmark suite (make bench): the same jobs, in
# alternating rounds (A B C, C B A, A B C, ...: every other round runs the
# targets backwards, so that neither a place in the round nor a drift of
# the machine over the run favours one target), on raidfs at every level and on
# its peers; the medians go to docs/BENCHMARKS.md (bench/report.py).
#
#   bench/run.sh [--help]        as root; settings from the environment:
#
#   BENCH_QUICK=1      small sizes, one round: a smoke run of a few minutes
#   BENCH_ROUNDS=N     rounds (default 3; quick 1)
#   BENCH_TARGETS=".." targets, in this order (default: all, see below)
#   BENCH_JOBS=".."    healthy jobs (default: all); BENCH_DEGRADED_JOBS=".."
#                      the jobs run again with one member failed;
#                      BENCH_REBUILD=0 leaves out scrub and rebuild, run
#                      on a fresh array of BENCH_REBUILD_MB MiB of data
#   BENCH_STORE_DIR=D  members in a new folder under D (a disk) instead of
#                      a tmpfs (/dev/shm)
#   BENCH_DISK_MIBPS=N every file in the store (each target's members) a
#                      disk of N MiB/s: tests/tools/faultfs -r N, built as
#                      build/tools/faultfs (make bench-online builds it),
#                      mounted over the store; busy while it works, its
#                      idle time lost.  dd then reads a 1 GiB file through
#                      it once: the members' sequential read, which the
#                      report gives beside the rebuild and scrub rates
#                      (issue 10: rebuild >= 0.8x of it).  A tmpfs reads
#                      at memory speed, so only this measures that goal.
#                      Image files only: ceiling and backing, which keep
#                      a directory tree in the store, fail their setup.
#   BENCH_SIZE_MB, BENCH_RUNTIME, BENCH_FILES, BENCH_FSX_OPS, BENCH_DBENCH_S,
#   BENCH_BONNIE_MB, BENCH_SEEK_MB, BENCH_SEEKS, BENCH_CACHE_MB: job sizes
#   BENCH_OUT=FILE     the report (default docs/BENCHMARKS.md; its plots go
#                      to docs/bench/ beside it); BENCH_NOTE="..." a line
#                      for it (say there if the machine was shared)
#
# Targets: raidfs-0 raidfs-1 raidfs-5 raidfs-6 raidfs-10 (targets/raidfs.sh),
# raidfsloop-5 (raidfs-5 on loop devices over its images: the block-device
# path, members opened O_DIRECT, as btrfs's targets use loop devices),
# ceiling (FUSE passthrough), ceiling-xattr (the same, serving extended
# attributes), zfs-raidz1 zfs-raidz2 (zfs-fuse), btrfs-raid5
# btrfs-raid6 (loop devices), backing (the store itself); raidfsref-LEVEL
# (not in the default list): raidfs-LEVEL run by the build in BENCH_REF_BIN,
# the before of a before/after measurement (bench/speed.sh); raidfsloop-LEVEL
# at the other levels likewise, on request.  A target whose
# tools are missing is skipped with its reason (make bench-deps installs
# them).  Everything a run makes lives in one temp dir and is removed at
# the end, on Ctrl-C or failure too: mounts, loop devices, pools, daemons.
set -eu
BENCH_SUITE=$(cd "$(dirname "$0")" && pwd)
. "$BENCH_SUITE/lib.sh"
case ${1:-} in -h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root (mounts, loop devices)" >&2; exit 1; }

export BENCH_TOP=${BENCH_TOP:-$(cd "$BENCH_SUITE/.." && pwd)}
export BENCH_BIN=${BENCH_BIN:-$BENCH_TOP/build}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	q() { echo "${!1:-$2}"; }
	: "${BENCH_ROUNDS:=1}" "${BENCH_REBUILD_MB:=256}"
	export BENCH_SIZE_MB=$(q BENCH_SIZE_MB 64) BENCH_RUNTIME=$(q BENCH_RUNTIME 1) \
		BENCH_FILES=$(q BENCH_FILES 500) BENCH_FSX_OPS=$(q BENCH_FSX_OPS 2000) \
		BENCH_DBENCH_S=$(q BENCH_DBENCH_S 2) BENCH_BONNIE_MB=$(q BENCH_BONNIE_MB 64) \
		BENCH_SEEK_MB=$(q BENCH_SEEK_MB 64) BENCH_SEEKS=$(q BENCH_SEEKS 200) \
		BENCH_CACHE_MB=$(q BENCH_CACHE_MB 32)
fi
# The full sizes: issue 10's table (1 GiB file, 10,000 files, fsx 100,000
# operations, dbench 4 clients) and the seeds' 1.6 GB file.
export BENCH_SIZE_MB=${BENCH_SIZE_MB:-1024} BENCH_RUNTIME=${BENCH_RUNTIME:-10} \
	BENCH_FILES=${BENCH_FILES:-10000} BENCH_FSX_OPS=${BENCH_FSX_OPS:-100000} \
	BENCH_DBENCH_S=${BENCH_DBENCH_S:-20} BENCH_BONNIE_MB=${BENCH_BONNIE_MB:-1024} \
	BENCH_SEEK_MB=${BENCH_SEEK_MB:-1600} BENCH_SEEKS=${BENCH_SEEKS:-1000} \
	BENCH_CACHE_MB=${BENCH_CACHE_MB:-512}
ROUNDS=${BENCH_ROUNDS:-3}
TARGETS=${BENCH_TARGETS:-raidfs-0 raidfs-1 raidfs-5 raidfs-6 raidfs-10 raidfsloop-5 ceiling ceiling-xattr \
zfs-raidz1 zfs-raidz2 btrfs-raid5 btrfs-raid6 backing}
JOBS=${BENCH_JOBS-seqwrite seqread randread1 randread4 randwrite randwrite-direct meta links fsx dbench bonnie seeks cache}
DEG_JOBS=${BENCH_DEGRADED_JOBS-seqread randread1 randread4 bonnie}
OUT=${BENCH_OUT:-$BENCH_TOP/docs/BENCHMARKS.md}
# What a target must hold at once: the fio file beside the largest other.
big=$BENCH_BONNIE_MB
for s in $BENCH_SEEK_MB $BENCH_CACHE_MB; do [ "$s" -le "$big" ] || big=$s; done
export BENCH_CAP_MB=$(( BENCH_SIZE_MB + big + BENCH_FILES * 8 / 1024 + 256 ))
BENCH_REBUILD_MB=${BENCH_REBUILD_MB:-$(( BENCH_SIZE_MB * 2 ))}

export BENCH_RUN BENCH_STORE BENCH_RESULTS
BENCH_RUN=$(mktemp -d /dev/shm/raidfs-bench.XXXXXX)
if [ -n "${BENCH_STORE_DIR:-}" ]; then
	BENCH_STORE=$(mktemp -d "$BENCH_STORE_DIR/raidfs-bench.XXXXXX")
else
	BENCH_STORE=$BENCH_RUN/store && mkdir "$BENCH_STORE"
fi
BENCH_RESULTS=$BENCH_RUN/results.tsv
: >"$BENCH_RESULTS"
CURRENT= JOB_PID= DISK_PID=
STORE_SAID=${BENCH_STORE_DIR:-tmpfs (/dev/shm)}

# Sets the environment of target NAME's scripts and jobs: its script
# (called as SCRIPT VERB ARG), state dir and mount point.
enter() {	# NAME
	local n=$1
	case $n in
	raidfsref-*) BENCH_TARGET_SCRIPT=raidfs.sh BENCH_TARGET_ARG=${n#*-} ;;
	raidfsloop-*) BENCH_TARGET_SCRIPT=raidfs.sh BENCH_TARGET_ARG=${n#*-} ;;
	raidfs-* | zfs-* | btrfs-*) BENCH_TARGET_SCRIPT=${n%%-*}.sh BENCH_TARGET_ARG=${n#*-} ;;
	ceiling | backing) BENCH_TARGET_SCRIPT=$n.sh BENCH_TARGET_ARG= ;;
	ceiling-xattr) BENCH_TARGET_SCRIPT=ceiling.sh BENCH_TARGET_ARG=xattr ;;
	*) echo "bench: no target $n" >&2; exit 2 ;;
	esac
	BENCH_TARGET_SCRIPT=$BENCH_SUITE/targets/$BENCH_TARGET_SCRIPT
	# raidfsref-LEVEL: the same target run by another build of raidfs
	# (BENCH_REF_BIN), to measure a change against what it changed.
	BENCH_RAIDFS_BIN=$BENCH_BIN
	case $n in raidfsref-*) BENCH_RAIDFS_BIN=${BENCH_REF_BIN:-} ;; esac
	export BENCH_RAIDFS_BIN
	export BENCH_TARGET=$n BENCH_TGT=$BENCH_RUN/t/$n BENCH_MNT=$BENCH_RUN/mnt/$n \
		BENCH_TARGET_SCRIPT BENCH_TARGET_ARG
	mkdir -p "$BENCH_TGT" "$BENCH_MNT"
}

target() {	# VERB: the current target's script
	# shellcheck disable=SC2086
	"$BENCH_TARGET_SCRIPT" "$1" $BENCH_TARGET_ARG
}

# A job runs in its own process group (JOB_PID), so that cleanup can end
# it and whatever it started, should the run be interrupted.
job() {	# JOB [SUFFIX]: one job on the mounted target; a failure is logged
	local name=$1${2:-} rc=0 script=$1.sh arg= t0=$SECONDS
	case $1 in seq* | rand*) script=fio.sh arg=$1 name=fio-$name ;; esac
	set -m
	# shellcheck disable=SC2086
	BENCH_JOBNAME=$name "$BENCH_SUITE/jobs/$script" $arg &
	JOB_PID=$!
	set +m
	wait "$JOB_PID" || rc=$?
	JOB_PID=
	bench_log "$BENCH_TARGET: $name $((SECONDS - t0)) s"
	case $rc in 0 | 77) ;; *) bench_log "$BENCH_TARGET: job $name failed ($rc)"
		echo "$BENCH_ROUND	$BENCH_TARGET	$name	failed" >>"$BENCH_RUN/failed" ;;
	esac
}

# One target's part of a round: healthy jobs, degraded reads, then scrub
# and rebuild on a fresh copy.
round_target() {	# NAME
	local j cap=$BENCH_CAP_MB
	enter "$1"
	CURRENT=$1
	cut -d' ' -f1 /proc/loadavg >>"$BENCH_RUN/load"
	bench_log "round $BENCH_ROUND: $1"
	target up || { bench_log "$1: setup failed"; target down || true; CURRENT=; return 0; }
	for j in $JOBS; do job "$j"; done
	if [ -n "$DEG_JOBS" ] && target degrade >>"$BENCH_TGT/log" 2>&1; then
		for j in $DEG_JOBS; do job "$j" -degraded; done
	fi
	target down || bench_log "$1: teardown failed"
	# Only where scrub makes sense: "90 % full" of the ceiling or the backing
	# store would be 90 % of the store itself.
	[ "${BENCH_REBUILD:-1}" = 1 ] && target scrubs 2>/dev/null || { CURRENT=; return 0; }
	BENCH_CAP_MB=$BENCH_REBUILD_MB
	if target up; then job rebuild; fi
	target down || bench_log "$1: teardown failed"
	BENCH_CAP_MB=$cap
	CURRENT=
}

# Removes what this run made and nothing else: its target's setup, then
# whatever is still mounted under the run, its loop devices and pools, the
# zfs-fuse daemon if this run started it, and the run's folders.
cleanup() {
	local m dev p
	set +e
	trap - EXIT
	trap '' INT TERM PIPE	# a second Ctrl-C, or a closed pipe, must not cut it short
	[ -z "$JOB_PID" ] || { kill -- -"$JOB_PID"; wait "$JOB_PID"; } 2>/dev/null
	[ -z "$CURRENT" ] || { enter "$CURRENT"; target down >/dev/null 2>&1; }
	for m in $(awk -v r="$BENCH_RUN" -v s="$BENCH_STORE" \
		'index($2, r) == 1 && $2 != s { print $2 }' /proc/mounts | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m"
	done
	for p in $(zpool list -H -o name 2>/dev/null | grep "^rfsbench$(basename "$BENCH_RUN" | tr -dc 'a-zA-Z0-9')"); do
		zpool destroy -f "$p"
	done
	for dev in $(losetup -n -l -O NAME,BACK-FILE 2>/dev/null | awk -v s="$BENCH_STORE" 'index($2, s) == 1 { print $1 }'); do
		losetup -d "$dev"
	done
	for p in $(cat "$BENCH_RUN"/t/*/pids 2>/dev/null); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = zfs-fuse ] || kill "$p" 2>/dev/null
	done
	[ -s "$BENCH_RUN/zfs-fuse.pid" ] && kill "$(cat "$BENCH_RUN/zfs-fuse.pid")" 2>/dev/null
	if [ -n "$DISK_PID" ]; then
		umount "$BENCH_STORE" 2>/dev/null || umount -l "$BENCH_STORE"
		wait "$DISK_PID"
		rm -rf "$BENCH_STORE.disks"
	fi
	rm -rf "$BENCH_STORE" "$BENCH_RUN"
}
trap cleanup EXIT
trap 'trap "" PIPE; bench_log interrupted; exit 130' INT TERM

# The store as disks of BENCH_DISK_MIBPS each, over the files of
# BENCH_STORE.disks; what dd reads from one of them is the reference.
if [ -n "${BENCH_DISK_MIBPS:-}" ]; then
	faultfs=${BENCH_FAULTFS:-$BENCH_TOP/build/tools/faultfs}
	[ -x "$faultfs" ] || { echo "bench: no $faultfs (make build/tools/faultfs)" >&2; exit 2; }
	mkdir "$BENCH_STORE.disks"
	"$faultfs" -f -r "$BENCH_DISK_MIBPS" "$BENCH_STORE.disks" "$BENCH_STORE" \
		2>>"$BENCH_RUN/disks.log" &
	DISK_PID=$!
	for _ in $(seq 100); do mountpoint -q "$BENCH_STORE" && break; sleep 0.05; done
	mountpoint -q "$BENCH_STORE" || { echo "bench: faultfs did not mount" >&2; exit 1; }
	head -c 1G /dev/zero >"$BENCH_STORE.disks/probe.img"
	t0=$(date +%s%N)
	dd if="$BENCH_STORE/probe.img" of=/dev/null bs=1M status=none
	t1=$(date +%s%N)
	rm -f "$BENCH_STORE.disks/probe.img"
	disk_read=$(( 1024 * 1000000000 / (t1 - t0) ))
	bench_log "members on disks of $BENCH_DISK_MIBPS MiB/s: dd reads one at $disk_read MiB/s"
	STORE_SAID="$STORE_SAID as disks of $BENCH_DISK_MIBPS MiB/s each (faultfs -r; dd bs=1M reads one member at $disk_read MiB/s, the reference for the rebuild and scrub rates)"
fi

avail=
for t in $TARGETS; do
	enter "$t"
	if reason=$(target check 2>&1); then avail="$avail $t"
	else
		bench_log "$t skipped: ${reason#*skip: }"
		echo "$t	${reason##*skip: }" >>"$BENCH_RUN/skipped"
	fi
done
bench_log "targets:$avail; $ROUNDS round(s); members in $BENCH_STORE"
START=$(date -u '+%Y-%m-%d %H:%M UTC')
grep '^cpu ' /proc/stat >"$BENCH_RUN/cpustat"	# steal over the run: the report
for BENCH_ROUND in $(seq "$ROUNDS"); do
	export BENCH_ROUND
	order=$avail
	[ $((BENCH_ROUND % 2)) = 1 ] || order=$(printf '%s\n' $avail | tac)
	for t in $order; do round_target "$t"; done
done
grep '^cpu ' /proc/stat >>"$BENCH_RUN/cpustat"
python3 "$BENCH_SUITE/report.py" --results "$BENCH_RESULTS" --run "$BENCH_RUN" --out "$OUT" \
	--start "$START" --rounds "$ROUNDS" --store "$STORE_SAID" \
	--note "${BENCH_NOTE:-}"
cp "$BENCH_RESULTS" "${OUT%.md}.tsv"
bench_log "report: $OUT"
