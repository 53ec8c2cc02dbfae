#!/usr/bin/env bash
# targets/zfs.sh VERB LAYOUT: zfs-fuse (Debian's; ZFS in userspace through
# FUSE, like raidfs) with one raidz1 (5 files) or raidz2 (6 files) vdev of
# image files in BENCH_STORE.  The daemon is started if none runs (and
# then stopped by run.sh at the end: BENCH_RUN/zfs-fuse.pid); its CPU is
# charged to the target.  Pools are named after the run, and only those
# are destroyed.
#   degrade  zpool offline of member 1
#   scrub    zpool scrub, waited for (online)
#   rebuild  zpool replace of member 1 by a blank file: the resilver
set -eu
. "$(dirname "$0")/../lib.sh"
VERB=$1 LAYOUT=$2
case $LAYOUT in
raidz1) N=5 D=4 ;; raidz2) N=6 D=4 ;;
*) echo "zfs.sh: no layout $LAYOUT" >&2; exit 2 ;;
esac
MB=$(( BENCH_CAP_MB * 120 / 100 / D + 128 ))
POOL=rfsbench$(basename "$BENCH_RUN" | tr -dc 'a-zA-Z0-9')$LAYOUT
PFX=zfs-$LAYOUT-m

zfs_daemon() {	# the running daemon's PID, started if need be
	local _
	if ! pidof -s zfs-fuse >/dev/null; then
		zfs-fuse -p "$BENCH_RUN/zfs-fuse.pid" </dev/null >/dev/null 2>&1 || return 1
		for _ in $(seq 50); do zpool list >/dev/null 2>&1 && break; sleep 0.1; done
	fi
	pidof -s zfs-fuse
}

# Runs CMD, then waits while zpool status says "WHAT in progress".
zfs_timed() {	# WHAT CMD...
	local what=$1
	shift
	bench_measure sh -c 'p=$1 w=$2; shift 2
		"$@" && while zpool status "$p" | grep -q "$w in progress"; do sleep 0.2; done' \
		zfs_timed "$POOL" "$what" "$@"
}

case $VERB in
scrubs) ;;
check)
	command -v zfs-fuse >/dev/null && command -v zpool >/dev/null ||
		bench_skip "zfs-fuse not installed (make bench-deps)"
	[ -e /dev/fuse ] || bench_skip "no /dev/fuse" ;;
up)
	zfs_daemon >"$BENCH_TGT/pids" || bench_skip "the zfs-fuse daemon does not start"
	# shellcheck disable=SC2046
	zpool create -f -m "$BENCH_MNT" "$POOL" "$LAYOUT" $(bench_images "$PFX" "$N" "$MB")
	bench_wait_mount "$BENCH_MNT" ;;
down)	# zfs-fuse answers "pool is busy" for a while after the last close
	for _ in $(seq 20); do
		zpool list "$POOL" >/dev/null 2>&1 || break
		zpool destroy -f "$POOL" 2>/dev/null && break
		sleep 0.5
	done
	if zpool list "$POOL" >/dev/null 2>&1; then
		zfs umount -f "$POOL" || true
		zpool destroy -f "$POOL"
	fi
	bench_umount "$BENCH_MNT"
	rm -f "$BENCH_STORE/$PFX"*.img "$BENCH_TGT/m1" ;;
degrade)
	zpool offline "$POOL" "$BENCH_STORE/${PFX}1.img" ;;
scrub)
	zfs_timed scrub zpool scrub "$POOL" || exit 1
	echo "$MEAS_WALL $MEAS_CPU $MB $N" ;;
rebuild)	# member 1's current file (BENCH_TGT/m1) replaced by a new one
	old=$(cat "$BENCH_TGT/m1" 2>/dev/null || echo "$BENCH_STORE/${PFX}1.img")
	new=$BENCH_STORE/${PFX}r$(date +%s%N).img
	truncate -s "${MB}M" "$new"
	zfs_timed resilver zpool replace -f "$POOL" "$old" "$new" || exit 1
	echo "$new" >"$BENCH_TGT/m1"
	echo "$MEAS_WALL $MEAS_CPU $MB 1" ;;
*) echo "zfs.sh: unknown verb $VERB" >&2; exit 2 ;;
esac
