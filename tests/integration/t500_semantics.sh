#!/bin/bash
# Linux semantics at ext4's level (issue 11), on one mount: a buffered read
# after an AIO O_DIRECT write sees the new data; SEEK_DATA/SEEK_HOLE, cp
# --sparse=always and tar -S see data still in the writeback cache; the
# setgid rules of Linux 6.x for an unprivileged caller (chmod, setfacl,
# write, truncate, fallocate, punch); atime from one clock, under relatime,
# strictatime, noatime and nodiratime (a remount each); a default mount is
# dev,suid (a device node opens, a setuid program runs setuid), and
# nodev,nosuid,noexec are honoured; file handles survive a cache drop and
# a remount, and go stale when their inode is gone; fallocate's zero range
# against fsx's model, RENAME_WHITEOUT, the largest file size; chattr's
# immutable, append-only and nodump, enforced and kept across a remount;
# the times of an overwrite through the page cache (the kernel's) kept too;
# close(2) sends no FLUSH after the first (answered ENOSYS).
. "$(dirname "$0")/lib.sh"
t_setup
AIO_STALE=$(t_tool aio_stale)
FHANDLE=$(t_tool fhandle)
FSX=$(t_tool fsx)

t_images 4 128M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt" -o allow_other
chmod 755 "$T" "$T/mnt"
M=$T/mnt

t_log "buffered reads after AIO O_DIRECT writes are not stale"
"$AIO_STALE" "$M/aio" 300 || t_fail "a buffered read returned stale data after a direct write"
rm "$M/aio"

t_log "SEEK_DATA/SEEK_HOLE see data still in the writeback cache"
# sparse.py: 64 KiB at 0 and 4 KiB at 1 MiB of a 2 MiB file, kept open
# (the kernel writes its pages back at the last close) while it checks
# the seeks and runs the copies, whose results must equal the file
cat >"$T/sparse.py" <<'PY'
import os, subprocess, sys
m, t = sys.argv[1], sys.argv[2]
fd = os.open(m + "/sparse", os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(fd, b"x" * 65536, 0)
assert os.lseek(fd, 0, os.SEEK_DATA) == 0, "SEEK_DATA 0 after a write"
os.pwrite(fd, b"y" * 4096, 1 << 20)
os.ftruncate(fd, 2 << 20)
assert os.lseek(fd, 0, os.SEEK_HOLE) == 65536, "SEEK_HOLE"
assert os.lseek(fd, 65536, os.SEEK_DATA) == 1 << 20, "SEEK_DATA after the hole"
assert os.lseek(fd, (1 << 20) + 4096, os.SEEK_HOLE) == (1 << 20) + 4096, "SEEK_HOLE at the tail"
subprocess.check_call(["cp", "--sparse=always", m + "/sparse", m + "/sparse.cp"])
subprocess.check_call(["tar", "-S", "-C", m, "-cf", t + "/sparse.tar", "sparse"])
os.mkdir(t + "/untar")
subprocess.check_call(["tar", "-S", "-C", t + "/untar", "-xf", t + "/sparse.tar"])
os.close(fd)
PY
"$PY" "$T/sparse.py" "$M" "$T" || t_fail "seeks or sparse copies of a file being written"
cmp "$M/sparse" "$M/sparse.cp" || t_fail "cp --sparse=always lost data written moments before"
cmp "$M/sparse" "$T/untar/sparse" || t_fail "tar -S lost data written moments before"
[ "$(stat -c %b "$M/sparse.cp")" -lt 2048 ] || t_fail "cp --sparse=always did not keep the hole"

t_log "S_ISGID: dropped by a caller outside the file's group, as on ext4"
mode_is() { [ "$(stat -c %a "$1")" = "$2" ] || t_fail "$3: mode $(stat -c %a "$1"), want $2"; }
mkdir -m 777 "$M/sg"
t_as_nobody sh -c "touch '$M/sg/f'; mkdir '$M/sg/d'"
chgrp root "$M/sg/f" "$M/sg/d"            # nobody owns them, outside the group
chmod 2775 "$M/sg/f" "$M/sg/d"
t_as_nobody chmod 2755 "$M/sg/f" "$M/sg/d"
mode_is "$M/sg/f" 755 "chmod of a file by its owner outside the group"
mode_is "$M/sg/d" 755 "chmod of a directory by its owner outside the group"
chmod 2775 "$M/sg/f" "$M/sg/d"
t_as_nobody setfacl -m u:0:rwx "$M/sg/f" "$M/sg/d"
mode_is "$M/sg/f" 775 "setfacl on a file by its owner outside the group"
mode_is "$M/sg/d" 775 "setfacl on a directory by its owner outside the group"
# root's files written by nobody: S_ISUID always goes, S_ISGID too (with
# or without group execute), since nobody is outside group root
for m in 6777:777 6767:767 2666:666; do
	for op in write trunc falloc punch; do
		touch "$M/sg/$op"; chmod "${m%:*}" "$M/sg/$op"
	done
	t_as_nobody sh -c "echo x >>'$M/sg/write'; truncate -s 100 '$M/sg/trunc';
		fallocate -l 8192 '$M/sg/falloc'; fallocate -p -o 0 -l 4096 '$M/sg/punch'"
	for op in write trunc falloc punch; do
		mode_is "$M/sg/$op" "${m#*:}" "$op by a non-owner outside the group (mode ${m%:*})"
	done
done
# in the group through a supplementary group: S_ISGID stays
chmod 2666 "$M/sg/write"
setpriv --reuid=65534 --regid=65534 --groups=0 sh -c "echo x >>'$M/sg/write'"
mode_is "$M/sg/write" 2666 "write by a member of the group (supplementary)"
rm -r "$M/sg"

t_log "a default mount is dev,suid; nodev,nosuid,noexec when asked"
mknod "$M/null" c 1 3
chmod 666 "$M/null"
cp "$(command -v id)" "$M/id"
chmod 4755 "$M/id"                         # root's, setuid
dev_suid_check() {   # OPTIONS: what the mount was given
	local out ran=yes
	case $1 in
	*nodev*) t_expect_fail sh -c "echo x >'$M/null'" ;;
	*) echo x >"$M/null" || t_fail "a device node does not open ($1)" ;;
	esac
	out=$(t_as_nobody "$M/id" 2>&1) || ran=no
	case $1 in
	*noexec*) [ $ran = no ] || t_fail "noexec: a program ran ($out)" ;;
	*nosuid*) [ $ran = yes ] && [[ $out != *euid=0* ]] || t_fail "nosuid: $out" ;;
	*) [[ $out == *euid=0* ]] || t_fail "a setuid program did not run setuid ($1): $out" ;;
	esac
}
dev_suid_check defaults

t_log "fallocate (zero range, punch hole, preallocation) against fsx's model"
# -Z: an operation the filesystem lacks (zero range did) fails the run
"$FSX" -q -Z -N 500 -S 11 -l 600000 -o 65536 -c 20 "$M/fsx" >"$T/fsx.out" 2>&1 \
	|| { tail -n 20 "$T/fsx.out"; t_fail "fsx with every operation"; }
rm "$M/fsx"

t_log "RENAME_WHITEOUT leaves a whiteout (overlayfs), the largest file size"
echo moved >"$M/wo.a"
cat >"$T/limits.py" <<'PY'
import ctypes, errno, mmap, os, stat, sys
m = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
def check(ok, what):
    if not ok: sys.exit(what)
RENAME_WHITEOUT, AT_FDCWD = 4, -100
r = libc.renameat2(AT_FDCWD, (m + "/wo.a").encode(), AT_FDCWD, (m + "/wo.b").encode(), RENAME_WHITEOUT)
check(r == 0, "renameat2(RENAME_WHITEOUT): %s" % os.strerror(ctypes.get_errno()))
st = os.lstat(m + "/wo.a")
check(stat.S_ISCHR(st.st_mode) and st.st_rdev == 0, "no whiteout at the old name: %o" % st.st_mode)
check(open(m + "/wo.b").read() == "moved\n", "the file did not move")
# FS_MAX_FILE_SIZE (fs_int.h), 2^50: the last block can be written, the
# next byte cannot (O_DIRECT: the error comes from write(2) itself)
L = 1 << 50
fd = os.open(m + "/big", os.O_CREAT | os.O_RDWR | os.O_DIRECT, 0o644)
buf = mmap.mmap(-1, 4096); buf.write(b"z" * 4096)
check(os.pwritev(fd, [buf], L - 4096) == 4096, "a write of the last block")
try:
    os.pwritev(fd, [buf], L); check(False, "a write past the largest size")
except OSError as e:
    check(e.errno == errno.EFBIG, "a write past the largest size: %s" % e)
os.close(fd)
check(os.stat(m + "/big").st_size == L, "size at the limit")
try:
    os.truncate(m + "/big", L + 1); check(False, "truncate past the largest size")
except OSError as e:
    check(e.errno == errno.EFBIG, "truncate past the largest size: %s" % e)
PY
"$PY" "$T/limits.py" "$M" || t_fail "whiteout or file size limit"
rm "$M/wo.a" "$M/wo.b" "$M/big"

t_log "chattr +i, +a, +d (lsattr), enforced"
command -v chattr >/dev/null || t_fail "chattr missing (Debian package e2fsprogs)"
mkdir "$M/ia"
echo data >"$M/ia/imm"
echo data >"$M/ia/app"
touch "$M/ia/nodump"
chattr +i "$M/ia/imm"
chattr +a "$M/ia/app"
chattr +d "$M/ia/nodump"
for op in "echo x >>'$M/ia/imm'" "rm '$M/ia/imm'" "mv '$M/ia/imm' '$M/ia/x'" \
	"chmod 600 '$M/ia/imm'" "touch '$M/ia/imm'" "ln '$M/ia/imm' '$M/ia/l'" \
	"setfattr -n user.a -v 1 '$M/ia/imm'" "echo w >'$M/ia/app'" \
	"truncate -s 0 '$M/ia/app'" "rm '$M/ia/app'" "fallocate -p -l 1 '$M/ia/app'"; do
	t_expect_fail sh -c "$op"
done
echo more >>"$M/ia/app" || t_fail "an append to an append-only file"
[ "$(cat "$M/ia/imm" "$M/ia/app")" = "$(printf 'data\ndata\nmore')" ] || t_fail "contents of the flagged files"
chattr +i "$M/ia"
t_expect_fail touch "$M/ia/new"
chattr -i "$M/ia"
chattr +a "$M/ia"
touch "$M/ia/new" || t_fail "a new entry in an append-only directory"
t_expect_fail rm "$M/ia/new"
chattr -a "$M/ia"
# xfstests generic/079: times by value on an append-only file or directory
# are EPERM ("now" is taken), and removing a directory that is not empty
# from an immutable or append-only one is EPERM, not ENOTEMPTY
mkdir -p "$M/ia/d/sub" && touch "$M/ia/d/sub/f"
chattr +a "$M/ia/d"
"$PY" - "$M/ia" <<'PY' || t_fail "generic/079's cases"
import errno, os, subprocess, sys
d = sys.argv[1]
def want(name, fn, err):
    try:
        fn()
        got = 0
    except OSError as e:
        got = e.errno
    if got != err:
        sys.exit("%s: %s, not %s" % (name, errno.errorcode.get(got, "success"),
                                    errno.errorcode.get(err, "success")))
want("utime(+a file, (0, 0))", lambda: os.utime(d + "/app", (0, 0)), errno.EPERM)
want("utime(+a dir, (0, 0))", lambda: os.utime(d + "/d", (0, 0)), errno.EPERM)
want("utime(+a file, now)", lambda: os.utime(d + "/app", None), 0)
want("rmdir(not empty, in +a)", lambda: os.rmdir(d + "/d/sub"), errno.EPERM)
subprocess.run(["chattr", "-a", d + "/d"], check=True)
subprocess.run(["chattr", "+i", d + "/d"], check=True)
want("rmdir(not empty, in +i)", lambda: os.rmdir(d + "/d/sub"), errno.EPERM)
subprocess.run(["chattr", "-i", d + "/d"], check=True)
want("rmdir(not empty)", lambda: os.rmdir(d + "/d/sub"), errno.ENOTEMPTY)
PY
rm -r "$M/ia/d"
ia_check() {
	lsattr -d "$M/ia/imm" "$M/ia/app" "$M/ia/nodump" | awk '{ print $1 }' | tr '\n' ' ' >"$T/lsattr"
	grep -q '^----i[-]* -----a[-]* ------d[-]* $' "$T/lsattr" || t_fail "lsattr $1: $(cat "$T/lsattr")"
}
ia_check "as set"

# A file made immutable while a writer has it open (stress-ng's iomix):
# the writer's next write(2) fails with EPERM, as on ext4; what it wrote
# before is kept, and fsync and close succeed.  It used to succeed, the
# data was refused at write-back (EPERM at close, EIO from a later
# copy_file_range) and lost - the earlier write's with it.
t_log "chattr +i under an open writer: write(2) fails, what came before is kept"
echo AAAAAAAA >"$M/ia/open"
"$PY" - "$M/ia/open" <<'PY' || t_fail "immutable under an open writer"
import errno, os, subprocess, sys
p = sys.argv[1]
fd = os.open(p, os.O_RDWR)
os.pwrite(fd, b"CC", 0)                          # cached, before +i
subprocess.run(["chattr", "+i", p], check=True)
try:
    os.pwrite(fd, b"BB", 4)
    sys.exit("a write(2) to an immutable file succeeded")
except OSError as e:
    if e.errno != errno.EPERM:
        sys.exit("a write(2) to an immutable file: %s, not EPERM" % e)
os.fsync(fd)
os.close(fd)
subprocess.run(["chattr", "-i", p], check=True)
with open("/proc/sys/vm/drop_caches", "w") as f:
    f.write("3")
got = open(p, "rb").read()
if got != b"CCAAAAAA\n":
    sys.exit("immutable file holds %r" % got)
PY
rm "$M/ia/open"

# Refused changes through an open handle of an immutable file leave no
# error behind: every punch and copy_file_range fails with EPERM, fsync and
# syncfs succeed (the kernel moves the times before asking, and its
# write-back of them was refused: the second punch and copy_file_range
# failed with EIO, fsync and syncfs with EPERM, until chattr -i).
t_log "chattr +i: refused fallocate and copy_file_range leave no error"
head -c 1M /dev/urandom >"$M/ia/held"
"$PY" - "$M/ia/held" <<'PY' || t_fail "errors left behind by refused changes"
import ctypes, errno, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
p = sys.argv[1]
fd = os.open(p, os.O_RDWR)
os.fsync(fd)
subprocess.run(["chattr", "+i", p], check=True)
def punch():
    if libc.fallocate(fd, 3, ctypes.c_long(0), ctypes.c_long(8192)):
        raise OSError(ctypes.get_errno(), "fallocate")
def cfr():
    os.copy_file_range(fd, fd, 4096, 0, 500000)
bad = []
for name, f in (("punch", punch), ("punch again", punch),
                ("copy_file_range", cfr), ("punch a third time", punch)):
    try:
        f()
        bad.append(name + ": succeeded")
    except OSError as e:
        if e.errno != errno.EPERM:
            bad.append("%s: %s" % (name, os.strerror(e.errno)))
for name, f in (("fsync", lambda: os.fsync(fd)),
                ("syncfs", lambda: libc.syncfs(fd) == 0 or
                 (_ for _ in ()).throw(OSError(ctypes.get_errno(), "")))):
    try:
        f()
    except OSError as e:
        bad.append("%s: %s" % (name, os.strerror(e.errno)))
subprocess.run(["chattr", "-i", p], check=True)
os.close(fd)
if bad:
    sys.exit("; ".join(bad))
PY
rm "$M/ia/held"

# atime.py POLICY DIR: what a read (open and read) and a listing do to
# atime under POLICY; "old" times are set with utime first
cat >"$T/atime.py" <<'PY'
import os, sys, time
pol, d = sys.argv[1], sys.argv[2]
f, sub = d + "/at." + pol, d + "/atd." + pol
def at(p): return os.stat(p).st_atime_ns
def read(p): open(p, "rb").read()
def check(ok, what):
    if not ok: sys.exit("%s: %s" % (pol, what))
with open(f, "wb") as w: w.write(b"data")
st = os.stat(f)
check(st.st_atime_ns <= st.st_mtime_ns, "a new file's atime is after its mtime (two clocks)")
os.mkdir(sub)
os.utime(f, ns=(10**18, 10**18)); os.utime(sub, ns=(10**18, 10**18))
time.sleep(0.02)
read(f); os.listdir(sub)
moved, dmoved = at(f) != 10**18, at(sub) != 10**18
check(moved == (pol != "noatime"), "a read after a change moved atime: %s" % moved)
check(dmoved == (pol not in ("noatime", "nodiratime")), "a listing moved atime: %s" % dmoved)
a = at(f); time.sleep(0.02); read(f)
check((at(f) != a) == (pol == "strictatime"), "a second read moved atime: %s" % (at(f) != a))
PY
"$PY" "$T/atime.py" relatime "$M" || t_fail "atime under relatime"

t_log "an overwrite through the page cache moves mtime and ctime, kept across a remount"
# the daemon leaves the times of such a write to the kernel (its SETATTR):
# they must move all the same, and persist as stat showed them
cat >"$T/owtime.py" <<'PY'
import os, sys, time
f, saved = sys.argv[1], sys.argv[2]
with open(f, "wb") as w:
    w.write(os.urandom(65536)); w.flush(); os.fsync(w.fileno())
os.utime(f, ns=(10**12, 10**12))
ct = os.stat(f).st_ctime_ns
time.sleep(0.02)
fd = os.open(f, os.O_RDWR)
os.pwrite(fd, b"z" * 4096, 8192)
os.fsync(fd)
os.pwrite(fd, b"q" * 4096, 16384)       # no fsync: the close brings it
os.close(fd)
st = os.stat(f)
if st.st_mtime_ns <= 10**12 or st.st_ctime_ns <= ct:
    sys.exit("times after an overwrite: mtime %d ctime %d (was %d)" % (st.st_mtime_ns, st.st_ctime_ns, ct))
open(saved, "w").write("%d %d" % (st.st_mtime_ns, st.st_ctime_ns))
PY
"$PY" "$T/owtime.py" "$M/owtime" "$T/owtime.saved" || t_fail "an overwrite's times"
cp "$M/owtime" "$T/owtime.data"
owtime_check() {
	[ "$(stat -c '%.9Y %.9Z' "$M/owtime" | tr -d .)" = "$(cat "$T/owtime.saved")" ] ||
		t_fail "an overwrite's times after a remount: $(stat -c '%.9Y %.9Z' "$M/owtime"), want $(cat "$T/owtime.saved")"
	cmp "$M/owtime" "$T/owtime.data" || t_fail "an overwrite's data after a remount"
}

t_log "file handles survive a cache drop and a remount"
mkdir "$M/fh"
echo handled >"$M/fh/file"
"$FHANDLE" save "$M/fh/file" "$T/h.file"
"$FHANDLE" save "$M/fh" "$T/h.dir"
handles_check() {    # WHEN
	[ "$("$FHANDLE" cat "$M" "$T/h.file")" = handled ] || t_fail "file handle after $1"
	[ "$("$FHANDLE" cat "$M" "$T/h.dir")" = dir ] || t_fail "directory handle after $1"
}
sync
echo 2 >/proc/sys/vm/drop_caches          # the kernel forgets the inodes
handles_check "a cache drop"
t_umount "$M"
for pol in strictatime noatime nodiratime; do
	opts=allow_other,$pol
	[ "$pol" = noatime ] && opts=$opts,nodev,nosuid
	[ "$pol" = nodiratime ] && opts=$opts,noexec
	t_mount "$IMGS" "$M" -o "$opts"
	"$PY" "$T/atime.py" "$pol" "$M" || t_fail "atime under $pol"
	dev_suid_check "$opts"
	[ "$pol" = strictatime ] && handles_check "a remount" && ia_check "after a remount" &&
		owtime_check
	t_umount "$M"
done
t_mount "$IMGS" "$M"
chattr -i "$M/ia/imm"
chattr -a "$M/ia/app"
rm -r "$M/ia"
rm "$M/fh/file" "$M/owtime"
echo other >"$M/fh/new"                    # may reuse the inode number
out=$("$FHANDLE" cat "$M" "$T/h.file" 2>&1) && t_fail "a handle of a removed file opened: $out"
case $out in *ESTALE*) ;; *) t_fail "a handle of a removed file: $out, want ESTALE" ;; esac
t_umount "$M"

t_log "close(2) costs no FLUSH round trip: the first gets ENOSYS, the kernel sends no more"
log_from=$(($(wc -l <"$T/daemon.log") + 1))
t_mount "$IMGS" "$M" -d
mkdir "$M/close"
for i in $(seq 20); do
	echo "closed $i" >"$M/close/$i"
	[ "$(cat "$M/close/$i")" = "closed $i" ] || t_fail "close/$i read back"
done
t_umount "$M"
flushes=$(tail -n +"$log_from" "$T/daemon.log" | grep -c 'opcode: FLUSH' || true)
releases=$(tail -n +"$log_from" "$T/daemon.log" | grep -c 'opcode: RELEASE ' || true)
[ "$releases" -ge 20 ] || t_fail "$releases RELEASEs logged for 40 closes: the log is not the debug log"
[ "$flushes" -le 1 ] || t_fail "$flushes FLUSH requests for 40 closes, want at most 1"
t_mount "$IMGS" "$M"
for i in $(seq 20); do
	[ "$(cat "$M/close/$i")" = "closed $i" ] || t_fail "close/$i after a remount"
done
rm -r "$M/close"
t_umount "$M"

t_log "the filesystem is consistent after all of it"
rc=0; "$RAIDFS_BIN/fsck.raidfs" -n -f "$IMGS" >"$T/fsck.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/fsck.out"; t_fail "fsck -n -f: exit $rc"; }
