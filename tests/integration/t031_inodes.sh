#!/bin/bash
# Inodes allocated as files are created (format 2): far more empty files
# than format 1's fixed table held, df -i adding up, the same after a
# remount, fsck -n -f clean; mkfs.raidfs -N caps the count.
#
# By default a 36 MiB filesystem (format 1 gave it 2,304 inodes) takes
# 6,000 empty files, in a few seconds.  RAIDFS_INODES_FULL=1 runs the
# issue's size instead: 200,000 empty files on a 1 GiB filesystem (70 s
# with the release build, RAIDFS_BIN=build, on a loaded 2-core machine;
# some 200 s under ASan).
. "$(dirname "$0")/lib.sh"
t_setup

if [ "${RAIDFS_INODES_FULL:-0}" = 1 ]; then
	size=342M files=200000          # RAID 5 of 4: 1 GiB
else
	size=12M files=6000             # RAID 5 of 4: 36 MiB
fi
t_images 4 $size
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"

# N empty files in 10 directories (mknod: one request each); statvfs's
# count of inodes in use moves by exactly that many.
t_log "$files empty files"
"$PY" - "$T/mnt" "$files" <<'PYEOF' || t_fail "creating $files files"
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
s0 = os.statvfs(d)
assert s0.f_ffree >= n, "df -i promises %d free inodes" % s0.f_ffree
t0 = time.time()
for k in range(10):
    os.mkdir(os.path.join(d, "d%d" % k))
for i in range(n):
    os.mknod(os.path.join(d, "d%d" % (i % 10), "f%06d" % i))
print("  %d creates/s" % (n / (time.time() - t0)))
s1 = os.statvfs(d)
used0, used1 = s0.f_files - s0.f_ffree, s1.f_files - s1.f_ffree
assert used1 - used0 == n + 10, (used0, used1)
assert s1.f_ffree < s0.f_ffree, "df -i IFree did not move"
PYEOF
df -i "$T/mnt" | tail -1 >"$T/df.before"
t_umount "$T/mnt"

t_log "remount: every file there, df -i the same"
t_mount "$IMGS" "$T/mnt"
n=$(find "$T/mnt" -type f | wc -l)
[ "$n" -eq "$files" ] || t_fail "$n files after remount, want $files"
df -i "$T/mnt" | tail -1 >"$T/df.after"
cmp -s "$T/df.before" "$T/df.after" ||
	t_fail "df -i changed: $(cat "$T/df.before") / $(cat "$T/df.after")"
t_umount "$T/mnt"
rc=0; "$RAIDFS_BIN/fsck.raidfs" -n -f "$IMGS" >"$T/fsck.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/fsck.out"; t_fail "fsck -n -f: exit $rc"; }

t_log "mkfs.raidfs -N 1000: 1006 files (rounded up to chunks of 16), then ENOSPC"
"$RAIDFS_BIN/mkfs.raidfs" -q -f -N 1000 -l 5 -c 64K "${IMG_LIST[@]}" >>"$T/mkfs.log" 2>&1 ||
	{ cat "$T/mkfs.log"; t_fail "mkfs -N"; }
t_mount "$IMGS" "$T/mnt"
"$PY" - "$T/mnt" <<'PYEOF' || t_fail "-N 1000 not honoured"
import errno, os, sys
d = sys.argv[1]
s = os.statvfs(d)
assert (s.f_files, s.f_ffree) == (1007, 1006), (s.f_files, s.f_ffree)
made = 0
try:
    for i in range(1100):
        os.mknod(os.path.join(d, "f%d" % i))
        made += 1
except OSError as e:
    assert e.errno == errno.ENOSPC, e
assert made == 1006, made
assert os.statvfs(d).f_ffree == 0
assert os.statvfs(d).f_bavail > 1000, "space ran out, not inodes"
PYEOF
t_umount "$T/mnt"
exit 0
