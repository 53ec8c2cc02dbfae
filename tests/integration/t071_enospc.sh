#!/bin/bash
# ENOSPC from write(2): dd to a nearly full filesystem fails in write()
# with "No space left on device" (it used to run until killed, the file
# growing without bound, ENOSPC only at close); the file is no larger than
# the free space, every byte dd was told was written reads back, earlier
# files are intact, the next write fails at once (or within the 2 MiB
# fill's closed handle kept), reads and lseek through
# a write handle still work (they failed with ENOSPC), deleting makes room
# again, and fsck is clean after umount.  Full, an overwrite in place and
# a write into a fallocated range succeed (they need no new blocks: they
# failed with ENOSPC), and once no handle writes through the page cache
# new data fills the filesystem to its last blocks.  On a large
# filesystem the dirty limit raidfs sets is no lower than FUSE's WRITEs in
# flight need.  An fallocate larger than the free space fails with ENOSPC
# and takes no block (it left the blocks it had taken in the file).
. "$(dirname "$0")/lib.sh"
t_setup
FSCK=$RAIDFS_BIN/fsck.raidfs

t_images 4 40M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"

t_log "earlier files"
head -c 20M /dev/urandom >"$T/ref"
cp "$T/ref" "$T/mnt/early"
mkdir "$T/mnt/d"
for i in 1 2 3; do echo "small $i" >"$T/mnt/d/s$i"; done
fallocate -l 4M "$T/mnt/prealloc" || t_fail "fallocate"
sql() {     # sql DB: runs stdin's Python with c, a connection to DB
	"$PY" -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
exec(sys.stdin.read())
c.close()' "$1"
}
sql "$T/mnt/app.db" <<'PYEOF' || t_fail "sqlite"
c.execute("pragma journal_mode=wal")
c.execute("create table t(x)")
c.executemany("insert into t values(?)", [(i,) for i in range(1000)])
c.commit()
PYEOF
# a handle writing through the page cache, open across the fill: while
# it is, new blocks for writes that bypass the cache keep its reserve
exec 7>>"$T/mnt/held"
echo held >&7
sync -f "$T/mnt"
free=$(df -B1 --output=avail "$T/mnt" | tail -1)
# Available leaves out the reserve for cached writers (an fallocate of all
# of it succeeds: t430); what write(2) accepted before the check tripped
# may land in that reserve, never past the free blocks (f_bfree)
bfree=$(stat -f -c '%f * %S' "$T/mnt")
bfree=$((bfree))
t_log "$((free >> 20)) MiB available, $((bfree >> 20)) MiB free"

t_log "an fallocate larger than the free space fails and takes nothing"
used0=$(stat -f -c '%f' "$T/mnt")
fallocate -l $((bfree + (8 << 20))) "$T/mnt/toobig" 2>"$T/fa.err" &&
	t_fail "fallocate beyond the free space succeeded"
grep -q "No space left on device" "$T/fa.err" ||
	{ cat "$T/fa.err"; t_fail "fallocate: not ENOSPC"; }
[ "$(stat -c '%s %b' "$T/mnt/toobig")" = "0 0" ] ||
	t_fail "the failed fallocate left $(stat -c '%s bytes, %b blocks' "$T/mnt/toobig")"
rm -f "$T/mnt/toobig"
[ "$(stat -f -c '%f' "$T/mnt")" = "$used0" ] ||
	t_fail "free blocks $used0 before the failed fallocate, $(stat -f -c '%f' "$T/mnt") after"

t_log "dd bs=1M until it fails"
rc=0
timeout 120 dd if=/dev/zero of="$T/mnt/fill" bs=1M 2>"$T/dd.err" || rc=$?
cat "$T/dd.err" | sed 's/^/    /'
[ $rc -ne 124 ] || t_fail "dd ran until killed: write(2) never failed"
[ $rc -ne 0 ] || t_fail "dd succeeded on a full filesystem"
grep -q "error writing.*No space left on device" "$T/dd.err" ||
	t_fail "dd did not fail in write() with ENOSPC"
grep -q "closing output file" "$T/dd.err" &&
	t_fail "close reported an error: bytes write() accepted were lost"
size=$(stat -c %s "$T/mnt/fill")
t_log "fill: $((size >> 20)) MiB of $((free >> 20)) MiB free"
[ "$size" -le "$bfree" ] || t_fail "fill ($size) grew past the free space ($bfree)"
[ "$size" -ge $((free - 16 * 1024 * 1024)) ] ||
	t_fail "write() failed too early: $size of $free bytes"
written=$(sed -n 's/^\([0-9]*\) bytes.*copied.*/\1/p' "$T/dd.err")
[ "$written" = "$size" ] || t_fail "dd says $written bytes, the file has $size"
sync "$T/mnt/fill" || t_fail "fsync after the failed write reports an error"

# At once, or within what fill's handle held back: once its release is
# served (asynchronous in FUSE), the 2 MiB kept for every further cached
# writer is free space again, and this writer (no page cache near full)
# may take it (it took 1-2 MiB in 1 of 3 runs on a loaded machine)
t_log "the next write fails at once (or within the space fill's handle kept)"
rc=0; timeout 20 dd if=/dev/zero of="$T/mnt/more" bs=1M count=4 2>"$T/dd2.err" || rc=$?
[ $rc -ne 0 ] && grep -q "No space left on device" "$T/dd2.err" ||
	{ cat "$T/dd2.err"; t_fail "a write to the full filesystem did not fail"; }
more=$(stat -c %s "$T/mnt/more")
[ "$more" -le $((2 << 20)) ] || t_fail "more: $more bytes accepted on a full filesystem"
rm "$T/mnt/more"

t_log "full: reads and lseek through a write handle work, writes fail"
# what fill's handle kept may be free again (its release is asynchronous):
# taken first, so that the writes below meet a full filesystem (up to
# 2 MiB of one was accepted in 1 of 20 runs on a loaded machine)
timeout 20 dd if=/dev/zero of="$T/mnt/slack" bs=64K 2>/dev/null || true
"$PY" - "$T/mnt/early" <<'PYEOF' || t_fail "a read, lseek or overwrite through a write handle failed on a full filesystem"
import errno, os, sys
p = sys.argv[1]
size = os.stat(p).st_size
fd = os.open(p, os.O_RDWR)
os.fstat(fd)                    # its reply used to expire the attributes
assert os.lseek(fd, 0, os.SEEK_END) == size, "lseek SEEK_END"
assert len(os.pread(fd, 65536, size - 4096)) == 4096, "pread across EOF"
assert os.pread(fd, 100, size) == b"", "pread at EOF"
for _ in range(2):
    try:
        os.pwrite(fd, b"x" * (1 << 20), size)
        sys.exit("a write past the end was accepted on a full filesystem")
    except OSError as e:
        assert e.errno == errno.ENOSPC, e
assert os.lseek(fd, 0, os.SEEK_END) == size, "lseek SEEK_END after ENOSPC"
# an overwrite in place needs no new blocks (the same bytes: cmp below)
head = os.pread(fd, 3 << 20, 1 << 20)
try:
    assert os.pwrite(fd, head, 1 << 20) == len(head), "short overwrite"
except OSError as e:
    sys.exit("an overwrite in place failed on a full filesystem: %s" % e)
os.close(fd)
with open(p, "r+b") as f:
    assert len(f.read()) == size, "open r+b, read()"
PYEOF
cmp "$T/ref" "$T/mnt/early" || t_fail "early changed"
rm -f "$T/mnt/slack"

t_log "full: a fallocated range takes its data"
head -c 4M /dev/urandom >"$T/pre"
dd if="$T/pre" of="$T/mnt/prealloc" bs=1M conv=notrunc,fsync 2>"$T/dd4.err" ||
	{ cat "$T/dd4.err"; t_fail "writing into a fallocated range failed on a full filesystem"; }
cmp "$T/pre" "$T/mnt/prealloc" || t_fail "prealloc does not read back"

t_log "no handle through the page cache: a database takes rows"
exec 7>&-
# it failed to open ("disk I/O error"): its -shm could not be written
sql "$T/mnt/app.db" <<'PYEOF' || t_fail "sqlite on a nearly full filesystem"
import os
assert c.execute("select count(*) from t").fetchone()[0] == 1000
for i in range(100):
    c.execute("insert into t values(?)", (os.urandom(3000),))
    c.commit()
assert c.execute("pragma integrity_check").fetchone()[0] == "ok"
PYEOF

t_log "the rest fills to the last blocks"
before=$(df -B1 --output=avail "$T/mnt" | tail -1)
rc=0; timeout 60 dd if=/dev/zero of="$T/mnt/rest" bs=64K 2>"$T/dd5.err" || rc=$?
[ $rc -ne 0 ] && grep -q "error writing.*No space left on device" "$T/dd5.err" ||
	{ cat "$T/dd5.err"; t_fail "dd of the rest did not end in write() with ENOSPC"; }
rest=$(stat -c %s "$T/mnt/rest")
after=$(df -B1 --output=avail "$T/mnt" | tail -1)
t_log "rest: $((rest >> 10)) KiB of $((before >> 10)) KiB; $((after >> 10)) KiB left"
[ "$rest" -ge $((1 << 20)) ] || t_fail "rest: only $rest bytes of $before free"
[ "$after" -lt $((1 << 20)) ] || t_fail "$after bytes still free after ENOSPC"
cmp -n "$rest" "$T/mnt/rest" /dev/zero || t_fail "rest does not read back"

t_log "stored as accepted, across remount"
t_umount "$T/mnt"
t_mount "$IMGS" "$T/mnt"
[ "$(stat -c %s "$T/mnt/fill")" -eq "$size" ] || t_fail "fill's size changed across remount"
cmp -n "$size" "$T/mnt/fill" /dev/zero || t_fail "fill does not read back as written"
cmp "$T/ref" "$T/mnt/early" || t_fail "an earlier file changed"
for i in 1 2 3; do [ "$(cat "$T/mnt/d/s$i")" = "small $i" ] || t_fail "d/s$i changed"; done
cmp "$T/pre" "$T/mnt/prealloc" || t_fail "prealloc changed across remount"
[ "$(stat -c %s "$T/mnt/rest")" -eq "$rest" ] && cmp -n "$rest" "$T/mnt/rest" /dev/zero ||
	t_fail "rest changed across remount"
[ "$(cat "$T/mnt/held")" = held ] || t_fail "held changed"

t_log "deleting makes room again"
rm "$T/mnt/fill" "$T/mnt/rest"
sync -f "$T/mnt"
# (a database in WAL mode cannot open on a full filesystem: its -shm)
sql "$T/mnt/app.db" <<'PYEOF' || t_fail "app.db after remount"
assert c.execute("select count(*) from t").fetchone()[0] == 1100
assert c.execute("pragma integrity_check").fetchone()[0] == "ok"
PYEOF
dd if=/dev/zero of="$T/mnt/again" bs=1M count=32 conv=fsync 2>"$T/dd3.err" ||
	{ cat "$T/dd3.err"; t_fail "no room after deleting"; }
t_umount "$T/mnt"

rc=0; "$FSCK" -n -f "$IMGS" >"$T/fsck.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/fsck.out"; t_fail "fsck -n -f: exit $rc"; }

t_log "a large filesystem's dirty limit leaves room for the WRITEs in flight"
# /sys/class/bdi/MAJ:MIN/max_bytes of the FUSE connection mounted on DIR
bdi_max_bytes() {
	local dev
	dev=$(awk -v d="$1" '$5 == d { print $3 }' /proc/self/mountinfo)
	cat "/sys/class/bdi/$dev/max_bytes" 2>/dev/null || echo 0
}
t_images 4 1200M big
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt" -o ro          # read-only: the kernel's own limit
kernel=$(bdi_max_bytes "$T/mnt")
t_umount "$T/mnt"
t_mount "$IMGS" "$T/mnt"
ours=$(bdi_max_bytes "$T/mnt")
t_umount "$T/mnt"
t_log "max_bytes: kernel $((kernel >> 10)) KiB, raidfs $((ours >> 10)) KiB"
if [ "$kernel" -eq 0 ]; then
	t_log "no max_bytes (before Linux 6.2): nothing to compare"
else
	# the kernel's figure moves with free memory (a ratio of its limit)
	[ "$ours" -le $((kernel + kernel / 16)) ] || t_fail "the dirty limit was raised past the kernel's"
	want=$((32 << 20)); [ "$kernel" -ge "$want" ] || want=$kernel
	# 12 WRITEs of 1 MiB in flight: a limit under 2x that throttled
	# sequential writes to half the passthrough's speed
	[ "$ours" -ge "$want" ] ||
		t_fail "dirty limit $((ours >> 10)) KiB on a 3.5 GiB filesystem, want $((want >> 10)) KiB"
fi
exit 0
