#!/bin/bash
# Two members corrupt in the same RAID 5 row: beyond what single parity can
# repair.  fsck reports it as unrecoverable with the file's path and byte
# range (exit 4, also with -y), and every other file is intact.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

f_pattern_array 5 50 120 8

# one row of file1 (its block 60's row), on two members: the block, and
# the row's parity (another data block of the row would be a second lost
# block; a parity block may look like block 60 too)
img0=
while read -r p o; do
	[ "$(dd if="$p" bs=1 skip="$o" count=11 status=none)" = F001B000060 ] || continue
	other=$(f_parity_of "$o" "${IMG_LIST[@]}")
	[ "$other" != "$p" ] || continue
	img0=$p off=$o
	break
done < <("$PY" "$TESTS_DIR/fsck_locate.py" data:1 "${IMG_LIST[@]}")
[ -n "$img0" ] || t_fail "file1 block 60 not found"
t_log "corrupting $(basename "$img0") and $(basename "$other") at $off"
for img in "$img0" "$other"; do
	printf 'CORRUPTCORRUPT!!' | dd of="$img" bs=1 seek=$((off + 100)) conv=notrunc status=none
done

rc=0; "$FSCK" -n -f "$IMGS" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 4 ] || { cat "$T/out"; t_fail "fsck -n: exit $rc, want 4"; }
grep -q "[1-9][0-9]* unrecoverable" "$T/out" || { cat "$T/out"; t_fail "not reported unrecoverable"; }
grep -q "^  /file1: bytes 245760-249855 unreadable" "$T/out" ||
	{ cat "$T/out"; t_fail "damage report does not name /file1 block 60"; }
grep -q "/file0\|/file2" "$T/out" && t_fail "an intact file is named"

rc=0; "$FSCK" -y -f "$IMGS" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 4 ] || { cat "$T/out"; t_fail "fsck -y: exit $rc, want 4 (left uncorrected)"; }
grep -q "^  /file1: bytes" "$T/out" || t_fail "fsck -y lost the damage report"

t_log "the other files are intact; file1 fails only in its damaged block"
t_mount "$IMGS" "$T/mnt" -o ro
"$PY" - "$T/mnt" <<'PY'
import os, sys
d = sys.argv[1]
for n, blocks in enumerate([50, 120, 8]):
    with open(os.path.join(d, "file%d" % n), "rb", buffering=0) as f:
        for k in range(blocks):
            want = (b"F%03dB%06d" % (n, k)).ljust(4096, b".")
            try:
                f.seek(k * 4096); got = f.read(4096)
            except OSError:
                assert (n, k) == (1, 60), "file%d block %d unreadable" % (n, k)
                continue
            assert (n, k) != (1, 60), "the damaged block read back"
            assert got == want, "file%d block %d differs" % (n, k)
PY
t_umount "$T/mnt"

# Lost blocks that nothing uses (a deleted file's, in free space) hold
# nothing to lose: fsck -y rewrites them as zeros, after which every
# check is clean - at RAID 0, and in a RAID 5 row lost on two members.
# Before, every fsck (the boot's -p too) exited 4 over them for good.
for level in 0 5; do
	t_log "RAID $level: lost blocks in free space rewritten by fsck -y"
	rm -f "$T"/*.img
	t_images 3 64M
	t_mkfs $level 64K "${IMG_LIST[@]}"
	t_mount "$IMGS" "$T/mnt"
	"$PY" -c 'import os, sys
with open(sys.argv[1], "wb") as f:
    f.write(b"GONEGONE" * (512 * 64)); f.flush(); os.fsync(f.fileno())' "$T/mnt/gone"
	echo keep >"$T/mnt/keep"
	rm "$T/mnt/gone"
	t_umount "$T/mnt"
	# the first block of the deleted file on member 0, and at RAID 5 the
	# same row's block on member 1 (a second lost block of the row)
	"$PY" - $level "${IMG_LIST[@]}" <<'PY' || t_fail "the deleted file's blocks not found"
import sys
level, imgs = sys.argv[1], sys.argv[2:]
with open(imgs[0], "r+b") as f:
    data = f.read()
off = data.find(b"GONEGONE" * 2, 1 << 20)
assert off > 0 and off % 4096 == 0, off
for p in imgs[:1] if level == "0" else imgs[:2]:
    with open(p, "r+b") as f:
        f.seek(off); f.write(b"X" * 100)
PY
	f_rc 4 -n -f "$IMGS"
	grep -q "[1-9] unrecoverable" "$T/out" || { cat "$T/out"; t_fail "RAID $level: nothing lost"; }
	f_rc 1 -y -f "$IMGS"
	grep -q "in free space: [12] rewritten as zeros" "$T/out" || { cat "$T/out"; t_fail "RAID $level: not rewritten"; }
	f_rc 0 -n -f "$IMGS"
	f_rc 0 -p "$IMGS"
	t_mount "$IMGS" "$T/mnt" -o ro
	[ "$(cat "$T/mnt/keep")" = keep ] || t_fail "RAID $level: keep lost"
	t_umount "$T/mnt"
done

# A stripe holding lost blocks of a file and lost free blocks beside them
# (a degraded RAID 5): the free ones cannot be zeroed (their rows' parity
# needs the lost data of the missing member's column, and the stripe
# cannot be written whole without the file's lost blocks), and nothing
# may be left half written.  fsck -y left such writes dirty in the cache,
# their commit failed, and so did the close: "check not completed", exit
# 12, after a complete check (a tester's find).  Now: exit 4, the next
# -n agrees, the file's other blocks read.
t_log "degraded RAID 5: lost free blocks beside lost file blocks: -y exits 4"
rm -f "$T"/*.img
t_images 3 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"
# two whole stripes (2 x 2 chunks of 16 blocks), then cut to 56 blocks:
# blocks 56-63 are free and hold data (written ones are lost when
# garbled; never-written ones read as zeros)
f_pattern_files "$T/mnt" 64
sync -f "$T/mnt/file0"
truncate -s $((56 * 4096)) "$T/mnt/file0"
t_umount "$T/mnt"
where() {
	"$PY" "$TESTS_DIR/fsck_locate.py" data:0 "${IMG_LIST[@]}" | while read -r p o; do
		[ "$(dd if="$p" bs=1 skip="$o" count=11 status=none)" = "$1" ] && echo "$p $o"
	done
}
read -r img off < <(where F000B000055)
read -r gone goff < <(where F000B000039)
[ -n "$img" ] && [ "$goff" = "$off" ] && [ "$gone" != "$img" ] ||
	t_fail "blocks 39 and 55 are not in one row on two members: $img $off, $gone $goff"
# block 55 to the end of its chunk (55-63), on its member; block 39's
# member left out: those rows keep only parity
dd if=/dev/urandom of="$img" bs=4096 seek=$((off / 4096)) count=9 conv=notrunc status=none
src=
for i in "${IMG_LIST[@]}"; do
	[ "$i" = "$gone" ] || src=${src:+$src:}$i
done
t_log "blocks 55-63 garbled on $(basename "$img"), $(basename "$gone") left out"
f_rc 4 -y -f "$src"
grep -q "in free space: 0 rewritten" "$T/out" || { cat "$T/out"; t_fail "no free lost block met"; }
! grep -q "check not completed" "$T/out" || { cat "$T/out"; t_fail "-y did not complete"; }
f_rc 4 -n -f "$src"
t_mount "$src" "$T/mnt" -o ro,degraded=allow
"$PY" - "$T/mnt/file0" <<'PY' || t_fail "file0's first blocks"
import sys
with open(sys.argv[1], "rb", buffering=0) as f:
    for k in range(32):
        f.seek(k * 4096)
        assert f.read(4096) == (b"F000B%06d" % k).ljust(4096, b"."), k
PY
t_umount "$T/mnt"
exit 0
