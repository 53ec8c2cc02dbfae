#!/bin/bash
# A member in use is never assembled around: a second daemon on the same
# members refuses (it must not run the array degraded and mark the first
# daemon's members stale), and a mount right after umount waits for the
# exiting daemon instead of failing.
. "$(dirname "$0")/lib.sh"
t_setup

t_images 4 256M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/a"
echo hello >"$T/a/f"
sync

t_log "a second daemon on the same members is refused"
rc=0
t_try_mount "$IMGS" "$T/b" || rc=$?
[ "$rc" -ne 0 ] || t_fail "a second daemon mounted the same members"
grep -q "in use" "$T/daemon.log" || t_fail "no 'in use' message"
[ "$(cat "$T/a/f")" = hello ] || t_fail "the first mount was disturbed"

t_log "umount then mount at once: waits for the first daemon, not degraded"
pid=${T_PID_OF[$T/a]}
t_umount_idle "$T/a"
: >"$T/daemon.log"
t_mount "$IMGS" "$T/c"
wait "$pid" || t_fail "the first daemon exited non-zero"
grep -q "DEGRADED\|missing" "$T/daemon.log" && t_fail "remount ran degraded"
[ "$(cat "$T/c/f")" = hello ] || t_fail "data lost across the quick remount"
t_umount "$T/c"

# fsck of an array that is not mounted, while another array whose members
# have the same relative names is mounted from another directory: the
# mount table's relative names are not taken against fsck's directory
# (it said "the array is mounted on ...: unmount it first", exit 8); a
# mount of its own is still refused, through the member locks.
t_log "relative member names of another array's mount"
mkdir -p "$T/ra/mnt" "$T/rb"
for d in ra rb; do
	(cd "$T/$d" && truncate -s 64M zz0.img zz1.img &&
		"$RAIDFS_BIN/mkfs.raidfs" -q -l 1 zz0.img zz1.img >/dev/null) ||
		t_fail "mkfs in $d"
done
cd "$T/ra"
t_mount zz0.img:zz1.img "$T/ra/mnt"       # the mount table says "zz0.img:zz1.img"
cd - >/dev/null
rc=0; (cd "$T/rb" && "$RAIDFS_BIN/fsck.raidfs" -n -f zz0.img:zz1.img) >"$T/fsck.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/fsck.out"; t_fail "fsck of an unmounted array: exit $rc"; }
rc=0; (cd "$T/ra" && "$RAIDFS_BIN/fsck.raidfs" -n -f zz0.img:zz1.img) >"$T/fsck.out" 2>&1 || rc=$?
[ $rc -eq 8 ] || { cat "$T/fsck.out"; t_fail "fsck of the mounted array: exit $rc, want 8"; }
t_umount "$T/ra/mnt"
t_log "ok"
