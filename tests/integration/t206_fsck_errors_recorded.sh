#!/bin/bash
# Errors seen while the array was in use are recorded on the members (the
# ERRORS flag), and fsck's clean fast path is then not taken, as e2fsck
# does for a filesystem in its error state: a block corrupted behind the
# array's back and read (and repaired) through a mount, then plain fsck -n
# does the full check (images unchanged), plain fsck -p does it too and,
# leaving nothing uncorrected, clears the record, after which plain fsck -n
# takes the fast path again.  The same with fsck -y.  A pass that leaves
# errors uncorrected keeps the record: plain fsck -n checks in full again.
. "$(dirname "$0")/lib.sh"
t_setup
FSCK=$RAIDFS_BIN/fsck.raidfs

t_images 4 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"
"$PY" - "$T/mnt" <<'PY'
import os, sys
for n, blocks in enumerate([30, 120, 8]):
    with open(os.path.join(sys.argv[1], "file%d" % n), "wb") as f:
        for k in range(blocks):
            f.write((b"F%03dB%06d" % (n, k)).ljust(4096, b"."))
PY
t_tree_sum "$T/mnt" >"$T/tree.before"
t_umount "$T/mnt"

full() { grep -q "^Phase 2: Redundancy (parity" "$1" && ! grep -q "skipped" "$1"; }
fast() { grep -q "Redundancy: skipped, every member is clean" "$1"; }

# fsck_plain MODE WANT: plain fsck (no -f) in MODE, exit WANT, output in $T/out
fsck_plain() {
	local rc=0
	"$FSCK" "$1" "$IMGS" >"$T/out" 2>&1 || rc=$?
	[ $rc -eq "$2" ] || { cat "$T/out"; t_fail "fsck $1: exit $rc, want $2"; }
}

# file1_block MEMBER (-1: any): "IMAGE OFFSET PARITY-IMAGE" for a block of
# file1 and its row's parity.  The parity of pattern blocks looks like one,
# so the geometry decides: RAID 5 left-symmetric puts stripe s's parity on
# member n-1 - s mod n.
file1_block() {
	"$PY" - "$1" "${IMG_LIST[@]}" <<'PY'
import struct, sys
want, imgs = int(sys.argv[1]), sys.argv[2:]
with open(imgs[0], "rb") as f:
    sb = f.read(4096)
chunk, data_off = struct.unpack_from("<I", sb, 84)[0], struct.unpack_from("<Q", sb, 104)[0]
for m, p in enumerate(imgs):
    if want >= 0 and m != want:
        continue
    with open(p, "rb") as f:
        f.seek(data_off * 4096)
        blk = data_off
        while True:
            b = f.read(4096)
            if len(b) < 4096:
                break
            par = len(imgs) - 1 - (blk - data_off) // chunk % len(imgs)
            if b.startswith(b"F001B") and par != m:
                print(p, blk * 4096, imgs[par]); sys.exit()
            blk += 1
PY
}

# a data block of file1 on member 1 corrupted, then read through a mount
errors_while_mounted() {
	local img off other
	read -r img off other < <(file1_block 1)
	[ -n "$off" ] || t_fail "no block of file1 on member 1"
	printf 'CORRUPTCORRUPT!!' | dd of="$img" bs=1 seek=$((off + 100)) conv=notrunc status=none
	t_mount "$IMGS" "$T/mnt"
	t_tree_sum "$T/mnt" >"$T/tree.now"
	t_umount "$T/mnt"
	diff "$T/tree.before" "$T/tree.now" || t_fail "a file read back wrong"
}

t_log "clean: the fast path"
fsck_plain -n 0
fast "$T/out" || { cat "$T/out"; t_fail "no fast path on a clean array"; }

t_log "a checksum error repaired while mounted: plain fsck -n checks in full"
errors_while_mounted
sha256sum "${IMG_LIST[@]}" >"$T/sums"
fsck_plain -n 0
full "$T/out" || { cat "$T/out"; t_fail "fsck -n took the fast path after errors"; }
grep -q "errors were recorded while the array was in use" "$T/out" || { cat "$T/out"; t_fail "the record is not reported"; }
grep -q "$(basename "${IMG_LIST[1]}"): recorded on it: 0 read errors, 1 checksum errors" "$T/out" ||
	{ cat "$T/out"; t_fail "member 1's count is not reported"; }
sha256sum -c --quiet "$T/sums" || t_fail "fsck -n changed an image"
fsck_plain -n 0
full "$T/out" || t_fail "the second fsck -n took the fast path: -n cleared the record"

t_log "plain fsck -p checks in full and clears the record"
fsck_plain -p 0
full "$T/out" || { cat "$T/out"; t_fail "fsck -p took the fast path after errors"; }
grep -q "the error record on the members is cleared" "$T/out" || { cat "$T/out"; t_fail "-p did not clear the record"; }
fsck_plain -n 0
fast "$T/out" || { cat "$T/out"; t_fail "no fast path after -p cleared the record"; }

t_log "again, cleared by plain fsck -y"
errors_while_mounted
fsck_plain -y 0
full "$T/out" || { cat "$T/out"; t_fail "fsck -y took the fast path after errors"; }
grep -q "the error record on the members is cleared" "$T/out" || { cat "$T/out"; t_fail "-y did not clear the record"; }
fsck_plain -n 0
fast "$T/out" || { cat "$T/out"; t_fail "no fast path after -y cleared the record"; }

t_log "errors left uncorrected keep the record"
read -r img off other < <(file1_block -1)
[ -n "$other" ] || t_fail "no block of file1 found"
for i in "$img" "$other"; do
	printf 'CORRUPTCORRUPT!!' | dd of="$i" bs=1 seek=$((off + 100)) conv=notrunc status=none
done
rc=0; "$FSCK" -y -f "$IMGS" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 4 ] || { cat "$T/out"; t_fail "fsck -y -f over a lost block: exit $rc, want 4"; }
grep -q "error record on the members is cleared" "$T/out" && t_fail "-y cleared the record with errors left"
fsck_plain -n 4
full "$T/out" || { cat "$T/out"; t_fail "fsck -n took the fast path with errors left"; }
