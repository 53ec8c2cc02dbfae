#!/bin/bash
# The filesystem's journal lost beyond redundancy (RAID 0: one member's
# copy of a block damaged).
#  - Its journal superblock, after a crash (kill -9) left transactions in
#    the ring: the daemon refuses to mount, as before, and points at fsck;
#    fsck used to refuse as well ("cannot be mounted"), for good.  Now -n
#    tells it and writes nothing, -p refuses (clearing the journal loses
#    its transactions), -y clears the journal and repairs the rest; the
#    next -n -f is clean, the daemon mounts, and every file still there
#    reads back whole.
#  - A ring block replay never reads (the journal is empty after a clean
#    unmount): phase 2 lists it, and it used to keep every fsck at exit 4
#    (outside the data area, never rewritten); -y writes it as zeros.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

LOC=("$PY" "$TESTS_DIR/fsck_locate.py")
t_images 3 64M
t_mkfs 0 64K "${IMG_LIST[@]}"

# damage IMAGE OFFSET: 64 bytes of the block at OFFSET (RAID 0: lost)
damage() {
	"$PY" - "$1" "$2" <<'PY'
import sys
p, off = sys.argv[1], int(sys.argv[2])
with open(p, "r+b") as f:
    f.seek(off + 4000)
    f.write(b"X" * 64)
PY
}

# check_files: $n = the files d/fI there, each read back whole
check_files() {
	local i
	t_mount "$IMGS" "$T/mnt" -o ro
	n=0
	for i in $(seq 1 60); do
		[ -e "$T/mnt/d/f$i" ] || continue
		[ "$(cat "$T/mnt/d/f$i")" = "file $i" ] || t_fail "d/f$i reads wrong"
		n=$((n + 1))
	done
	t_umount "$T/mnt"
}

t_log "a crash leaves transactions in the journal, then its superblock is lost"
t_mount "$IMGS" "$T/mnt"
mkdir "$T/mnt/d"
for i in $(seq 1 30); do echo "file $i" >"$T/mnt/d/f$i"; done
sync "$T/mnt/d"/*
t_umount "$T/mnt"
t_mount "$IMGS" "$T/mnt"
for i in $(seq 31 60); do echo "file $i" >"$T/mnt/d/f$i"; done
"$PY" -c 'import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY); os.fsync(fd); os.close(fd)' "$T/mnt/d"/f* "$T/mnt/d"
pid=${T_PID_OF[$T/mnt]}
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
RAIDFS_UMOUNT_WAIT=10 t_umount_idle "$T/mnt" 2>/dev/null || umount -l "$T/mnt"
read -r img off < <("${LOC[@]}" journal "${IMG_LIST[@]}" | head -n 1)
[ -n "$img" ] || t_fail "the journal superblock not found"
damage "$img" "$off"

if t_try_mount "$IMGS" "$T/mnt"; then
	t_fail "the daemon mounted a filesystem whose journal it cannot read"
fi
grep -q "fsck" "$T/daemon.log" || { cat "$T/daemon.log"; t_fail "the daemon does not point at fsck"; }
sha256sum "${IMG_LIST[@]}" >"$T/sums"
f_rc 4 -n -f "$IMGS"
grep -q "the journal superblock cannot be read: .* the journal is cleared - not done: -n changes nothing" "$T/out" ||
	{ cat "$T/out"; t_fail "fsck -n: the lost journal not told"; }
sha256sum -c --quiet "$T/sums" || t_fail "fsck -n wrote"
f_rc 4 -p -f "$IMGS"
grep -q "UNEXPECTED INCONSISTENCY" "$T/out" || { cat "$T/out"; t_fail "fsck -p cleared the journal"; }
# (-p may settle the array's own journal: that loses nothing; -y below
# must still find the filesystem's journal to clear)
f_rc 1 -y -f "$IMGS"
grep -q "journal: cleared and started anew" "$T/out" || { cat "$T/out"; t_fail "fsck -y: the journal not cleared"; }
f_rc 0 -n -f "$IMGS"
grep -q "reached; 0 problems" "$T/out" || { cat "$T/out"; t_fail "not clean after fsck -y"; }
check_files
kept=$n
[ $kept -ge 30 ] || t_fail "$kept of 60 files kept (the 30 before the checkpoint are home)"
t_log "  $kept of 60 files kept"
# the daemon mounts and writes again
t_mount "$IMGS" "$T/mnt"
echo again >"$T/mnt/again"
t_umount "$T/mnt"
f_rc 0 -n -f "$IMGS"

t_log "a journal ring block replay never reads is lost: -y rewrites it"
read -r img off < <("${LOC[@]}" jdesc "${IMG_LIST[@]}" | head -n 1)
[ -n "$img" ] || t_fail "no journal descriptor found"
damage "$img" "$off"
f_rc 4 -n -f "$IMGS"
f_rc 1 -y -f "$IMGS"
grep -q "in free space: 1 rewritten as zeros\|rewritten as zeros" "$T/out" ||
	{ cat "$T/out"; t_fail "fsck -y: the ring block not rewritten"; }
f_rc 0 -n -f "$IMGS"
check_files
[ $n -eq $kept ] || t_fail "$n files after the ring block's repair, $kept before"
exit 0
