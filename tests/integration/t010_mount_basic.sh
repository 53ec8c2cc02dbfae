#!/bin/bash
# Mount a 4-member RAID 5 of sparse images the way a user would (daemonised
# raidfs), write, unmount, mount again: the data is there.  Then the
# command line's failure modes and exit codes.
. "$(dirname "$0")/lib.sh"
t_setup

t_images 4 1G
t_mkfs 5 64K "${IMG_LIST[@]}"
mkdir "$T/mnt"

t_log "daemonised mount (exit status only once mounted)"
"$RAIDFS" "$IMGS" "$T/mnt" 2>>"$T/daemon.log"
T_MOUNTS+=("$T/mnt")
t_is_mounted "$T/mnt" || t_fail "not mounted after raidfs returned 0"
pid=$(t_daemon_pid "$T/mnt") || t_fail "no daemon serving $T/mnt"
T_PIDS+=("$pid")
grep -q " $T/mnt fuse.raidfs " /proc/mounts || t_fail "type is not fuse.raidfs"
grep " $T/mnt " /proc/mounts | grep -q default_permissions || t_fail "no default_permissions"

# read_ahead_kb of the FUSE connection mounted on DIR
bdi_readahead() {
	local dev
	dev=$(awk -v d="$1" '$5 == d { print $3 }' /proc/self/mountinfo)
	cat "/sys/class/bdi/$dev/read_ahead_kb"
}

# the daemon raises it through sysfs: a read-only /sys (some containers)
# leaves FUSE's 128 KiB, and the daemon's log says so
bdi_writable() {
	local dev
	dev=$(awk -v d="$1" '$5 == d { print $3 }' /proc/self/mountinfo)
	[ -w "/sys/class/bdi/$dev/read_ahead_kb" ]
}

t_log "readahead: a 1 MiB READ ahead of a sequential reader, not FUSE's 128 KiB"
ra=$(bdi_readahead "$T/mnt")
ra_want=1024
bdi_writable "$T/mnt" || { ra_want=128; t_log "read-only sysfs: the kernel's 128 KiB stays"; }
[ "$ra" -eq "$ra_want" ] || t_fail "read_ahead_kb $ra, want $ra_want"

t_log "statfs numbers add up"
read -r bsize blocks bfree bavail files ffree < <(stat -f -c '%S %b %f %a %c %d' "$T/mnt")
[ "$bsize" -eq 4096 ] || t_fail "f_bsize $bsize"
# 3 data members of 1 GiB minus metadata: between 2 and 3 GiB
[ "$blocks" -gt $((2 << 18)) ] && [ "$blocks" -le $((3 << 18)) ] || t_fail "f_blocks $blocks"
[ "$bfree" -le "$blocks" ] && [ "$bavail" -le "$bfree" ] || t_fail "free $bfree avail $bavail of $blocks"
[ "$ffree" -le "$files" ] || t_fail "inodes free $ffree of $files"

t_log "write, and statfs sees the space used"
head -c 50M /dev/urandom >"$T/ref"
cp "$T/ref" "$T/mnt/file"
mkdir -p "$T/mnt/d1/d2"
echo hello >"$T/mnt/d1/d2/small"
sync -f "$T/mnt"
read -r bfree2 < <(stat -f -c '%f' "$T/mnt")
[ $((bfree - bfree2)) -ge $((50 << 8)) ] || t_fail "50 MiB written, free fell by $((bfree - bfree2)) blocks"
cmp "$T/ref" "$T/mnt/file" || t_fail "read back differs"

t_log "umount: the daemon flushes and exits"
t_umount_idle "$T/mnt"
t_wait_gone "$pid" || t_fail "daemon still running after umount"
t_is_mounted "$T/mnt" && t_fail "still mounted"

t_log "persistence across unmount and mount"
t_mount "$IMGS" "$T/mnt"
cmp "$T/ref" "$T/mnt/file" || t_fail "file differs after remount"
[ "$(cat "$T/mnt/d1/d2/small")" = hello ] || t_fail "small file lost"
t_umount "$T/mnt"

t_log "ro: writes fail with EROFS, reads work"
t_mount "$IMGS" "$T/mnt" -o ro
cmp "$T/ref" "$T/mnt/file" || t_fail "ro read differs"
err=$(touch "$T/mnt/new" 2>&1) && t_fail "created a file on a ro mount"
case $err in *"Read-only file system"*) ;; *) t_fail "ro create: $err" ;; esac
grep " $T/mnt " /proc/mounts | grep -q ' ro,' || t_fail "kernel mount is not ro"
ra=$(bdi_readahead "$T/mnt")
[ "$ra" -eq "$ra_want" ] || t_fail "ro mount: read_ahead_kb $ra, want $ra_want"
t_umount "$T/mnt"

t_log "SIGTERM unmounts, flushes and exits 0"
t_mount "$IMGS" "$T/mnt"
echo after-term >"$T/mnt/term"
kill -TERM "${T_PID_OF[$T/mnt]}"
wait "${T_PID_OF[$T/mnt]}" || t_fail "daemon exited $? on SIGTERM"
t_is_mounted "$T/mnt" && t_fail "still mounted after SIGTERM"
t_mount "$IMGS" "$T/mnt"
[ "$(cat "$T/mnt/term")" = after-term ] || t_fail "data written before SIGTERM lost"
t_umount "$T/mnt"

t_log "exit codes: usage 1, bad option 1, mount failure 32"
rc=0; "$RAIDFS" >/dev/null 2>&1 || rc=$?
[ $rc -eq 1 ] || t_fail "no arguments: exit $rc"
rc=0; "$RAIDFS" -o degraded=maybe "$IMGS" "$T/mnt" 2>/dev/null || rc=$?
[ $rc -eq 1 ] || t_fail "degraded=maybe: exit $rc"
rc=0; "$RAIDFS" -o cache_mb=abc "$IMGS" "$T/mnt" 2>/dev/null || rc=$?
[ $rc -eq 1 ] || t_fail "cache_mb=abc: exit $rc"
rc=0; "$RAIDFS" "$IMGS" "$T/nodir" 2>/dev/null || rc=$?
[ $rc -eq 32 ] || t_fail "missing mount point: exit $rc"
rc=0; "$RAIDFS" "$T/none1.img:$T/none2.img" "$T/mnt" 2>"$T/err" || rc=$?
[ $rc -eq 32 ] || t_fail "no members: exit $rc"
grep -q none1.img "$T/err" || t_fail "the message does not name the missing member"
t_is_mounted "$T/mnt" && t_fail "mounted despite errors"

t_log "unknown options are warnings, never fatal"
t_mount "$IMGS" "$T/mnt" -o frobnicate,defaults,nofail,_netdev,x-systemd.automount,noauto,relatime
grep -q "frobnicate" "$T/daemon.log" || t_fail "no warning about frobnicate"
t_umount "$T/mnt"
exit 0
