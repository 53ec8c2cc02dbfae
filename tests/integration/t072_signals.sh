#!/bin/bash
# Signals never kill the daemon uncleanly: SIGUSR1 logs a status summary,
# SIGHUP reopens the log, SIGUSR2 and SIGPIPE are logged and ignored; the
# mount keeps serving after each (SIGUSR1 used to kill the daemon and leave
# "Transport endpoint is not connected").  SIGTERM then unmounts it, the
# array clean.  Daemonised (messages to logfile=) and in the foreground.
. "$(dirname "$0")/lib.sh"
t_setup
FSCK=$RAIDFS_BIN/fsck.raidfs

t_images 4 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
mkdir "$T/mnt"
LOG=$T/raidfs.log

serving() {   # the mount answers, reads and writes
	t_pid_alive "$pid" || t_fail "$1: the daemon died"
	t_is_mounted "$T/mnt" || t_fail "$1: no longer mounted"
	echo "after $1" >"$T/mnt/after" || t_fail "$1: write failed"
	[ "$(cat "$T/mnt/after")" = "after $1" ] || t_fail "$1: read back differs"
	cmp "$T/ref" "$T/mnt/file" || t_fail "$1: file differs"
}

# logged LINE: the log gets LINE within 5 s
logged() {
	local i
	for i in $(seq 50); do grep -qF -- "$1" "$LOG" 2>/dev/null && return 0; sleep 0.1; done
	cat "$LOG" >&2
	t_fail "not in the log: $1"
}

t_log "daemonised, messages to $LOG"
"$RAIDFS" -o logfile="$LOG" "$IMGS" "$T/mnt" 2>>"$T/daemon.log" || t_fail "mount failed"
T_MOUNTS+=("$T/mnt")
pid=$(t_daemon_pid "$T/mnt") || t_fail "no daemon serving $T/mnt"
T_PIDS+=("$pid")
head -c 3M /dev/urandom >"$T/ref"
cp "$T/ref" "$T/mnt/file"
logged "detaching: messages go to $LOG"

t_log "SIGUSR1: status"
kill -USR1 "$pid"
logged "SIGUSR1 (from pid"
logged "slot 0 active"
logged "slot 3 active"
logged "filesystem: "
serving USR1

t_log "SIGUSR2, SIGPIPE: ignored"
kill -USR2 "$pid"
logged "SIGUSR2 (from pid $$) ignored"
serving USR2
kill -PIPE "$pid"
logged "SIGPIPE (from pid $$) ignored"
serving PIPE

t_log "SIGHUP: the log reopened (as after logrotate)"
mv "$LOG" "$LOG.1"
kill -HUP "$pid"
logged "SIGHUP (from pid $$): log reopened, messages go to $LOG"
serving HUP
grep -q "SIGHUP" "$LOG.1" && t_fail "written to the moved log after SIGHUP"

t_log "SIGTERM: unmounted, array clean"
sync -f "$T/mnt"
kill -TERM "$pid"
t_wait_gone "$pid" || t_fail "daemon still running after SIGTERM"
t_is_mounted "$T/mnt" && t_fail "still mounted after SIGTERM"
logged "$T/mnt unmounted, array clean"
rc=0; "$FSCK" -n "$IMGS" >"$T/fsck.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/fsck.out"; t_fail "fsck -n after SIGTERM: exit $rc"; }
grep -q "every member is clean" "$T/fsck.out" || { cat "$T/fsck.out"; t_fail "array not clean"; }

t_log "foreground: the same, and exit 0"
t_mount "$IMGS" "$T/mnt"
pid=${T_PID_OF[$T/mnt]}
for sig in USR1 USR2 HUP PIPE; do
	kill -"$sig" "$pid"
	sleep 0.2
	serving "$sig (foreground)"
done
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
[ $rc -eq 0 ] || t_fail "foreground daemon exited $rc after SIGTERM"
unset "T_PID_OF[$T/mnt]"
t_is_mounted "$T/mnt" && t_fail "still mounted"
grep -q "SIGUSR1 (from pid" "$T/daemon.log" || t_fail "foreground: no status on stderr"
exit 0
