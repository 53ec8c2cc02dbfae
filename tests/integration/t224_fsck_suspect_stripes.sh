#!/bin/bash
# A member that holds a wrong copy of a metadata block which its checksum
# entry vouches for (array_block.py zeroes an inode table block on one
# member of a RAID 5 and makes its entry agree).
#
# With the row's parity damaged too (resealed), nothing holds the inodes
# any more: Phase 2 sees the parity disagree with data that verifies and
# cannot tell which block is wrong, and the filesystem cannot prove
# either reading.  Phase 3 then read the zeroed inodes as free and -p and
# -y removed every entry naming them (a tester's find: 31 of 60 files
# gone, the root made anew on another member).  Now the filesystem repair
# is withheld (exit 4, NOT REPAIRED, nothing removed).
#
# With the parity put back, the row's reading of the inode block proves
# itself where the block as read does not: Phase 2 rewrites it (the
# filesystem's word against the block's entry), exit 1, and every file
# reads, with every member and without the damaged one.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

t_images 4 32M
t_mkfs 5 64K "${IMG_LIST[@]}"
M=$T/mnt
t_mount "$IMGS" "$M"
mkdir "$M/d"
t_pattern_files "$M/d" 40 3 5
inos=$(stat -c %i "$M"/d/*)
t_tree_sum "$M" >"$T/tree.before"
t_umount "$M"

# The home blocks on m0 of the files' inodes, where m0 holds data (at
# RAID 5 a row's parity equals its one used inode block when the row's
# other blocks are zeros): the last block holding an inode at its slot
# (the filesystem journal's copies come first)
m0=${IMG_LIST[0]}
blocks=$("$PY" - "$m0" "${IMG_LIST[@]}" $inos <<'PY'
import struct, sys
path, imgs, inos = sys.argv[1], sys.argv[2:2 + 4], map(int, sys.argv[6:])
f = open(path, "rb")
sb = f.read(4096)
chunk = struct.unpack_from("<I", sb, 84)[0]
nblocks, data_off = struct.unpack_from("<QQ", sb, 96)
want = {}
for ino in inos:
    want[ino] = None
for d in range(nblocks):
    if imgs[len(imgs) - 1 - d // chunk % len(imgs)] == path:
        continue                # a parity block
    f.seek((data_off + d) * 4096)
    b = f.read(4096)
    for ino in want:
        slot = (ino % 16) * 256
        if b[slot:slot + 2] == b"IN" and struct.unpack_from("<Q", b, slot + 24)[0] == ino:
            want[ino] = d
print(" ".join(sorted({str(d) for d in want.values() if d is not None})))
PY
)
[ -n "$blocks" ] || t_fail "no inode block of d's files on $(basename "$m0")"
AB="$PY $TESTS_DIR/array_block.py"
# the parity of a data-region block's row, as the python above finds it
parity_of() { echo "${IMG_LIST[$((3 - $1 / (64 / 4) % 4))]}"; }
for blk in $blocks; do
	$AB fill "$blk" 0 "$m0" || t_fail "array_block.py fill"
	$AB save "$blk" "$T/p$blk" "$(parity_of "$blk")" || t_fail "save"
	$AB fill "$blk" 7 "$(parity_of "$blk")" || t_fail "array_block.py fill"
done
t_log "inode blocks $blocks zeroed on $(basename "$m0"), their parity garbled, entries made to agree"

for mode in -p -y; do
	f_rc 4 "$mode" -f "$IMGS"
	grep -q "NOT REPAIRED: .* stripes whose parity disagrees" "$T/out" ||
		{ cat "$T/out"; t_fail "fsck $mode: no NOT REPAIRED"; }
	grep -q "removed$\|made anew$\|: cleared$" "$T/out" &&
		{ cat "$T/out"; t_fail "fsck $mode repaired over the suspect blocks"; }
done
t_log "parity put back: the row's reading proves itself, and is taken"
for blk in $blocks; do
	$AB restore "$blk" "$T/p$blk" "$(parity_of "$blk")" || t_fail "restore"
done
f_rc 1 -p -f "$IMGS"
# inode chunks prove nothing about where they belong (each inode's
# checksum is seeded with its number): the filesystem, which knows from
# its chunk map which chunk belongs there and which of its inodes are in
# use, takes the other reading (before, raidcore took any reading that
# looked like an inode chunk, and put one built from a stale member's
# column over a good block: T2 D1)
grep -q "inode table block .* did not hold what the chunk map says; the array's redundancy gave a copy that does: taken, and written back" "$T/out" ||
	{ cat "$T/out"; t_fail "fsck -p: the inode block not rewritten"; }
grep -q "removed$\|made anew$\|: cleared$" "$T/out" &&
	{ cat "$T/out"; t_fail "fsck -p repaired the filesystem"; }
f_rc 0 -n -f "$IMGS"
t_mount "$IMGS" "$M" -o ro
t_tree_sum "$M" >"$T/tree.after"
t_umount "$M"
cmp -s "$T/tree.before" "$T/tree.after" || t_fail "files differ after the repair"
t_log "without $(basename "$m0"): every file, read through parity"
mv "$m0" "$m0.away"
t_mount "${IMG_LIST[1]}:${IMG_LIST[2]}:${IMG_LIST[3]}" "$M" -o ro,degraded=allow
t_tree_sum "$M" >"$T/tree.after"
t_umount "$M"
cmp -s "$T/tree.before" "$T/tree.after" || t_fail "files differ through parity"

# A RAID 1 member that lost the writes of a session, data and checksum
# tables alike (rolled back to a copy; its superblocks current): the file
# overwritten then reads back old from it with no error, and fsck named
# nothing.  The damage report names it now, as in doubt.
t_log "RAID 1, a member's writes of a session lost: the file is named"
truncate -s 32M "$T/a.img" "$T/b.img"
t_mkfs 1 64K "$T/a.img" "$T/b.img"
t_mount "$T/a.img:$T/b.img" "$M"
head -c 8192 /dev/zero | tr '\0' O >"$M/f"
t_umount "$M"
cp "$T/a.img" "$T/a.snap"
t_mount "$T/a.img:$T/b.img" "$M"
head -c 8192 /dev/zero | tr '\0' N | dd of="$M/f" conv=notrunc,fsync status=none
t_umount "$M"
"$PY" - "$T/a.img" "$T/a.snap" <<'PY'
import struct, sys
b, s = open(sys.argv[1], "r+b"), open(sys.argv[2], "rb")
hdr = b.read(4096)
q = lambda o: struct.unpack_from("<Q", hdr, o)[0]
start, end = q(128), q(104) + q(96)   # the tables, then the data region
s.seek(start * 4096)
b.seek(start * 4096)
b.write(s.read((end - start) * 4096))
PY
f_rc 4 -n -f "$T/a.img:$T/b.img"
grep -q "^  /f: bytes 0-8191 in doubt: the members disagree there" "$T/out" ||
	{ cat "$T/out"; t_fail "the file in doubt is not named"; }
grep -q "the copies disagree, each verifying" "$T/out" ||
	{ cat "$T/out"; t_fail "RAID 1 told of parity"; }
t_log "ok"

# The same at RAID 5, a member's journal, tables and data rolled back a
# session (its superblocks current): the stripes of the file overwritten
# disagree with their parity, and the rollback leaves blocks elsewhere that
# cannot be reconstructed.  With those, the report named no file (a
# tester's find, x3): it names the file in doubt now beside them.
t_log "RAID 5, a member's writes of a session lost: the file is named"
truncate -s 64M "$T/r0.img" "$T/r1.img" "$T/r2.img" "$T/r3.img"
R="$T/r0.img:$T/r1.img:$T/r2.img:$T/r3.img"
t_mkfs 5 64K "$T"/r?.img
t_mount "$R" "$M"
head -c 8M /dev/urandom >"$M/f"
t_umount "$M"
cp --sparse=always "$T/r0.img" "$T/r0.snap"
t_mount "$R" "$M"
head -c 8M /dev/urandom | dd of="$M/f" bs=1M conv=notrunc,fsync status=none
t_umount "$M"
blocks=$(($(stat -c %s "$T/r0.img") / 4096))
dd if="$T/r0.snap" of="$T/r0.img" bs=4096 skip=8 seek=8 count=$((blocks - 10)) \
	conv=notrunc status=none
f_rc 4 -n -f "$R"
grep -q "^  /f: bytes [0-9]*-[0-9]* in doubt: the members disagree there" "$T/out" ||
	{ cat "$T/out"; t_fail "the file in doubt is not named"; }
t_log "ok"
