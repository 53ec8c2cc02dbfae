#!/bin/bash
# fsck.raidfs and the member list an administrator types.
# - A path in the list that does not exist is a typo, as for a mount:
#   fsck -y (and -p) refuse with exit 8, name it and write nothing, even
#   with damage to repair (it repaired around it: the array was written
#   degraded and the real member left stale, to be rebuilt in full - a
#   tester's find).  -n still checks without it.  Left out of the list,
#   the member is repaired around.  Damaged superblock copies found
#   beside the typo are not said corrected (exit 8, not 9).
# - fsck right after umount: the daemon may still hold the members a
#   moment; fsck waits, as a mount does (it refused, "in use", exit 8).
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

t_images 4 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
M=("${IMG_LIST[@]}")
t_mount "$IMGS" "$T/mnt"
t_pattern_files "$T/mnt" 8 8
t_tree_sum "$T/mnt" >"$T/tree.before"
t_umount "$T/mnt"

# a block of file0 damaged on the member that holds it
read -r img off < <(t_locate_block 0 3 "${M[@]}")
[ -n "$off" ] || t_fail "file0's block 3 not found on the members"
f_damage "$img" "$off"
typo=$T/m9.img
for i in 0 1 2 3; do [ "${M[$i]}" != "$img" ] && other=$i; done
src=$IMGS
src=${src/${M[$other]}/$typo}

t_sums "${M[@]}" >"$T/before"
for mode in -y -p; do
	f_rc 8 "$mode" -f "$src"
	grep -q "member $typo: No such file or directory: a mistyped path? Nothing was written" "$T/out" ||
		{ cat "$T/out"; t_fail "fsck $mode: no word of the typo"; }
	t_sums "${M[@]}" >"$T/after"
	cmp -s "$T/before" "$T/after" || t_fail "fsck $mode with a typo wrote to the members"
done
f_rc 4 -n -f "$src"
t_sums "${M[@]}" >"$T/after"
cmp -s "$T/before" "$T/after" || t_fail "fsck -n with a typo wrote to the members"

# superblock copies 0 and 1 of a member damaged too: phase 1 names them,
# the typo stops the check, nothing is written: exit 8, not 9 ("errors
# corrected" for copies it never rewrote: a tester's find)
dd if=/dev/zero of="$img" bs=4096 count=2 conv=notrunc status=none
t_sums "${M[@]}" >"$T/before"
f_rc 8 -y -f "$src"
grep -q "superblock copies 0,1 are damaged: the check rewrites them" "$T/out" ||
	{ cat "$T/out"; t_fail "fsck -y: damaged copies not named"; }
t_sums "${M[@]}" >"$T/after"
cmp -s "$T/before" "$T/after" || t_fail "fsck -y with a typo wrote to the members"

# the damage repaired with every member there; the typo never made a
# member stale
f_rc 1 -y -f "$IMGS"
f_rc 0 -n -f "$IMGS"
t_mount "$IMGS" "$T/mnt"
t_tree_sum "$T/mnt" >"$T/tree.after"
cmp -s "$T/tree.before" "$T/tree.after" || t_fail "files differ after the repair"
head -c 100M /dev/urandom >"$T/mnt/big"

# umount, then fsck at once: it waits for the closing daemon
pid=${T_PID_OF[$T/mnt]}
t_umount_idle "$T/mnt" || t_fail "umount"
f_rc 0 -n "$IMGS"
grep -q "in use" "$T/out" && t_log "(fsck found the daemon still closing, and waited)"
wait "$pid" || t_fail "the daemon exited $? after umount"
unset "T_PID_OF[$T/mnt]"
exit 0
