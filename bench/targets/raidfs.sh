#!/usr/bin/env bash
# targets/raidfs.sh VERB LEVEL: raidfs at RAID LEVEL (0, 1, 5, 6, 10) on
# image files in BENCH_STORE, mounted by the release daemon in the
# foreground (its PID in BENCH_TGT/pids, so its CPU is charged): the build
# in BENCH_RAIDFS_BIN (run.sh: BENCH_BIN, or BENCH_REF_BIN for raidfsref-*).
#
#   check    exits 77 when the build is missing
#   scrubs   exits 0: this target has scrub and rebuild (below)
#   up       mkfs + mount;  down  unmount, remove the images
#   degrade  remount with member 1 gone (levels with redundancy)
#   scrub    offline full check and repair (fsck.raidfs -y -f); prints
#            "WALL CPU MEMBER_MB MEMBERS"
#   rebuild  member 1 replaced by a blank image and rebuilt offline
#            (fsck.raidfs -y --rebuild); prints the same
# Scrub and rebuild are offline today: the array is unmounted around them.
# An online scrub or rebuild (the daemon's control socket) replaces the
# body of raidfs_scrub / raidfs_rebuild; the jobs need not change.
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
	local imgs
	imgs=$(bench_images "$IMG" "$N" "$MB")
	# shellcheck disable=SC2086
	"$BIN/mkfs.raidfs" -q -f -l "$LEVEL" $imgs
	echo "$imgs" | paste -sd: >"$SOURCE_FILE"
	raidfs_mount
}

raidfs_down() {
	raidfs_unmount
	rm -f "$BENCH_STORE/$IMG"*.img "$BENCH_STORE/$IMG"*.failed
}

raidfs_degrade() {
	[ "$LEVEL" != 0 ] || bench_skip "RAID 0 has no redundancy"
	raidfs_unmount
	mv "$BENCH_STORE/${IMG}1.img" "$BENCH_STORE/${IMG}1.failed"
	raidfs_mount
	grep -q DEGRADED "$BENCH_TGT/log" || bench_log "$BENCH_TARGET: no DEGRADED in the log"
}

# fsck.raidfs VERB...: exit 1 ("errors corrected") is what a rebuild says.
raidfs_fsck() {
	bench_measure sh -c '"$0" "$@" || [ $? -le 1 ]' "$BIN/fsck.raidfs" "$@"
}

raidfs_scrub() {
	raidfs_unmount
	raidfs_fsck -y -f "$(cat "$SOURCE_FILE")" || return 1
	echo "$MEAS_WALL $MEAS_CPU $MB $N"
	raidfs_mount
}

raidfs_rebuild() {
	local img="$BENCH_STORE/${IMG}1.img"
	[ "$LEVEL" != 0 ] || bench_skip "RAID 0 has no redundancy"
	raidfs_unmount
	rm -f "$img" && truncate -s "${MB}M" "$img"
	raidfs_fsck -y -f --rebuild "$img" "$(cat "$SOURCE_FILE")" || return 1
	echo "$MEAS_WALL $MEAS_CPU $MB 1"
	raidfs_mount
}

case $VERB in
scrubs) ;;
check) [ -x "$BIN/raidfs" ] || bench_skip "no ${BIN:-BENCH_REF_BIN}/raidfs (make; raidfsref-* needs BENCH_REF_BIN)" ;;
up) raidfs_up ;;
down) raidfs_down ;;
degrade) raidfs_degrade ;;
scrub) raidfs_scrub ;;
rebuild) raidfs_rebuild ;;
*) echo "raidfs.sh: unknown verb $VERB" >&2; exit 2 ;;
esac
