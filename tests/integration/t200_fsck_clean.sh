#!/bin/bash
# fsck.raidfs on a healthy array: exit 0 and the images bit-for-bit
# unchanged (clean fast path, -f full check, -n and -p); fsck -t raidfs
# through fsck(8) and an fstab pass field; a mounted array is refused
# (exit 8) before anything is written; usage errors exit 16.
. "$(dirname "$0")/lib.sh"
t_setup
FSCK=$RAIDFS_BIN/fsck.raidfs
[ -x "$FSCK" ] || t_fail "no $FSCK"

t_images 4 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"
mkdir "$T/mnt/dir"
head -c 3000000 /dev/urandom >"$T/mnt/dir/big"
echo small >"$T/mnt/small"
ln -s small "$T/mnt/link"

t_log "mounted: refused with exit 8, nothing written"
sha256sum "${IMG_LIST[@]}" >"$T/sums.mounted"
rc=0; "$FSCK" -n -f "$IMGS" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 8 ] || { cat "$T/out"; t_fail "fsck of a mounted array: exit $rc, want 8"; }
grep -q "mounted" "$T/out" || t_fail "no 'mounted' in: $(cat "$T/out")"
rc=0; "$FSCK" -y -f "$IMGS" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 8 ] || t_fail "fsck -y of a mounted array: exit $rc, want 8"
t_tree_sum "$T/mnt" >"$T/tree.before"
t_umount "$T/mnt"

sha256sum "${IMG_LIST[@]}" >"$T/sums"
for args in "-n" "-n -f" "-f -n -v"; do
	t_log "fsck $args: exit 0"
	rc=0; "$FSCK" $args "$IMGS" >"$T/out" 2>&1 || rc=$?
	[ $rc -eq 0 ] || { cat "$T/out"; t_fail "fsck $args: exit $rc"; }
	grep -q "Phase 1: Members" "$T/out" || t_fail "no phase 1 heading"
done
grep -q "Phase 4: Damage report" "$T/out" || t_fail "-f ran no phase 4"
grep -q "5 inodes" "$T/out" || t_fail "phase 3 did not see the 5 inodes: $(cat "$T/out")"
t_log "-n (fast path and full) wrote nothing"
sha256sum -c --quiet "$T/sums" || t_fail "fsck -n changed an image"
t_log "the clean fast path writes nothing even with -p"
rc=0; "$FSCK" -p "$IMGS" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/out"; t_fail "fsck -p: exit $rc"; }
grep -q "skipped" "$T/out" || t_fail "no fast path: $(cat "$T/out")"
sha256sum -c --quiet "$T/sums" || t_fail "fsck -p on a clean array changed an image"
for args in "-p -f" "-y -f"; do
	t_log "fsck $args: exit 0"
	rc=0; "$FSCK" $args "$IMGS" >"$T/out" 2>&1 || rc=$?
	[ $rc -eq 0 ] || { cat "$T/out"; t_fail "fsck $args: exit $rc"; }
done

t_log "fsck -t raidfs and an fstab pass field (fsck -A)"
mkdir -p "$T/bin"
ln -s "$FSCK" "$T/bin/fsck.raidfs"
rc=0; PATH="$T/bin:$PATH" fsck -t raidfs -n "$IMGS" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/out"; t_fail "fsck -t raidfs: exit $rc"; }
grep -q "Phase 1" "$T/out" || t_fail "fsck -t raidfs did not run fsck.raidfs"
echo "$IMGS $T/mnt raidfs defaults 0 2" >"$T/fstab"
rc=0; PATH="$T/bin:$PATH" FSTAB_FILE="$T/fstab" fsck -A -n >"$T/out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/out"; t_fail "fsck -A: exit $rc"; }
grep -q "Phase 1" "$T/out" || t_fail "fsck -A did not check the raidfs line: $(cat "$T/out")"

t_log "usage errors: exit 16"
for args in "" "-n -y $IMGS" "--bogus $IMGS" "$IMGS extra" "-n --rebuild $T/x $IMGS"; do
	rc=0; "$FSCK" $args >/dev/null 2>&1 || rc=$?
	[ $rc -eq 16 ] || t_fail "fsck.raidfs $args: exit $rc, want 16"
done
"$FSCK" --help | grep -q Usage || t_fail "--help"

t_log "after all that the files are intact"
t_mount "$IMGS" "$T/mnt"
t_tree_sum "$T/mnt" >"$T/tree.after"
diff "$T/tree.before" "$T/tree.after" || t_fail "contents changed"
t_umount "$T/mnt"
