#!/bin/bash
# Damage raidcore vouches for: a block overwritten on every member of a
# RAID 1 with the checksum tables made to agree (array_block.py), as a bug
# above raidcore would leave it, so only the filesystem's own checks see
# it.  The filesystem superblock's copy 0: fsck -n -f reports it (exit 4,
# nothing written), fsck -y -f rewrites it from copy 1 (exit 1), and the
# next fsck -n -f finds nothing; every file reads back.  fsck said "0
# problems", clean, and never rewrote it (a tester's find).
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

t_images 2 64M
t_mkfs 1 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"
t_pattern_files "$T/mnt" 3 40 7
t_tree_sum "$T/mnt" >"$T/tree.before"
t_umount "$T/mnt"

AB="$PY $TESTS_DIR/array_block.py"
$AB fill 0 90 "${IMG_LIST[@]}" ||
	t_fail "array_block.py"
t_sums "${IMG_LIST[@]}" >"$T/before"
f_rc 4 -n -f "$IMGS"
grep -q " 0 checksum errors" "$T/out" ||
	{ cat "$T/out"; t_fail "raidcore saw the damage: it is not consistent"; }
grep -q "superblock copy 0 is damaged: rewritten from copy 1" "$T/out" ||
	{ cat "$T/out"; t_fail "fsck -n -f did not report superblock copy 0"; }
t_sums "${IMG_LIST[@]}" >"$T/after"
cmp -s "$T/before" "$T/after" || t_fail "fsck -n wrote"
f_rc 1 -y -f "$IMGS"
f_rc 0 -n -f "$IMGS"
grep -q "copy 0 is damaged" "$T/out" && { cat "$T/out"; t_fail "copy 0 still damaged"; }
t_mount "$IMGS" "$T/mnt" -o ro
t_tree_sum "$T/mnt" >"$T/tree.after"
t_umount "$T/mnt"
cmp -s "$T/tree.before" "$T/tree.after" || t_fail "files differ"

# One member's checksum table says "never written" for a block its
# mirror holds (the entry zeroed, the table block resealed): fsck -n -f
# said clean, and -y repaired it with exit 0 (a tester's find)
t_log "a checksum entry that falsely says never written"
blk=$($AB inode 1 "${IMG_LIST[0]}") || t_fail "inode block not found"
$AB unwritten "$blk" "${IMG_LIST[1]}" || t_fail "array_block.py unwritten"
f_rc 4 -n -f "$IMGS"
f_rc 1 -y -f "$IMGS"
f_rc 0 -n -f "$IMGS"

# A member superblock whose checksum holds and whose fields contradict
# each other (data_offset moved by 256 blocks in every copy): named so,
# not "holds data (no raidfs member)" (a tester's find)
t_log "a member superblock whose fields contradict each other"
cp --sparse=always "${IMG_LIST[1]}" "$T/m1.keep"
$AB sb-add 104 256 "${IMG_LIST[1]}" || t_fail "array_block.py sb-add"
f_rc 4 -n "$IMGS"
grep -q "a raidfs superblock whose fields contradict each other" "$T/out" ||
	{ cat "$T/out"; t_fail "the member's superblock not named"; }
grep -q "holds data (no raidfs member" "$T/out" &&
	{ cat "$T/out"; t_fail "called no raidfs member"; }
mv "$T/m1.keep" "${IMG_LIST[1]}"

# The inode chunk map pointing chunk 0 at a copy of chunk 1's inodes
# (inodes 1-15 read as 17-31): the map is damaged, which fsck does not
# repair; it must not clear inodes 1-15 as damaged either (fsck -y
# cleared 30 inodes, the root's among them, for one wrong pointer, and
# wrote the clears into the other chunk's block: a tester's find)
t_log "an inode chunk mapped onto another chunk's inodes: reported, nothing cleared"
t_mount "$IMGS" "$T/mnt"
mkdir "$T/mnt/more"
for i in $(seq 1 20); do echo "file $i" >"$T/mnt/more/f$i"; done
t_umount "$T/mnt"
c0=$($AB inode 1 "${IMG_LIST[0]}") && c1=$($AB inode 17 "${IMG_LIST[0]}") ||
	t_fail "inode blocks not found"
$AB copy "$c1" "$c0" "${IMG_LIST[@]}" || t_fail "array_block.py copy"
t_sums "${IMG_LIST[@]}" >"$T/before"
f_rc 4 -n -f "$IMGS"
grep -q "holds inode 17 where the inode chunk map puts inode 1: the map is damaged, not repairable" "$T/out" ||
	{ cat "$T/out"; t_fail "fsck -n -f did not report the chunk map"; }
f_rc 4 -y -f "$IMGS"
grep -q "cleared\|made anew" "$T/out" && { cat "$T/out"; t_fail "fsck -y cleared inodes"; }
[ "$($AB inode 17 "${IMG_LIST[0]}")" = "$c1" ] || t_fail "chunk 1's block changed"
exit 0
