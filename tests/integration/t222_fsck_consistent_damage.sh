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

"$PY" "$TESTS_DIR/array_block.py" 0 90 "${IMG_LIST[@]}" ||
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
exit 0
