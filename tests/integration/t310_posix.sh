#!/bin/bash
# POSIX conformance, pjdfstest style (tests/tools/posix.py): chmod, chown
# (setuid/setgid clearing), link, mkdir (setgid directories), mknod/mkfifo,
# open flags, rename (every edge case, RENAME_NOREPLACE/EXCHANGE, sticky
# directories), rmdir, unlink, symlink, truncate, fallocate, utimensat and
# its permission rules, which timestamps each operation updates, xattrs,
# long names, st_blocks, statvfs; as root and as unprivileged users.  Each
# case runs on tmpfs first, and raidfs must give the same outcomes.  Then
# the tree must be identical (modes, owners, link counts, sizes, times,
# contents, xattrs) after unmount and mount.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/../tools/known.sh"

# raidfs bugs found by this test and not fixed yet: "check-name reason".
# Check names are "posix-<case>" (posix.py --list) and "posix-remount".
KNOWN_FAILURES=(
	"posix-remount mtime/ctime shown after a write through the cache (O_APPEND writes, a write that kills setuid bits) or after fallocate differ from those found after remount (kernel-cached vs daemon-stamped times)"
)

t_setup
REF=$(mktemp -d /dev/shm/raidfs-posix.XXXXXX)
T_RM_AT_EXIT+=("$REF")
cp "$TESTS_DIR/../tools/posix.py" "$T/posix.py"
mkdir -p "$REF/ref" "$REF/xdev" "$T/xdev"
chmod 755 "$T" "$REF" "$REF/ref"

t_images 4 512M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt" -o allow_other     # the unprivileged steps need it
chmod 755 "$T/mnt"

timeout -k 5 150 "$PY" "$T/posix.py" --ref "$REF/ref" --ref-other "$T/xdev" \
	--test "$T/mnt" --test-other "$REF/xdev" >"$T/posix.out" 2>&1 || true
grep -q '^RESULT ' "$T/posix.out" || { cat "$T/posix.out"; t_fail "posix.py did not run"; }
while read -r _ name verdict; do
	rc=0
	[ "$verdict" = ok ] || rc=1
	# the details of a failure, indented below its RESULT line
	[ $rc -eq 0 ] && ! k_known_reason "posix-$name" >/dev/null ||
		awk -v n="$name" '$1 == "RESULT" { on = ($2 == n); next } on' "$T/posix.out" \
			| grep -v 'info (not a failure)' | sed 's/^/  /'
	k_result "posix-$name" $rc
done < <(grep '^RESULT ' "$T/posix.out")
grep -h 'info (not a failure)' "$T/posix.out" | sed 's/^ */  /' || true
n=$(grep -c '^RESULT ' "$T/posix.out")
[ "$n" -eq "$("$PY" "$T/posix.py" --list | wc -l)" ] || t_fail "posix.py stopped after $n cases"

timeout -k 5 60 "$PY" "$T/posix.py" --snapshot "$T/mnt" >"$T/before"
t_umount "$T/mnt"
t_mount "$IMGS" "$T/mnt" -o allow_other
timeout -k 5 60 "$PY" "$T/posix.py" --snapshot "$T/mnt" >"$T/after" || true
same_after_remount() { diff "$T/before" "$T/after" | head -20; cmp -s "$T/before" "$T/after"; }
k_check posix-remount same_after_remount
t_umount "$T/mnt"

# Isolated: unlinking a FIFO, a socket and a device node on a fresh array;
# then the daemon must free those inodes and exit within 30 s of umount.
umount_within() {
	local dir=$1 secs=$2 pid=${T_PID_OF[$1]} i rc=0 upid
	umount "$dir" &    # waits for the daemon: may never return
	upid=$!
	for i in $(seq $((secs * 10))); do t_pid_alive "$pid" || break; sleep 0.1; done
	if t_pid_alive "$pid"; then
		t_log "daemon still running ${secs}s after umount: killed"
		kill -9 "$pid"
		wait "$pid" 2>/dev/null || true
		wait "$upid" 2>/dev/null || true
		unset "T_PID_OF[$dir]"
		return 1
	fi
	wait "$upid" || rc=1
	wait "$pid" || rc=1
	unset "T_PID_OF[$dir]"
	return $rc
}
rm -f "$T"/*.img
t_images 4 256M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt" -o allow_other
rm -rf "$REF/ref/unlink_special"
timeout -k 5 30 "$PY" "$T/posix.py" --ref "$REF/ref" --ref-other "$T/xdev" \
	--test "$T/mnt" --test-other "$REF/xdev" unlink_special >"$T/posix2.out" 2>&1 || true
sed 's/^ /  /' "$T/posix2.out"
rc=0
grep -q '^RESULT unlink_special ok' "$T/posix2.out" || rc=1
k_result posix-unlink_special $rc
k_check posix-free-special-inodes umount_within "$T/mnt" 30
k_done
