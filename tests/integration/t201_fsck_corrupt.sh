#!/bin/bash
# Corruption on the members, one kind of structure at a time: a file's data
# block on each member, a parity block, the inode table, a directory node,
# the block bitmap, the inode chunk map, the journal superblock, the
# filesystem superblock and a raidcore superblock copy.  For each: fsck -n -f reports it (exit 4) and leaves every
# image unchanged; fsck -y -f repairs it (exit 1); a second fsck -n -f finds
# nothing (exit 0); every file reads back intact.
. "$(dirname "$0")/lib.sh"
t_setup
FSCK=$RAIDFS_BIN/fsck.raidfs
LOC="$PY $TESTS_DIR/fsck_locate.py"

t_images 4 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"
# files whose every 4 KiB block says which file and block it is
"$PY" - "$T/mnt" <<'PY'
import os, sys
d = sys.argv[1]
os.mkdir(os.path.join(d, "sub"))
for n, blocks in enumerate([1, 7, 40, 300, 90]):
    name = os.path.join(d, "sub" if n % 2 else "", "file%d" % n)
    with open(name, "wb") as f:
        for k in range(blocks):
            f.write((b"F%03dB%06d" % (n, k)).ljust(4096, b"."))
PY
t_tree_sum "$T/mnt" >"$T/tree.before"
t_umount "$T/mnt"

# corrupt IMAGE OFFSET: 16 bytes in the middle of the block
corrupt() {
	printf 'CORRUPTCORRUPT!!' | dd of="$1" bs=1 seek=$(($2 + 1000)) conv=notrunc status=none
}

cycle() {
	local what=$1 img=$2 off=$3 rc
	t_log "$what: $(basename "$img") at $off"
	corrupt "$img" "$off"
	sha256sum "${IMG_LIST[@]}" >"$T/sums"
	rc=0; "$FSCK" -n -f "$IMGS" >"$T/out" 2>&1 || rc=$?
	[ $rc -eq 4 ] || { cat "$T/out"; t_fail "$what: fsck -n exit $rc, want 4"; }
	grep -q "($img): 0 read errors, 1 checksum errors" "$T/out" ||
		{ cat "$T/out"; t_fail "$what: the member is not named"; }
	sha256sum -c --quiet "$T/sums" || t_fail "$what: fsck -n changed an image"
	rc=0; "$FSCK" -y -f "$IMGS" >"$T/out" 2>&1 || rc=$?
	[ $rc -eq 1 ] || { cat "$T/out"; t_fail "$what: fsck -y exit $rc, want 1"; }
	grep -q "1 blocks repaired" "$T/out" || { cat "$T/out"; t_fail "$what: no repair counted"; }
	rc=0; "$FSCK" -n -f "$IMGS" >"$T/out" 2>&1 || rc=$?
	[ $rc -eq 0 ] || { cat "$T/out"; t_fail "$what: second fsck -n exit $rc, want 0"; }
}

first() { $LOC "$@" | head -n 1; }

for m in 0 1 2 3; do
	hit=$(first anydata "${IMG_LIST[$m]}")
	[ -n "$hit" ] || t_fail "no file data found on member $m"
	cycle "data block on member $m" $hit
done
hit=$(first parity "${IMG_LIST[@]}"); [ -n "$hit" ] || t_fail "no parity block found"
cycle "parity block" $hit
for kind in inode dirnode bbitmap ichunks journal fssb; do
	hit=$(first $kind "${IMG_LIST[@]}")
	[ -n "$hit" ] || t_fail "no $kind block found on any member"
	cycle "$kind" $hit
done

# A raidcore superblock copy (copy 1, block 1 of member 2): the other
# copy serves, fsck -n names it, fsck -y rewrites both.
t_log "raidcore superblock copy 1 of $(basename "${IMG_LIST[2]}")"
corrupt "${IMG_LIST[2]}" 4096
sha256sum "${IMG_LIST[@]}" >"$T/sums"
rc=0; "$FSCK" -n -f "$IMGS" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 4 ] || { cat "$T/out"; t_fail "sb copy: fsck -n exit $rc, want 4"; }
grep -q "superblock copy 1 is damaged" "$T/out" || { cat "$T/out"; t_fail "sb copy not reported"; }
# found by this assembly, not recorded while the array was in use
! grep -q "recorded while the array was in use" "$T/out" || { cat "$T/out"; t_fail "sb copy: blamed on the array's use"; }
sha256sum -c --quiet "$T/sums" || t_fail "sb copy: fsck -n changed an image"
rc=0; "$FSCK" -y -f "$IMGS" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 1 ] || { cat "$T/out"; t_fail "sb copy: fsck -y exit $rc, want 1"; }
rc=0; "$FSCK" -n -f "$IMGS" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/out"; t_fail "sb copy: second fsck -n exit $rc, want 0"; }

t_log "every file intact"
t_mount "$IMGS" "$T/mnt"
t_tree_sum "$T/mnt" >"$T/tree.after"
diff "$T/tree.before" "$T/tree.after" || t_fail "contents changed"
t_umount "$T/mnt"
