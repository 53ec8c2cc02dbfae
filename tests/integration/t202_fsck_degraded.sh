#!/bin/bash
# A member lost: fsck -n reads everything through reconstruction and says
# the array is degraded (exit 4, nothing written), fsck -p warns (exit 0,
# nothing written); --rebuild onto a new
# blank image named in its place (exit 1); then fsck finds a fully
# redundant array (exit 0), and with a different member removed every
# file still reads back intact.
. "$(dirname "$0")/lib.sh"
t_setup
FSCK=$RAIDFS_BIN/fsck.raidfs

t_images 4 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"
mkdir "$T/mnt/d"
for i in 1 2 3 4 5; do head -c $((i * 700000)) /dev/urandom >"$T/mnt/d/f$i"; done
t_tree_sum "$T/mnt" >"$T/tree.before"
t_umount "$T/mnt"

t_log "member 2 deleted: fsck -n reads through reconstruction, exit 4"
rm "${IMG_LIST[2]}"
sha256sum "${IMG_LIST[0]}" "${IMG_LIST[1]}" "${IMG_LIST[3]}" >"$T/sums"
rc=0; "$FSCK" -n "$IMGS" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 4 ] || { cat "$T/out"; t_fail "degraded fsck -n: exit $rc, want 4"; }
grep -q "DEGRADED" "$T/out" || t_fail "not reported degraded"
grep -q "10 inodes\|7 inodes" "$T/out" || { cat "$T/out"; t_fail "phase 3 did not read the tree"; }
grep -q "0 unrecoverable" "$T/out" || t_fail "reconstruction failed"
sha256sum -c --quiet "$T/sums" || t_fail "fsck -n changed an image"

# -p is the boot's check (fsck -A): a degraded array whose every block
# reads is a warning, not exit 4, which stopped the boot at a shell over
# one dead disk; it rebuilds nothing and writes nothing
t_log "fsck -p, a blank disk in member 2's place: exit 0 and a warning"
truncate -s 64M "${IMG_LIST[2]}"
sha256sum "${IMG_LIST[@]}" >"$T/sums.p"
rc=0; "$FSCK" -p "$IMGS" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/out"; t_fail "degraded fsck -p: exit $rc, want 0"; }
grep -q "WARNING: the array runs degraded" "$T/out" || { cat "$T/out"; t_fail "fsck -p: no warning"; }
# its last word is not "clean" alone (x1's note)
tail -1 "$T/out" | grep -q ": clean, the array DEGRADED$" || { cat "$T/out"; t_fail "fsck -p: verdict"; }
sha256sum -c --quiet "$T/sums.p" || t_fail "fsck -p changed an image"
rm "${IMG_LIST[2]}"

t_log "--rebuild onto a new image in its place: exit 1"
NEW=$T/new2.img
truncate -s 64M "$NEW"
SRC="${IMG_LIST[0]}:${IMG_LIST[1]}:$NEW:${IMG_LIST[3]}"
rc=0; "$FSCK" -y --rebuild "$NEW" "$SRC" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 1 ] || { cat "$T/out"; t_fail "--rebuild: exit $rc, want 1"; }
grep -q "rebuild finished" "$T/out" || t_fail "no rebuild report"
rc=0; "$FSCK" -n -f "$SRC" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/out"; t_fail "fsck after rebuild: exit $rc, want 0"; }
rc=0; "$FSCK" -y --rebuild "$NEW" "$SRC" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 8 ] || t_fail "--rebuild with nothing missing: exit $rc, want 8"

t_log "now member 0 removed: every file reads through the rebuilt member"
rm "${IMG_LIST[0]}"
t_mount "$SRC" "$T/mnt" -o ro
t_tree_sum "$T/mnt" >"$T/tree.after"
diff "$T/tree.before" "$T/tree.after" || t_fail "contents differ after rebuild"
t_umount "$T/mnt"

# An array that cannot be assembled is not checked: exit 8 alone, whether
# the member it lacks shrank (it said 12) or is blank (8): a tester's find
t_log "not assemblable: exit 8 for a shrunk member as for a blank one"
truncate -s 24M "$T/r0a.img" "$T/r0b.img"
"$RAIDFS_BIN/mkfs.raidfs" -q -f -l 0 "$T/r0a.img" "$T/r0b.img" >/dev/null 2>&1 || t_fail "mkfs raid0"
truncate -s 20M "$T/r0b.img"
for mode in -n -y; do
	rc=0; "$FSCK" $mode "$T/r0a.img:$T/r0b.img" >"$T/out" 2>&1 || rc=$?
	[ $rc -eq 8 ] || { cat "$T/out"; t_fail "fsck $mode, a RAID 0 member shrunk: exit $rc, want 8"; }
done
truncate -s 24M "$T/r0b.img"
dd if=/dev/zero of="$T/r0b.img" bs=1M count=24 conv=notrunc status=none
rc=0; "$FSCK" -n "$T/r0a.img:$T/r0b.img" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 8 ] || { cat "$T/out"; t_fail "fsck -n, a RAID 0 member blank: exit $rc, want 8"; }
