#!/bin/bash
# Blanks in paths, as the kernel's mount table and fstab write them (octal
# escapes, read and written by libmount): with members, a configuration
# file and the mount point all in directories whose names hold a blank,
# fsck.raidfs sees the array mounted (and names the mount point as it is),
# and the fstab line mkfs.raidfs prints is accepted by mount -T.
. "$(dirname "$0")/lib.sh"
t_setup
t_helper_link
FSCK=$RAIDFS_BIN/fsck.raidfs

D="$T/dir with blanks"
M="$T/mount point"
mkdir -p "$D" "$M"
t_images 3 64M "dir with blanks/m"
"$MKFS" -f -l 5 -C "$D/array one.conf" "${IMG_LIST[@]}" >"$T/mkfs.out" 2>&1 \
	|| t_fail "mkfs: $(cat "$T/mkfs.out")"

for src in "$IMGS" "$D/array one.conf"; do
	t_log "mounted on '$M' from '$src': fsck refuses, naming the mount point"
	t_mount "$src" "$M"
	echo data >"$M/f"
	rc=0; "$FSCK" -n "$src" >"$T/out" 2>&1 || rc=$?
	[ $rc -eq 8 ] || t_fail "fsck of the mounted array: exit $rc: $(cat "$T/out")"
	grep -qF "the array is mounted on $M: unmount it first" "$T/out" \
		|| t_fail "mount table not read (blank not unescaped?): $(cat "$T/out")"
	t_umount "$M"
done

# fstab_mount FSTAB-LINE SOURCE: the line with our mount point, mount -T,
# the data, the source the kernel shows, umount.
fstab_mount() {
	local pid
	echo "${1/\/mnt\/point/${M// /\\040}}" >"$T/fstab"
	t_log "  $(cat "$T/fstab")"
	mount -T "$T/fstab" "$M" 2>>"$T/daemon.log" || t_fail "mount -T: $(cat "$T/fstab")"
	t_is_mounted "$M" || t_fail "mount -T did not mount $M"
	pid=$(t_daemon_pid "$M") || t_fail "no daemon serving $M"
	T_PIDS+=("$pid")
	[ "$(cat "$M/f")" = data ] || t_fail "data through the fstab mount"
	[ "$(findmnt -n -o SOURCE -M "$M")" = "$2" ] || t_fail "source: $(findmnt -M "$M")"
	t_umount_idle "$M" || t_fail "umount"
	t_wait_gone "$pid" || t_fail "daemon $pid did not exit after umount"
}

t_log "mkfs's fstab lines, blanks escaped, through mount -T"
line=$(sed -n 's/^  fstab     //p' "$T/mkfs.out")
case $line in *"dir\\040with\\040blanks/array\\040one.conf /mnt/point raidfs "*) ;;
	*) t_fail "fstab line not escaped: $line" ;; esac
fstab_mount "$line" "$D/array one.conf"
"$MKFS" -n -f "${IMG_LIST[@]}" >"$T/mkfs.out" 2>&1 || t_fail "mkfs -n: $(cat "$T/mkfs.out")"
line=$(sed -n 's/^  fstab     //p' "$T/mkfs.out")
case $line in *"dir\\040with\\040blanks/m0.img:"*) ;;
	*) t_fail "fstab line not escaped: $line" ;; esac
fstab_mount "$line" "$IMGS"
t_log "ok"
