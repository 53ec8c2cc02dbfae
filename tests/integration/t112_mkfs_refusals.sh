#!/bin/bash
# Everything mkfs.raidfs must refuse before it writes a byte: garbage
# options (inode maximums included), too few members for the level, the same member twice (by name,
# symlink, hard link, loop device over the file), a missing member, a
# directory, a member too small, a read-only member, a -C target that is a
# member.  Each: exit 1, a message that says what is wrong, every image
# bit-for-bit unchanged.
. "$(dirname "$0")/lib.sh"

# m_refuses PATTERN ARGS...: mkfs.raidfs ARGS exits 1, says PATTERN (an
# extended regex) on stderr, and leaves every image as it was.
m_refuses() {
	local pat=$1 rc=0
	shift
	m_sums >"$T/before"
	"$MKFS" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ $rc -eq 1 ] || t_fail "mkfs.raidfs $*: exit $rc, expected 1 ($(cat "$T/err"))"
	grep -qE -- "$pat" "$T/err" || t_fail "mkfs.raidfs $*: stderr lacks /$pat/: $(cat "$T/err")"
	grep -q Sanitizer "$T/err" && t_fail "mkfs.raidfs $*: sanitizer report: $(cat "$T/err")"
	m_sums | cmp -s - "$T/before" || t_fail "mkfs.raidfs $*: an image changed"
	[ -s "$T/out" ] && t_fail "mkfs.raidfs $*: printed a plan while failing: $(cat "$T/out")"
	return 0
}
m_setup
cd "$T"
for i in 0 1 2 3; do truncate -s 16M "m$i.img"; done
# one member holds an old array, so "unchanged" also covers its superblock
"$MKFS" -q -l 1 m3.img m2.img || t_fail "setup mkfs"
M3=(m0.img m1.img m2.img)

t_log "garbage options"
m_refuses "-l 7: not a RAID level" -l 7 "${M3[@]}"
m_refuses "-l raid: not a RAID level" -l raid "${M3[@]}"
m_refuses "-l 05: not a RAID level" -l 05 "${M3[@]}"
m_refuses "-c 3K: the chunk size must be a power of two from 4K to 1M" -c 3K "${M3[@]}"
m_refuses "-c 2M: the chunk size must be a power of two" -c 2M "${M3[@]}"
m_refuses "-c 2K: the chunk size must be a power of two" -c 2K "${M3[@]}"
m_refuses "-c 0: the chunk size must be" -c 0 "${M3[@]}"
m_refuses "-c abc: not a size" -c abc "${M3[@]}"
m_refuses "-c 64Q: not a size" -c 64Q "${M3[@]}"
m_refuses "-c -64K: not a size" -c -64K "${M3[@]}"
m_refuses "-U nope: not a UUID" -U nope "${M3[@]}"
m_refuses "nil UUID" -U 00000000-0000-0000-0000-000000000000 "${M3[@]}"
m_refuses "label is 64 bytes long; at most 63" -L "$(printf 'x%.0s' $(seq 64))" "${M3[@]}"
m_refuses "-N 0: not a number from 1" -N 0 "${M3[@]}"
m_refuses "-N x: not a number" -N x "${M3[@]}"
m_refuses "-i 512: not a number from 1024" -i 512 "${M3[@]}"
m_refuses "-N and -i both set the most files" -N 100 -i 4096 "${M3[@]}"
m_refuses "unknown option -Z" -Z "${M3[@]}"
m_refuses "unknown option --bogus" --bogus "${M3[@]}"
m_refuses "option -l needs an argument" "${M3[@]}" -l
m_refuses "no members given" -l 5
m_refuses "no members given"
"$MKFS" --help | grep -q "^Usage: mkfs.raidfs" || t_fail "--help"

t_log "too few members for the level (spares do not count)"
m_refuses "RAID 0 needs at least 2 members; 1 given" -l 0 m0.img
m_refuses "RAID 1 needs at least 2 members; 1 given" -l 1 m0.img
m_refuses "RAID 4 needs at least 3 members; 2 given" -l 4 m0.img m1.img
m_refuses "RAID 5 needs at least 3 members; 2 given \(spares do not count\)" -l 5 -s m2.img m0.img m1.img
m_refuses "RAID 6 needs at least 4 members; 3 given" -l 6 "${M3[@]}"
m_refuses "RAID 10 needs at least 2 members; 1 given" -l 10 m0.img

t_log "the same member twice"
ln -s m1.img sym.img
ln m1.img hard.img
m_refuses "m1.img is given twice" m0.img m1.img m1.img
m_refuses "m1.img and \./m1.img are the same file \(a symlink, or another spelling" m0.img m1.img ./m1.img
m_refuses "m1.img and sym.img are the same file \(a symlink" m0.img m1.img sym.img
m_refuses "m1.img and hard.img are the same file \(hard links\)" m0.img m1.img hard.img
m_refuses "m1.img and hard.img are the same file \(hard links\)" -s hard.img m0.img m1.img m2.img
L=$(losetup -f --show m2.img) || t_fail "losetup"
T_LOOPS+=("$L")
m_refuses "m2.img and $L are the same storage: one is a loop device over the other" m0.img m2.img "$L"
m_refuses "$L is given twice" m0.img "$L" "$L"
losetup -d "$L"

t_log "missing, not a file, too small"
m_refuses "nothere.img: no such file or device" m0.img m1.img nothere.img
m_refuses "nothere.img: no such file or device.*|.*also.img: no such" m0.img nothere.img also.img
grep -q "also.img: no such file" "$T/err" || t_fail "every missing member must be named"
mkdir adir
m_refuses "adir: is a directory" m0.img m1.img adir
mkfifo afifo
m_refuses "afifo: is neither a regular file nor a block device" m0.img m1.img afifo
truncate -s 1M small.img
m_refuses "small.img is too small \(1 MiB\): a raid5 array with 64 KiB chunks needs at least [0-9.]+ MiB" m0.img m1.img small.img
grep -q "m0.img is too small" "$T/err" && t_fail "a big enough member called too small"
: >empty.img
m_refuses "empty.img: is empty" m0.img m1.img empty.img
head -c 1267 /dev/urandom >tiny.img
m_refuses "tiny.img: is smaller than one block \(1267 bytes\)" m0.img m1.img tiny.img
truncate -s 3M small.img   # big enough for raidcore, not for the filesystem
m_refuses "too little for the filesystem" m0.img m1.img small.img

t_log "a read-only member"
L=$(losetup -r -f --show m2.img) || t_fail "losetup -r"
T_LOOPS+=("$L")
m_refuses "$L: cannot be opened for writing" m0.img m1.img "$L"
losetup -d "$L"

t_log "-C must not replace a member or a file that is not a config"
m_refuses "-C m2.img: is one of the members" -C m2.img "${M3[@]}"
head -c 100 /dev/zero >notconf.img
m_refuses "-C notconf.img: exists and is not a configuration file" -C notconf.img "${M3[@]}"
m_refuses "-C /nonexistent-dir/x.conf: cannot write in /nonexistent-dir: No such file" -C /nonexistent-dir/x.conf "${M3[@]}"
printf 'array {\n\tmembers = { "/elsewhere/a.img" }\n}\n' >other.conf
m_refuses "-C other.conf: exists \(a configuration file, maybe another array's\); give -f to replace it" -C other.conf "${M3[@]}"
grep -q elsewhere other.conf || t_fail "other.conf replaced without -f"
ls ./*.mkfs.* /nonexistent-dir 2>/dev/null && t_fail "temporary config file left behind"

t_log "an array made again with its uuid (mkfs -U): a member of the old one is refused"
U=11111111-2222-3333-4444-555555555555
rm -f ./*.img
truncate -s 64M r0.img r1.img
"$MKFS" -q -l 1 -U $U r0.img r1.img || t_fail "mkfs -U"
cp --sparse=always r1.img old1.img
sleep 0.01
"$MKFS" -q -f -l 1 -U $U r0.img r1.img || t_fail "mkfs -f -U again"
m_sums >"$T/before"
rc=0
"$RAIDFS_BIN/fsck.raidfs" -y "$T/r0.img:$T/old1.img" >"$T/out" 2>&1 || rc=$?
[ $rc -ge 8 ] || t_fail "fsck -y over two creations exited $rc: $(cat "$T/out")"
grep -q "different mkfs runs" "$T/out" || t_fail "fsck: $(cat "$T/out")"
if m_can_mount; then
	mkdir -p "$T/mnt"
	rc=0
	"$RAIDFS" -f "$T/r0.img:$T/old1.img" "$T/mnt" >"$T/out" 2>&1 || rc=$?
	[ $rc -ne 0 ] || { fusermount3 -u "$T/mnt"; t_fail "mounted over two creations"; }
	grep -q "different mkfs runs" "$T/out" || t_fail "mount: $(cat "$T/out")"
fi
m_sums | cmp -s - "$T/before" || t_fail "an image changed"
t_log "ok"
