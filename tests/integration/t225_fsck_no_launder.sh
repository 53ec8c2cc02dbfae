#!/bin/bash
# A RAID 6 row holding a file block and a never-written data column; the
# file block is rewritten on its member together with its checksum entry
# (damage resealed), and the member holding the never-written column is
# left out.  Degraded, the row disagrees and nothing can name its wrong
# block.  fsck -p and -y must then write nothing into the row: before,
# Phase 4 rewrote the never-written block (free space it could not
# rebuild) as zeros, and that write recomputed P and Q from the bad block
# - with the member back the row agreed with it, fsck -n said clean, and
# the damage could never be found again (a tester's find, U5 D3).  Now
# the row's parity is left as it was, and with every member back the
# damage is still reported.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

t_images 5 40M
t_mkfs 6 4K "${IMG_LIST[@]}"
M=$T/mnt
t_mount "$IMGS" "$M"
t_pattern_files "$M" 1 3 2 5 1 4 2 7 1 3
t_umount "$M"

# A data-region block d (a row: 4 KiB chunks) where one member holds a
# file block as data and another a never-written data block (zeros,
# entry 0): "d tgt zc p q", members by index.
read -r d tgt zc p q < <("$PY" - "${IMG_LIST[@]}" <<'PY'
import struct, sys
imgs = sys.argv[1:]
BS = 4096
sbs = [open(p, "rb").read(BS) for p in imgs]
u32 = lambda b, o: struct.unpack_from("<I", b, o)[0]
u64 = lambda b, o: struct.unpack_from("<Q", b, o)[0]
n = u32(sbs[0], 88)
role = [u32(s, 72) for s in sbs]
fs = [open(p, "rb") for p in imgs]
found = ()
for d in range(u64(sbs[0], 96)):
    r = n - 1 - d % n                       # P's role (chunk: one block)
    kind = {r % n: "P", (r + 1) % n: "Q"}
    cols, ents = {}, {}
    for k, f in enumerate(fs):
        f.seek((u64(sbs[k], 104) + d) * BS)
        cols[role[k]] = (k, f.read(BS))
        f.seek((u64(sbs[k], 128) + d // 511) * BS)
        ents[role[k]] = u64(f.read(BS), 8 * (d % 511))
    data = [x for x in range(n) if x not in kind]
    tgt = [cols[x][0] for x in data if cols[x][1][:1] == b"F"]
    zc = [cols[x][0] for x in data if cols[x][1] == bytes(BS) and ents[x] == 0]
    if tgt and zc:      # the last: the journal's ring lies before the files
        found = (d, tgt[0], zc[0], cols[r % n][0], cols[(r + 1) % n][0])
print(*found)
PY
)
[ -n "$d" ] || t_fail "no row with a file block and a never-written data block"
AB="$PY $TESTS_DIR/array_block.py"
$AB fill "$d" 7 "${IMG_LIST[$tgt]}" || t_fail "array_block.py fill"
$AB save "$d" "$T/p.before" "${IMG_LIST[$p]}" || t_fail "save"
$AB save "$d" "$T/q.before" "${IMG_LIST[$q]}" || t_fail "save"
t_log "row $d: file block on m$tgt resealed wrong; m$zc (never written there) left out"

deg=$(for i in "${!IMG_LIST[@]}"; do [ "$i" = "$zc" ] || echo "${IMG_LIST[$i]}"; done | paste -sd:)
for mode in -p -y; do
	f_rc 4 "$mode" -f "$deg"
	$AB save "$d" "$T/p.after" "${IMG_LIST[$p]}"
	$AB save "$d" "$T/q.after" "${IMG_LIST[$q]}"
	cmp -s "$T/p.before" "$T/p.after" && cmp -s "$T/q.before" "$T/q.after" ||
		{ cat "$T/out"; t_fail "fsck $mode rewrote the row's parity"; }
done
grep -q "left as they are" "$T/out" || { cat "$T/out"; t_fail "fsck -y did not tell the blocks it left"; }
t_log "every member back: the damage is still found"
f_rc 4 -n -f "$IMGS"
grep -q "[1-9][0-9]* parity mismatches" "$T/out" || { cat "$T/out"; t_fail "the row is no longer found"; }
t_log "ok"
