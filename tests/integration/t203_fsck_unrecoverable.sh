#!/bin/bash
# Two members corrupt in the same RAID 5 row: beyond what single parity can
# repair.  fsck reports it as unrecoverable with the file's path and byte
# range (exit 4, also with -y), and every other file is intact.
. "$(dirname "$0")/lib.sh"
t_setup
FSCK=$RAIDFS_BIN/fsck.raidfs

t_images 4 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"
"$PY" - "$T/mnt" <<'PY'
import os, sys
d = sys.argv[1]
for n, blocks in enumerate([50, 120, 8]):
    with open(os.path.join(d, "file%d" % n), "wb") as f:
        for k in range(blocks):
            f.write((b"F%03dB%06d" % (n, k)).ljust(4096, b"."))
PY
t_umount "$T/mnt"

# one row of file1 (its block 60's row), on two members
read -r img0 off < <("$PY" "$TESTS_DIR/fsck_locate.py" data:1 "${IMG_LIST[@]}" |
	"$PY" -c '
import sys
for line in sys.stdin:
    p, o = line.split()
    with open(p, "rb") as f:
        f.seek(int(o)); b = f.read(16)
    if b.startswith(b"F001B000060"):
        print(p, o); break')
[ -n "$img0" ] || t_fail "file1 block 60 not found"
# the row's parity block (another data block of the row would be a second
# lost block): RAID 5 left-symmetric puts stripe s's parity on member
# n-1 - s mod n; the data region starts at the superblock's data_offset
other=$("$PY" - "$off" "${IMG_LIST[@]}" <<'PY'
import struct, sys
off, imgs = int(sys.argv[1]), sys.argv[2:]
with open(imgs[0], "rb") as f:
    sb = f.read(4096)
chunk, data_off = struct.unpack_from("<I", sb, 84)[0], struct.unpack_from("<Q", sb, 104)[0]
stripe = (off // 4096 - data_off) // chunk
print(imgs[len(imgs) - 1 - stripe % len(imgs)])
PY
)
[ "$other" != "$img0" ] || t_fail "file1 block 60 is on the parity member?"
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
