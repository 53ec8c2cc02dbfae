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
f_damage "$img" "$off"

if t_try_mount "$IMGS" "$T/mnt"; then
	t_fail "the daemon mounted a filesystem whose journal it cannot read"
fi
grep -q "fsck" "$T/daemon.log" || { cat "$T/daemon.log"; t_fail "the daemon does not point at fsck"; }
# (-p may settle the array's own journal, which loses nothing; -y must
# still find the filesystem's journal to clear)
f_lossy "$IMGS" 4 \
	"the journal superblock cannot be read: .* the journal is cleared - not done: -n changes nothing" \
	"journal: cleared and started anew"
f_files_ok "$IMGS" 60
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
f_damage "$img" "$off"
f_rc 4 -n -f "$IMGS"
f_rc 1 -y -f "$IMGS"
grep -q "in free space: 1 rewritten as zeros\|rewritten as zeros" "$T/out" ||
	{ cat "$T/out"; t_fail "fsck -y: the ring block not rewritten"; }
f_rc 0 -n -f "$IMGS"
f_files_ok "$IMGS" 60
[ $n -eq $kept ] || t_fail "$n files after the ring block's repair, $kept before"
exit 0
