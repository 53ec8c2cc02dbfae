#!/bin/bash
# Every error is told, and never to nowhere.  A file block is made
# unreadable (two members of one RAID 5 row corrupted); the daemon, once
# detached, logs it with the file's path and byte range:
#   - in a private mount namespace whose /dev has no /dev/log, to the
#     kernel's log (syslog(3) would drop it silently): found with dmesg;
#   - with a syslog listener on /dev/log, there, and not in the kernel's log;
#   - with -o logfile=, in that file.
# The kernel rate-limits writers of /dev/kmsg (10 lines in 5 s); the test
# lifts that (kernel.printk_devkmsg=on) while it runs, so a burst of
# raidcore's lines cannot hide the one it looks for.
. "$(dirname "$0")/lib.sh"
t_setup
command -v unshare >/dev/null || t_skip "no unshare"

t_images 4 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"
mkdir "$T/mnt/dir"
t_pattern_files "$T/mnt/dir" 50 120 8
t_umount "$T/mnt"

# file1's block 60, on its member and on one other of the same row
read -r img0 off < <(t_locate_block 1 60 "${IMG_LIST[@]}")
[ -n "$img0" ] || t_fail "file1 block 60 not found"
other=${IMG_LIST[0]}; [ "$other" = "$img0" ] && other=${IMG_LIST[1]}
for img in "$img0" "$other"; do
	printf 'CORRUPTCORRUPT!!' | dd of="$img" bs=1 seek=$((off + 100)) conv=notrunc status=none
done
LINE="(/dir/file1): bytes 245760-249855 unreadable"

old_devkmsg=$(cat /proc/sys/kernel/printk_devkmsg)
restore_devkmsg() { echo "$old_devkmsg" >/proc/sys/kernel/printk_devkmsg; }
trap 'restore_devkmsg; t_cleanup' EXIT
echo on >/proc/sys/kernel/printk_devkmsg

# in_ns SCRIPT: runs SCRIPT (bash) in a private mount namespace whose /dev
# holds only fuse, null, zero, urandom and kmsg; $1.. as for bash -c.
in_ns() {
	unshare -m --propagation private bash -c '
		set -eu
		mount -t tmpfs -o mode=755 tmpfs /dev
		mknod -m 666 /dev/fuse c 10 229
		mknod -m 666 /dev/null c 1 3
		mknod -m 666 /dev/zero c 1 5
		mknod -m 666 /dev/urandom c 1 9
		mknod -m 644 /dev/kmsg c 1 11
		'"$1" in_ns "$RAIDFS" "$IMGS" "$T" "$TESTS_DIR" "$PY"
}

# the body every case runs in its namespace: mount daemonised, read the
# damaged file (EIO), unmount, wait for the daemon; prints its pid
READ_DAMAGED='
	raidfs=$1 imgs=$2 t=$3 tests=$4
	"$raidfs" "$imgs" "$t/mnt" 2>>"$t/daemon.log"
	pid=$(pgrep -nf "raidfs $imgs $t/mnt")
	if cat "$t/mnt/dir/file1" >/dev/null 2>&1; then echo "read did not fail" >&2; fi
	cat "$t/mnt/dir/file0" "$t/mnt/dir/file2" >/dev/null
	"$tests/umount_idle.sh" "$t/mnt"
	for i in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	echo "$pid"
'

t_log "no /dev/log: the kernel's log"
pid=$(in_ns '[ ! -e /dev/log ]'"$READ_DAMAGED") || t_fail "namespace run failed"
dmesg | grep -F "raidfs[$pid]: " >"$T/kmsg" || true
grep -qF "detaching: messages go to the kernel log (/dev/kmsg)" "$T/kmsg" ||
	{ cat "$T/kmsg" "$T/daemon.log"; t_fail "the daemon did not say where its messages go"; }
grep -qE "inode [0-9]+ \(/dir/file1\): bytes 245760-249855 unreadable" "$T/kmsg" ||
	{ cat "$T/kmsg"; t_fail "the unreadable range is not in the kernel's log"; }
grep -q "checksum mismatch" "$T/kmsg" || t_fail "raidcore's messages are not in the kernel's log"
grep -qF "unmounted, array clean" "$T/kmsg" || t_fail "no unmount message in the kernel's log"

t_log "a syslog listener on /dev/log"
pid=$(in_ns '
	"$5" -c "
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(\"/dev/log\")
with open(sys.argv[1], \"ab\", buffering=0) as out:
    while True:
        out.write(s.recv(4096) + b\"\\n\")
" "$3/syslog.txt" &
	listener=$!
	for i in $(seq 100); do [ -S /dev/log ] && break; sleep 0.05; done
	'"$READ_DAMAGED"'
	sleep 0.5
	kill $listener' ) || t_fail "namespace run failed"
grep -qF "raidfs[$pid]: " "$T/syslog.txt" || { cat "$T/syslog.txt"; t_fail "nothing reached syslog"; }
grep -F "raidfs[$pid]: " "$T/syslog.txt" | grep -qF "$LINE" ||
	{ cat "$T/syslog.txt"; t_fail "the unreadable range is not in syslog"; }
dmesg | grep -qF "raidfs[$pid]: " && t_fail "written to the kernel's log although syslog listens"

t_log "logfile="
mkdir -p "$T/mnt"
"$RAIDFS" -o logfile="$T/raidfs.log" "$IMGS" "$T/mnt" 2>>"$T/daemon.log"
T_MOUNTS+=("$T/mnt")
pid=$(t_daemon_pid "$T/mnt") || t_fail "no daemon"
T_PIDS+=("$pid")
cat "$T/mnt/dir/file1" >/dev/null 2>&1 && t_fail "the damaged file read back"
t_umount_idle "$T/mnt"
t_wait_gone "$pid" || t_fail "daemon still running"
grep -qF "$LINE" "$T/raidfs.log" || { cat "$T/raidfs.log"; t_fail "not in the log file"; }
dmesg | grep -qF "raidfs[$pid]: " && t_fail "written to the kernel's log although a log file is named"
exit 0
