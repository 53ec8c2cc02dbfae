#!/usr/bin/env bash
# targets/raidfs.sh VERB LEVEL: raidfs at RAID LEVEL (0, 1, 5, 6, 10) on
# image files in BENCH_STORE, mounted by the release daemon in the
# foreground (its PID in BENCH_TGT/pids, so its CPU is charged): the build
# in BENCH_RAIDFS_BIN (run.sh: BENCH_BIN, or BENCH_REF_BIN for raidfsref-*).
# As target raidfsloop-LEVEL the members are loop devices over those images
# (the block-device path: members opened O_DIRECT, as btrfs's targets use
# loop devices); the devices this script attached are listed in
# BENCH_TGT/loops, and only those are ever detached.
#
#   check    exits 77 when the build is missing
#   scrubs   exits 0: this target has scrub and rebuild (below)
#   up       mkfs + mount;  down  unmount, remove the images
#   degrade  remount with member 1 gone (levels with redundancy)
#   scrub    the online scrub (raidfsctl scrub start), waited for; prints
#            "WALL CPU MEMBER_MB MEMBERS"
#   rebuild  member 1 failed, removed and replaced by a blank image
#            (raidfsctl fail, remove, add), the online rebuild waited for;
#            prints the same
set -eu
. "$(dirname "$0")/../lib.sh"
VERB=$1 LEVEL=$2

case $LEVEL in	# members, of which hold data
0) N=4 D=4 ;; 1) N=2 D=1 ;; 5) N=5 D=4 ;; 6) N=6 D=4 ;; 10) N=4 D=2 ;;
*) echo "raidfs.sh: no level $LEVEL" >&2; exit 2 ;;
esac
MB=$(( BENCH_CAP_MB * 115 / 100 / D + 64 ))
SOURCE_FILE=$BENCH_TGT/source
BIN=${BENCH_RAIDFS_BIN-$BENCH_BIN}
IMG=$BENCH_TARGET-m     # member images: BENCH_STORE/IMG0.img ...
LOOPS=$BENCH_TGT/loops
case $BENCH_TARGET in raidfsloop-*) LOOP=1 ;; *) LOOP=0 ;; esac

# The member for image IMAGE: the image itself, or a loop device over it.
raidfs_member() {	# IMAGE
	local dev
	[ "$LOOP" = 1 ] || { echo "$1"; return; }
	dev=$(losetup -f --show "$1")
	echo "$dev" >>"$LOOPS"
	echo "$dev"
}

raidfs_detach() {	# DEV: detach one of our loop devices
	losetup -d "$1" 2>/dev/null || true
	sed -i "\\#^$1\$#d" "$LOOPS"
}

raidfs_mount() {
	local pid
	"$BIN/raidfs" -f "$(cat "$SOURCE_FILE")" "$BENCH_MNT" >/dev/null 2>>"$BENCH_TGT/log" &
	pid=$!
	echo "$pid" >"$BENCH_TGT/pids"
	bench_wait_mount "$BENCH_MNT" "$pid" || { tail -5 "$BENCH_TGT/log" >&2; return 1; }
}

raidfs_unmount() {
	local pid
	pid=$(cat "$BENCH_TGT/pids" 2>/dev/null || true)
	bench_umount "$BENCH_MNT"
	[ -z "$pid" ] || bench_wait_exit "$pid"
	: >"$BENCH_TGT/pids"
}

raidfs_up() {
	local img imgs=
	: >"$LOOPS"
	for img in $(bench_images "$IMG" "$N" "$MB"); do imgs="$imgs $(raidfs_member "$img")"; done
	# shellcheck disable=SC2086
	"$BIN/mkfs.raidfs" -q -f -l "$LEVEL" $imgs
	echo "${imgs# }" | tr ' ' : >"$SOURCE_FILE"
	raidfs_mount
}

raidfs_down() {
	local dev
	raidfs_unmount
	for dev in $(cat "$LOOPS" 2>/dev/null); do raidfs_detach "$dev"; done
	rm -f "$BENCH_STORE/$IMG"*.img "$BENCH_STORE/$IMG"*.failed
}

raidfs_degrade() {
	[ "$LEVEL" != 0 ] || bench_skip "RAID 0 has no redundancy"
	raidfs_unmount
	if [ "$LOOP" = 1 ]; then
		raidfs_detach "$(tr ':' '\n' <"$SOURCE_FILE" | sed -n 2p)"
	else
		mv "$BENCH_STORE/${IMG}1.img" "$BENCH_STORE/${IMG}1.failed"
	fi
	raidfs_mount
	grep -q DEGRADED "$BENCH_TGT/log" || bench_log "$BENCH_TARGET: no DEGRADED in the log"
}

# Waits until the mounted array's status says WHAT: "scrub" finished, or
# the array clean again after a "rebuild" (not merely no rebuild running:
# the one an add starts begins a moment after the add returns, the spare
# taken by the recovery thread); at most 10 minutes.  Polled every 20 ms
# (raidfsctl's --wait looks once a second).
raidfs_wait() {	# WHAT
	local i=0
	until case $1 in
		scrub) "$BIN/raidfsctl" status --json "$BENCH_MNT" | tr -d ' \n' |
			grep -qF '"scrub":{"state":"finished"' ;;
		rebuild) "$BIN/raidfsctl" status "$BENCH_MNT" | head -1 | grep -q ': clean$' ;;
		esac; do
		i=$((i + 1))
		[ "$i" -lt 30000 ] || { bench_log "$BENCH_TARGET: $1 not done after 10 minutes"; return 1; }
		sleep 0.02
	done
}

# Times CMD... and the wait for WHAT after it: MEAS_WALL, and MEAS_CPU the
# growth of the daemon's and the kernel threads' CPU (not the polling's).
raidfs_timed() {	# WHAT CMD...
	local what=$1 t0
	shift
	bench_cpu_snapshot "$BENCH_TGT/cpu0"
	t0=$(date +%s.%N)
	"$@" >/dev/null || return 1
	raidfs_wait "$what" || return 1
	MEAS_WALL=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
	bench_cpu_snapshot "$BENCH_TGT/cpu1"
	MEAS_CPU=$(bench_cpu_growth "$BENCH_TGT/cpu0" "$BENCH_TGT/cpu1")
}

# Online, as zfs's and btrfs's: the daemon's scrub (raidfsctl scrub).
raidfs_scrub() {
	raidfs_timed scrub "$BIN/raidfsctl" scrub start "$BENCH_MNT" || return 1
	echo "$MEAS_WALL $MEAS_CPU $MB $N"
}

# Member 1 failed and taken out, a blank image added in its place: the
# daemon rebuilds onto it while mounted, timed from the add to the end.
raidfs_rebuild() {
	local old new
	[ "$LEVEL" != 0 ] || bench_skip "RAID 0 has no redundancy"
	old=$(tr ':' '\n' <"$SOURCE_FILE" | sed -n 2p)
	new=$BENCH_STORE/${IMG}1r$(date +%s%N).img
	"$BIN/raidfsctl" fail "$BENCH_MNT" 1 >/dev/null || return 1
	"$BIN/raidfsctl" remove "$BENCH_MNT" 1 >/dev/null || return 1
	if [ "$LOOP" = 1 ]; then
		raidfs_detach "$old"
	else
		rm -f "$old"
	fi
	truncate -s "${MB}M" "$new"
	new=$(raidfs_member "$new")
	sed "s|$old|$new|" "$SOURCE_FILE" >"$SOURCE_FILE.new" && mv "$SOURCE_FILE.new" "$SOURCE_FILE"
	raidfs_timed rebuild "$BIN/raidfsctl" add "$BENCH_MNT" "$new" || return 1
	echo "$MEAS_WALL $MEAS_CPU $MB 1"
}

case $VERB in
scrubs) ;;
check)
	[ -x "$BIN/raidfs" ] || bench_skip "no ${BIN:-BENCH_REF_BIN}/raidfs (make; raidfsref-* needs BENCH_REF_BIN)"
	[ "$LOOP" = 0 ] || losetup -f >/dev/null 2>&1 || bench_skip "no free loop device" ;;
up) raidfs_up ;;
down) raidfs_down ;;
degrade) raidfs_degrade ;;
scrub) raidfs_scrub ;;
rebuild) raidfs_rebuild ;;
*) echo "raidfs.sh: unknown verb $VERB" >&2; exit 2 ;;
esac
