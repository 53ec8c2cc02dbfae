#!/usr/bin/env bash
# targets/btrfs.sh VERB PROFILE: btrfs (the kernel's) with data and
# metadata in PROFILE (raid5: 5 devices, raid6: 6) on loop devices over
# image files in BENCH_STORE.  The loop devices this script attached are
# listed in BENCH_TGT/loops, and only those are ever detached.
#   degrade  remount -o degraded without member 1's loop device
#   scrub    btrfs scrub start -B (online)
#   rebuild  btrfs replace -r of devid 2 onto a new blank loop device: the
#            new device is written from the others (online)
set -eu
. "$(dirname "$0")/../lib.sh"
VERB=$1 PROFILE=$2
case $PROFILE in
raid5) N=5 D=4 ;; raid6) N=6 D=4 ;;
*) echo "btrfs.sh: no profile $PROFILE" >&2; exit 2 ;;
esac
MB=$(( BENCH_CAP_MB * 115 / 100 / D + 256 ))
LOOPS=$BENCH_TGT/loops
PFX=btrfs-$PROFILE-m

btrfs_check() {
	command -v mkfs.btrfs >/dev/null && command -v btrfs >/dev/null ||
		bench_skip "btrfs-progs not installed (make bench-deps)"
	grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null ||
		bench_skip "no btrfs in this kernel (module missing)"
	losetup -f >/dev/null 2>&1 || bench_skip "no free loop device"
}

btrfs_attach() {	# IMAGE -> the loop device, recorded in LOOPS
	local dev
	dev=$(losetup -f --show "$1")
	echo "$dev" >>"$LOOPS"
	echo "$dev"
}

# Only our own devices are forgotten: a bare --forget would drop every
# unmounted btrfs device the kernel knows, other jobs' on this machine too.
btrfs_detach() {	# DEV: forget it, detach it and drop it from LOOPS
	btrfs device scan --forget "$1" >/dev/null 2>&1 || true
	losetup -d "$1" 2>/dev/null || true
	sed -i "\\#^$1\$#d" "$LOOPS"
}

btrfs_mount() {	# [OPTIONS]: mounts the devices in LOOPS
	local opts=device=$(paste -sd, "$LOOPS" | sed 's/,/,device=/g')
	mount -t btrfs -o "$opts${1:+,$1}" "$(head -1 "$LOOPS")" "$BENCH_MNT"
}

btrfs_up() {
	local img devs=
	: >"$LOOPS"
	for img in $(bench_images "$PFX" "$N" "$MB"); do devs="$devs $(btrfs_attach "$img")"; done
	# shellcheck disable=SC2086
	mkfs.btrfs -q -f -d "$PROFILE" -m "$PROFILE" $devs >/dev/null
	btrfs_mount
}

btrfs_down() {
	local dev
	bench_umount "$BENCH_MNT"
	for dev in $(cat "$LOOPS"); do btrfs_detach "$dev"; done
	rm -f "$BENCH_STORE/$PFX"*.img
}

btrfs_degrade() {
	bench_umount "$BENCH_MNT"
	btrfs_detach "$(sed -n 2p "$LOOPS")"
	btrfs_mount degraded
}

btrfs_scrub() {
	bench_measure btrfs scrub start -B "$BENCH_MNT" || return 1
	echo "$MEAS_WALL $MEAS_CPU $MB $N"
}

btrfs_rebuild() {	# each time onto a new image: the last one is a member now
	local img=$BENCH_STORE/${PFX}r$(date +%s%N).img dev
	truncate -s "${MB}M" "$img"
	dev=$(btrfs_attach "$img")
	bench_measure btrfs replace start -B -r -f 2 "$dev" "$BENCH_MNT" || return 1
	echo "$MEAS_WALL $MEAS_CPU $MB 1"
}

case $VERB in
scrubs) ;;
check) btrfs_check ;;
up) btrfs_up ;;
down) btrfs_down ;;
degrade) btrfs_degrade ;;
scrub) btrfs_scrub ;;
rebuild) btrfs_rebuild ;;
*) echo "btrfs.sh: unknown verb $VERB" >&2; exit 2 ;;
esac
