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
t_log "ok"
