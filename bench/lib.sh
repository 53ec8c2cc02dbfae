# bench/lib.sh: what every script of the benchmark suite shares (sourced).
#
# The suite's layers, each a small script (docs/BENCHMARKS.md, "How"):
#   run.sh            rounds x targets x jobs, one temp dir, cleanup on exit
#   targets/KIND.sh   VERB NAME: check | up | down | degrade | scrub | rebuild
#   jobs/NAME.sh      one workload on the mounted target; records results
#   report.sh         results.tsv -> docs/BENCHMARKS.md and the PNG plots
#
# Environment every target and job sees (set by run.sh):
#   BENCH_TOP      the repository        BENCH_BIN   raidfs's build/ folder
#   BENCH_RUN      this run's temp dir   BENCH_STORE where members live
#   BENCH_TGT      this target's state dir (pids: the daemons to charge CPU to)
#   BENCH_MNT      where the target is mounted
#   BENCH_TARGET   its name (raidfs-5, btrfs-raid6, ...), BENCH_ROUND
#   BENCH_RESULTS  the results table: round target job metric value unit
# Sizes: BENCH_SIZE_MB, BENCH_RUNTIME, BENCH_FILES, BENCH_FSX_OPS,
# BENCH_DBENCH_S, BENCH_BONNIE_MB, BENCH_SEEK_MB, BENCH_SEEKS, BENCH_CACHE_MB.

bench_log() { printf '%s bench: %s\n' "$(date +%T)" "$*" >&2; }

# A peer or a job that cannot run here says why and is skipped: exit 77.
bench_skip() { bench_log "skip: $*"; exit 77; }

bench_result() {	# JOB METRIC VALUE UNIT
	[ -n "$3" ] || return 0
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$BENCH_ROUND" "$BENCH_TARGET" "$1" "$2" "$3" "$4" \
		>>"$BENCH_RESULTS"
}

bench_drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
}

# CPU charged to a target outside the measured command: its daemons
# (BENCH_TGT/pids) and the kernel's threads (children of kthreadd, where
# btrfs, the loop devices and writeback do their work).  A snapshot is
# "pid ticks" per thread; the charge is the growth of those in both
# snapshots (kernel threads come and go; one that ends between the two
# takes its share with it).  Kernel threads serve the whole machine:
# another job running on it adds to every target alike.
bench_cpu_snapshot() {	# FILE
	local pids=
	[ -s "$BENCH_TGT/pids" ] && pids=$(tr '\n' ' ' <"$BENCH_TGT/pids")
	awk -v pids=" $pids " '
		FNR == 1 {
			s = $0; sub(/^.*\) /, "", s); split(s, f, " ")
			# after the name: f[2] ppid, f[12] utime, f[13] stime
			pid = FILENAME; sub("/proc/", "", pid); sub("/stat", "", pid)
			if (f[2] == 2 || pid == 2 || index(pids, " " pid " "))
				print pid, f[12] + f[13]
		}' /proc/[0-9]*/stat 2>/dev/null >"$1"
}

bench_cpu_growth() {	# BEFORE AFTER -> CPU seconds
	awk -v hz="$(getconf CLK_TCK)" '
		NR == FNR { a[$1] = $2; next }
		($1 in a) && $2 > a[$1] { t += $2 - a[$1] }
		END { printf "%.3f\n", t / hz }' "$1" "$2"
}

# bench_measure CMD...: runs CMD; sets MEAS_WALL (s) and MEAS_CPU (CPU s of
# CMD and its children, plus the growth of the target's daemons' and the
# kernel threads').  Returns CMD's
# status; CMD's output goes to $BENCH_TGT/out, its errors to .../err.
bench_measure() {
	local c t0 t1 rc=0 t="$BENCH_TGT/time"
	bench_cpu_snapshot "$BENCH_TGT/cpu0"
	t0=$(date +%s.%N)
	/usr/bin/time -f '%U %S' -o "$t" "$@" >"$BENCH_TGT/out" 2>"$BENCH_TGT/err" || rc=$?
	t1=$(date +%s.%N)
	bench_cpu_snapshot "$BENCH_TGT/cpu1"
	c=$(bench_cpu_growth "$BENCH_TGT/cpu0" "$BENCH_TGT/cpu1")
	MEAS_WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	MEAS_CPU=$(tail -1 "$t" | awk -v c="$c" '{ printf "%.3f", $1 + $2 + c }')
	[ "$rc" -eq 0 ] || { bench_log "$BENCH_TARGET: failed ($rc): $*"; tail -5 "$BENCH_TGT/err" >&2; }
	return "$rc"
}

bench_calc() { awk "BEGIN { printf \"%.${2:-1}f\", $1 }"; }

# Waits until DIR is a mount point (or PID, when given, has died).
bench_wait_mount() {	# DIR [PID]
	local _
	for _ in $(seq 200); do
		mountpoint -q "$1" && return 0
		[ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null && return 1
		sleep 0.1
	done
	return 1
}

# Unmounts DIR if mounted, retrying while it is busy.
bench_umount() {
	local _
	for _ in $(seq 50); do
		mountpoint -q "$1" || return 0
		umount "$1" 2>/dev/null && return 0
		sleep 0.2
	done
	umount -l "$1"
}

# Waits for PID (a daemon this suite started) to exit after its unmount.
bench_wait_exit() {
	local _
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill "$1" 2>/dev/null || true
}

# Sparse member image files NAME0..NAME(N-1) of MB MiB in BENCH_STORE.
bench_images() {	# PREFIX N MB -> prints the paths
	local i f
	for i in $(seq 0 $(($2 - 1))); do
		f="$BENCH_STORE/$1$i.img"
		rm -f "$f" && truncate -s "$3M" "$f" && echo "$f"
	done
}
