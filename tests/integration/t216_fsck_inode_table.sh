#!/bin/bash
# An inode table block lost beyond redundancy (RAID 0: one member's copy
# damaged): fsck loses the inodes in it and nothing more.
#  - -n names each as cleared, "not done", and writes nothing; exit 4;
#  - -p refuses (clearing inodes loses files): UNEXPECTED INCONSISTENCY;
#  - -y clears them, removes the entries naming them, goes on with the
#    rest (the read error used to stop the whole scan: exit 12, nothing
#    repaired) and writes the block anew; the next -n -f is clean;
#  - every file outside the lost chunk reads back intact.
# And a block bitmap block lost: fsck's mounts take its blocks as used,
# the repair rewrites it, nothing else is lost.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

LOC=("$PY" "$TESTS_DIR/fsck_locate.py")
t_images 3 64M
t_mkfs 0 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"
mkdir "$T/mnt/d"
for i in $(seq 1 60); do echo "file $i" >"$T/mnt/d/f$i"; done
t_umount "$T/mnt"



# chunk 2 holds inodes 32..47: some of the files
# the last hit: the first are copies in the filesystem's journal
read -r img off < <("${LOC[@]}" inodes:2 "${IMG_LIST[@]}" | tail -n 1)
[ -n "$img" ] || t_fail "chunk 2's table block not found"
t_log "inode chunk 2 at $(basename "$img") $off"
f_damage "$img" "$off"

f_lossy "$IMGS" 4 \
	"inode 3[2-9] is unreadable (its table block cannot be read): cleared - not done: -n changes nothing" \
	"repaired: [1-9][0-9]* changes"

t_log "the files outside the lost chunk read back"
f_files_ok "$IMGS" 60
kept=$n
[ $kept -ge 40 ] && [ $kept -lt 60 ] || t_fail "$kept of 60 files kept (one chunk of 16 lost)"
t_log "  $kept of 60 files kept"

# A block bitmap block lost the same way made the filesystem unmountable
# for fsck too ("the filesystem cannot be mounted"), for good: fsck's
# mounts now take its blocks as used and the repair rewrites it.
t_log "a block bitmap block lost: fsck -y rewrites it, every file kept"
read -r img off < <("${LOC[@]}" bbitmap "${IMG_LIST[@]}" | tail -n 1)
[ -n "$img" ] || t_fail "no block bitmap block found"
f_damage "$img" "$off"
f_rc 4 -n -f "$IMGS"
grep -q "block bitmap block [0-9]* is unreadable: rewritten - not done" "$T/out" ||
	{ cat "$T/out"; t_fail "fsck -n: the bitmap block not named"; }
f_rc 1 -y -f "$IMGS"
f_rc 0 -n -f "$IMGS"
f_files_ok "$IMGS" 60
[ $n -eq $kept ] || t_fail "$n files after the bitmap repair, $kept before"

# The root directory's table block lost: fsck said "the root directory is
# damaged: not repairable", exit 4 for good, every file out of reach.
# Now, as e2fsck, the root is made anew (empty) and every inode it no
# longer reaches goes to /lost+found; -p refuses (names are lost).
t_log "the root's table block lost: the root made anew, the rest in lost+found"
# every hit: the home block and the journal's copies of it (idle: the
# filesystem was unmounted cleanly, so phase 4 writes those as zeros)
"${LOC[@]}" inode "${IMG_LIST[@]}" >"$T/hits"
[ -s "$T/hits" ] || t_fail "the root's table block not found"
while read -r img off; do f_damage "$img" "$off"; done <"$T/hits"
# (-p 5: it writes the idle journal copies as zeros, which loses nothing)
f_lossy "$IMGS" "4 5" \
	"the root directory is .*: made anew.* - not done: -n changes nothing" \
	"repaired: [1-9][0-9]* changes"
t_mount "$IMGS" "$T/mnt" -o ro
# each file outside chunk 0 (inodes 16 and up) is in lost+found by number,
# alone or under its directory's number (the directory d kept its entries)
n=0
for f in $(find "$T/mnt/lost+found" -type f); do
	grep -qx "file [0-9]*" "$f" || t_fail "$f reads wrong"
	n=$((n + 1))
done
t_umount "$T/mnt"
[ $n -ge $((kept - 16)) ] || t_fail "$n files found in lost+found, at least $((kept - 16)) expected"
t_log "  $n files in lost+found"
exit 0
