# Shared helpers for the integration tests (sourced, bash).
#
# Every test calls t_setup first: it makes a private directory $T (mktemp),
# and an EXIT trap that unmounts whatever the test mounted, kills only the
# daemons the test started, detaches only the loop devices it attached,
# and removes $T.  Member images are sparse files in $T.
#
#   t_setup                     -> exit 77 (skipped) without root or /dev/fuse
#   t_images 4 1G               -> $T/m0.img .. $T/m3.img, $IMGS "a:b:c:d"
#   t_mkfs 5 64K $T/m*.img      -> an array with an empty filesystem
#   t_mount "$IMGS" $T/mnt [-o opts]   (foreground daemon, PID recorded)
#   t_umount $T/mnt             -> waits for the daemon; fails unless it
#                                  exited 0 (flushed, array clean)
#
# Exit status of a test: 0 passed, 77 skipped (t_skip: the machine lacks
# what it needs; the automake/libfuse convention), anything else failed.
# Every umount goes through t_umount_idle, which waits while the mount is
# busy (a process still leaving it, under load) instead of failing.

set -eu

RAIDFS_BIN=${RAIDFS_BIN:-build/asan}
case $RAIDFS_BIN in /*) ;; *) RAIDFS_BIN=$(cd "$RAIDFS_BIN" && pwd) ;; esac
RAIDFS=$RAIDFS_BIN/raidfs
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The system python: tests also run it as an unprivileged user, who cannot
# reach a per-user interpreter (pyenv and the like).
PY=${RAIDFS_TEST_PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=python3
# ASan: leaks found at exit make the daemon exit non-zero, which t_umount sees.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}

T=
T_PIDS=()          # daemons this test started
T_MOUNTS=()        # mount points this test mounted
T_LOOPS=()         # loop devices this test attached
T_IMMUTABLE=()     # files this test made immutable (chattr +i)
T_RM_AT_EXIT=()    # files outside $T this test created (a helper link)
declare -A T_PID_OF=()   # mount point -> daemon pid

t_log() { echo "  $*"; }
t_fail() { echo "  FAIL: $*" >&2; exit 1; }
# t_skip REASON: run.sh prints "SKIP name (REASON)".
t_skip() { echo "  SKIP: $*"; exit 77; }

# t_need_root: FUSE mounts, loop devices, setpriv and mkfs of other
# filesystems all need root; without it the test is skipped.
t_need_root() {
	[ "$(id -u)" -eq 0 ] || t_skip "needs root (FUSE mounts, loop devices, setpriv)"
}

# t_tmp [NAME]: $T and the cleanup trap, and nothing else (for tests that
# need neither root nor FUSE).  $T is made in $RAIDFS_TEST_TMP (run.sh gives
# each test its own, to find what it left behind), else in /tmp.
t_tmp() {
	T=$(mktemp -d "${RAIDFS_TEST_TMP:-/tmp}/raidfs-${1:-it}.XXXXXX")
	trap t_cleanup EXIT
	trap 'exit 143' TERM INT HUP
}

t_setup() {
	[ -x "$RAIDFS" ] || t_fail "no $RAIDFS (build it first)"
	t_need_root
	[ -c /dev/fuse ] || t_skip "no /dev/fuse"
	t_tmp it
}

# t_helper_link: mount(8) looks for helpers only in /sbin (and /sbin/fs.d,
# /sbin/fs), with no way to point it elsewhere, so a test that mounts
# through mount(8) links /sbin/mount.raidfs to the build under test - only
# when no mount.raidfs is there or the one there is that link already -
# and removes its link at the end.  A lock (fd 9) serializes such tests.
t_helper_link() {
	local helper ours=$RAIDFS_BIN/mount.raidfs
	[ -x "$ours" ] || t_fail "no $ours"
	exec 9>/run/lock/raidfs-test-mount-helper.lock
	flock -w 600 9 || t_fail "cannot lock the helper link"
	# mount.fuse.raidfs: the helper for the type the mount table shows,
	# which a remount (mount -o remount,ro DIR) runs
	for helper in /sbin/mount.raidfs /sbin/mount.fuse.raidfs; do
		if [ -L "$helper" ] && [ "$(readlink "$helper")" = "$ours" ]; then
			:
		elif [ -e "$helper" ] || [ -L "$helper" ]; then
			t_fail "$helper exists and is not a link to $ours: not replacing it"
		else
			ln -s "$ours" "$helper"
			T_RM_AT_EXIT+=("$helper")
		fi
	done
}

# findmnt reads the mount table with libmount, which undoes the kernel's
# escapes (a blank in a mount point is \040 in /proc/self/mountinfo).
t_is_mounted() {
	findmnt -M "$1" >/dev/null 2>&1
}

# t_umount_idle [umount args...] DIR: umount, retried for up to
# RAIDFS_UMOUNT_WAIT seconds (60) while the target is busy.
t_umount_idle() {
	"$TESTS_DIR/umount_idle.sh" "$@"
}

t_pid_alive() {
	# a zombie has exited; its parent just has not reaped it
	[ -e "/proc/$1/stat" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

t_cleanup() {
	local rc=$? m p l
	set +e
	# daemons started by helper programs (model.py) are listed in $T/pids
	[ -n "$T" ] && [ -f "$T/pids" ] && T_PIDS+=($(cat "$T/pids"))
	# and the loop devices they attached (faults.py --loop), first: they
	# hold files on the mounts below
	if [ -n "$T" ] && [ -f "$T/loops" ]; then
		for l in $(cat "$T/loops"); do losetup -d "$l" 2>/dev/null; done
	fi
	for m in "${T_MOUNTS[@]}"; do
		t_is_mounted "$m" && { RAIDFS_UMOUNT_WAIT=10 t_umount_idle "$m" 2>/dev/null \
			|| umount -l "$m" 2>/dev/null || fusermount3 -u -z "$m" 2>/dev/null; }
	done
	for p in "${T_PIDS[@]}"; do
		local i
		for i in $(seq 50); do t_pid_alive "$p" || break; sleep 0.1; done
		t_pid_alive "$p" && kill -9 "$p" 2>/dev/null
	done
	for l in "${T_LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
	for l in "${T_IMMUTABLE[@]}"; do chattr -i "$l" 2>/dev/null; done
	for l in "${T_RM_AT_EXIT[@]}"; do rm -rf "$l"; done
	if [ $rc -ne 0 ] && [ -n "$T" ] && [ -s "$T/daemon.log" ]; then
		echo "  --- daemon log (last 30 lines) ---" >&2
		tail -n 30 "$T/daemon.log" >&2
	fi
	[ -n "$T" ] && rm -rf "$T"
	exit $rc
}

# t_images COUNT SIZE [PREFIX]: sparse member images; sets IMGS and IMG_LIST.
t_images() {
	local n=$1 size=$2 prefix=${3:-m} i
	IMGS=
	IMG_LIST=()
	for i in $(seq 0 $((n - 1))); do
		truncate -s "$size" "$T/$prefix$i.img"
		IMG_LIST+=("$T/$prefix$i.img")
	done
	IMGS=$(IFS=:; echo "${IMG_LIST[*]}")
}

# t_mkfs LEVEL CHUNK MEMBER...: mkfs.raidfs -f (the images are new).
t_mkfs() {
	local level=$1 chunk=$2
	shift 2
	"$RAIDFS_BIN/mkfs.raidfs" -q -f -l "$level" -c "$chunk" "$@" >>"$T/mkfs.log" 2>&1 \
		|| { cat "$T/mkfs.log" >&2; t_fail "mkfs.raidfs -l $level failed"; }
}

# t_wait_mounted DIR PID: until DIR is a mount point that answers (or PID
# died).
t_wait_mounted() {
	local i
	for i in $(seq 200); do
		# mounted and answering: raidfs mounts before it opens the
		# filesystem, and the first request waits until it serves;
		# mounted still after the stat: a daemon whose filesystem
		# will not open unmounts, and a stat that comes after that
		# answers from the bare directory (t218 once took such a
		# refused mount for a mount, under load)
		t_is_mounted "$1" && timeout 60 stat -- "$1" >/dev/null 2>&1 &&
			t_is_mounted "$1" && return 0
		[ -n "${2:-}" ] && ! t_pid_alive "$2" && return 1
		sleep 0.05
	done
	return 1
}

# t_faultfs: faultfs (tests/tools/faultfs.c; FAULTFS: the binary) serving
# $T/back at $T/ff, unmounted at exit; skips the test when it is not built.
t_faultfs() {
	FAULTFS=${FAULTFS:-$(cd "$TESTS_DIR/../.." && pwd)/build/tools/faultfs}
	[ -x "$FAULTFS" ] || t_skip "no faultfs ($FAULTFS): make build/tools/faultfs"
	mkdir -p "$T/back" "$T/ff"
	"$FAULTFS" -f "$T/back" "$T/ff" 2>"$T/faultfs.log" &
	T_PIDS+=($!)
	T_MOUNTS+=("$T/ff")
	t_wait_mounted "$T/ff" $! || { cat "$T/faultfs.log"; t_fail "faultfs did not mount"; }
}

# t_try_mount SOURCE DIR [raidfs options...]: a foreground daemon in the
# background, so the test knows its PID; its stderr goes to $T/daemon.log.
# Returns the daemon's exit status when it does not mount.
t_try_mount() {
	local src=$1 dir=$2 pid rc p parts extra=()
	shift 2
	mkdir -p "$dir"
	# A member named in SOURCE that is not there is how the tests make an
	# array degraded, which raidfs takes for a typo unless degraded=allow
	# says otherwise: given here, first (a degraded= of the caller's comes
	# later and wins), unless the test checks that refusal (T_TYPO_CHECK).
	if [ -z "${T_TYPO_CHECK:-}" ]; then
		IFS=: read -r -a parts <<<"$src"
		for p in "${parts[@]}"; do
			case $p in /*) [ -e "$p" ] || extra=(-o degraded=allow) ;; esac
		done
	fi
	"$RAIDFS" -f "${extra[@]}" "$@" "$src" "$dir" >>"$T/daemon.log" 2>&1 &
	pid=$!
	T_PIDS+=("$pid")
	T_MOUNTS+=("$dir")
	T_PID_OF[$dir]=$pid
	t_wait_mounted "$dir" "$pid" && return 0
	rc=0
	wait "$pid" || rc=$?
	return $rc
}

# t_mount: as t_try_mount, but the test fails when it does not mount.
t_mount() {
	local rc=0
	t_try_mount "$@" || rc=$?
	[ $rc -eq 0 ] || t_fail "raidfs did not mount $2 (exit $rc)"
}

# t_umount DIR: unmounts and waits for the daemon to flush and exit 0.
t_umount() {
	local dir=$1 pid=${T_PID_OF[$1]:-} rc=0
	t_umount_idle "$dir" || t_fail "umount $dir"
	[ -n "$pid" ] || return 0
	wait "$pid" || rc=$?
	[ $rc -eq 0 ] || t_fail "daemon for $dir exited $rc after umount"
	unset "T_PID_OF[$dir]"
}

# t_crash_daemon DIR [PID...]: kill -9 of the daemon serving DIR (a crash),
# then waits for the PIDs given (writers, which fail once the mount is
# dead: the dead mount stays until they stopped, or what they wrote to the
# bare mount point would look lost) and unmounts it.
t_crash_daemon() {
	local dir=$1 pid=${T_PID_OF[$1]}
	shift
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
	RAIDFS_UMOUNT_WAIT=10 t_umount_idle "$dir" 2>/dev/null || umount -l "$dir"
	unset "T_PID_OF[$dir]"
}

# t_daemon_pid DIR: the live raidfs serving DIR (started by mount(8), so
# not our child; run by mount(8) it is named mount.raidfs).  DIR is inside
# $T, so no other mount can match.
t_daemon_pid() {
	local p
	for p in $(pgrep -x 'raidfs|mount\.raidfs'); do
		t_pid_alive "$p" || continue
		tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | grep -qxF "$1" && { echo "$p"; return 0; }
	done
	return 1
}

# t_wait_gone PID: until a process that is not our child has exited.
t_wait_gone() {
	local i
	for i in $(seq 600); do t_pid_alive "$1" || return 0; sleep 0.05; done
	return 1
}

# t_tree_sum DIR: one line per file: path, type, size, mode, content hash.
t_tree_sum() {
	(cd "$1" && find . -mindepth 1 \( -name lost+found -prune \) -o -printf '%p %y %s %m\n' | sort) >"$T/.tree.$$"
	(cd "$1" && find . -mindepth 1 -type f -print0 | sort -z | xargs -0 -r sha256sum) >>"$T/.tree.$$"
	cat "$T/.tree.$$"
	rm -f "$T/.tree.$$"
}

t_expect_fail() {
	if "$@" 2>/dev/null; then t_fail "expected failure: $*"; fi
}

# ---- mkfs tests: no FUSE needed ------------------------------------------
MKFS=$RAIDFS_BIN/mkfs.raidfs

# m_setup: as t_setup, for tests that run mkfs.raidfs (on loop devices
# and other filesystems' tools, so root) and mount only when they can.
m_setup() {
	[ -x "$MKFS" ] || t_fail "no $MKFS (build it first)"
	t_need_root
	t_tmp mkfs
}

m_can_mount() { [ -x "$RAIDFS" ] && [ -c /dev/fuse ]; }

# m_sums: content checksums of every image in $T (xxh128 when xxhsum is
# there: the images are large and mostly holes, and sha256 would dominate).
m_sums() {
	if command -v xxhsum >/dev/null; then (cd "$T" && xxhsum -H2 -- *.img 2>/dev/null)
	else (cd "$T" && sha256sum -- *.img); fi
}

# ---- fault tests (t4NN) ---------------------------------------------------

# t_tool NAME: the path of a test tool (tests/tools/NAME.c, built into
# build/tools/ or $RAIDFS_TOOLS); the test fails when it is not built.
t_tool() {
	local p=${RAIDFS_TOOLS:-$(cd "$TESTS_DIR/../.." && pwd)/build/tools}/$1
	[ -x "$p" ] || t_fail "no $p (make build/tools/$1)"
	echo "$p"
}

# t_known_faults: named checks (k_check, k_result, k_done of
# tests/tools/known.sh) whose known failures are the entries of
# tests/integration/KNOWN_FAULTS ("name reason", # comments).  Entries with
# wildcards are the fault matrix's (faults.py); here a name must match
# exactly.
t_known_faults() {
	local line
	. "$TESTS_DIR/../tools/known.sh"
	KNOWN_FAILURES=()
	[ -f "$TESTS_DIR/KNOWN_FAULTS" ] || return 0
	while IFS= read -r line; do
		case $line in ''|'#'*) continue ;; esac
		KNOWN_FAILURES+=("$line")
	done <"$TESTS_DIR/KNOWN_FAULTS"
}

# t_sums FILE...: one content checksum per file (xxh128 when xxhsum is
# there: member images are large and mostly holes).
t_sums() {
	if command -v xxhsum >/dev/null; then xxhsum -H2 -- "$@" 2>/dev/null
	else sha256sum -- "$@"; fi
}

# t_wait_bg CMD...: runs CMD (a driver such as faults.py, which starts and
# stops mounts of its own) in the background and waits for it, so that a
# TERM from the runner's timeout is handled at once, not after CMD ends:
# CMD gets the TERM and undoes its own mounts before the test's cleanup
# runs (else it could start a mount after the cleanup).  Returns CMD's
# status.
t_wait_bg() {
	local pid rc
	"$@" &
	pid=$!
	T_PIDS+=("$pid")
	trap "kill -TERM $pid 2>/dev/null; wait $pid; exit 143" TERM INT HUP
	wait "$pid"
	rc=$?
	trap 'exit 143' TERM INT HUP
	return $rc
}

# ---- file patterns on members ----------------------------------------------
# t_pattern_files DIR BLOCKS...: DIR/file0, file1, ... of BLOCKS[i] 4 KiB
# blocks each; block k of file n starts with "F%03dB%06d" (n, k), which is
# what fsck_locate.py finds on the member images.
t_pattern_files() {
	"$PY" - "$@" <<'PY'
import os, sys
d = sys.argv[1]
for n, blocks in enumerate(int(b) for b in sys.argv[2:]):
    with open(os.path.join(d, "file%d" % n), "wb") as f:
        for k in range(blocks):
            f.write((b"F%03dB%06d" % (n, k)).ljust(4096, b"."))
PY
}

# t_locate_block N K IMAGE...: prints "IMAGE OFFSET" of file N's block K.
t_locate_block() {
	local n=$1 k=$2
	shift 2
	"$PY" "$TESTS_DIR/fsck_locate.py" "data:$n" "$@" | "$PY" -c '
import sys
want = (b"F%03dB%06d" % (int(sys.argv[1]), int(sys.argv[2])))
for line in sys.stdin:
    p, o = line.split()
    with open(p, "rb") as f:
        f.seek(int(o)); b = f.read(len(want))
    if b == want:
        print(p, o); break' "$n" "$k"
}

# t_as_nobody CMD...: CMD as uid and gid 65534, without supplementary groups
t_as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# t_tmpfs_ref NAME: sets REF to a new directory in tmpfs, removed at exit,
# where a test runs its cases again to compare raidfs with (the reference)
t_tmpfs_ref() {
	REF=$(mktemp -d "/dev/shm/raidfs-$1.XXXXXX")
	T_RM_AT_EXIT+=("$REF")
}
