# Helpers the fsck tests (t2NN_fsck_*.sh) share; sourced after lib.sh.
#
#   f_pattern_files DIR BLOCKS...   file0, file1, ... of BLOCKS[n] blocks
#   f_pattern_array LEVEL BLOCKS... four members holding such files
#   f_parity_of OFFSET IMAGE...     the RAID 5 parity member of a row
#   f_rc WANT ARGS...               fsck.raidfs ARGS exits with one of WANT
#   f_redundant SOURCE IMAGE        clean, and every file reads without IMAGE
#   f_damage IMAGE OFFSET           64 bytes of the block at OFFSET overwritten
#   f_files_ok SOURCE N             $n: d/f1..fN there that read "file I"
#   f_lossy SOURCE P_RC TOLD DONE   a repair that loses data: -n, -p, -y, -n

FSCK=$RAIDFS_BIN/fsck.raidfs

# f_pattern_files DIR BLOCKS...: DIR/file0, file1, ..., BLOCKS[n] 4 KiB
# blocks each, every block starting with b"F%03dB%06d" % (n, block) - what
# fsck_locate.py finds on the members.
f_pattern_files() {
	"$PY" - "$@" <<'PY'
import os, sys
d, counts = sys.argv[1], [int(c) for c in sys.argv[2:]]
for n, blocks in enumerate(counts):
    with open(os.path.join(d, "file%d" % n), "wb") as f:
        for k in range(blocks):
            f.write((b"F%03dB%06d" % (n, k)).ljust(4096, b"."))
PY
}

# f_pattern_array LEVEL BLOCKS...: four 64 MiB images (IMGS, IMG_LIST), a
# LEVEL array of 64 KiB chunks on them holding f_pattern_files BLOCKS...,
# its tree's sums in $T/tree.before; unmounted.
f_pattern_array() {
	local level=$1
	shift
	t_images 4 64M
	t_mkfs "$level" 64K "${IMG_LIST[@]}"
	t_mount "$IMGS" "$T/mnt"
	f_pattern_files "$T/mnt" "$@"
	t_tree_sum "$T/mnt" >"$T/tree.before"
	t_umount "$T/mnt"
}

# f_parity_of OFFSET IMAGE...: the image holding the parity block of the
# RAID 5 row at byte OFFSET of a member (left-symmetric: stripe s's parity
# is on member n-1 - s mod n; the data region starts at the superblock's
# data_offset).  A parity block of pattern blocks looks like one of them,
# so only the geometry can tell.
f_parity_of() {
	"$PY" - "$@" <<'PY'
import struct, sys
off, imgs = int(sys.argv[1]), sys.argv[2:]
with open(imgs[0], "rb") as f:
    sb = f.read(4096)
chunk = struct.unpack_from("<I", sb, 84)[0]
data_off = struct.unpack_from("<Q", sb, 104)[0]
print(imgs[len(imgs) - 1 - (off // 4096 - data_off) // chunk % len(imgs)])
PY
}

# f_rc WANT ARGS...: fsck.raidfs ARGS, whose exit status must be one of
# WANT ("0", "0 1"); the output is left in $T/out.
f_rc() {
	local want=$1 rc=0
	shift
	"$FSCK" "$@" >"$T/out" 2>&1 || rc=$?
	case " $want " in
	*" $rc "*) ;;
	*) cat "$T/out"; t_fail "fsck $*: exit $rc, want $want" ;;
	esac
}

# f_redundant SOURCE IMAGE: fsck -n -f finds nothing, and with IMAGE moved
# away every file reads back as in $T/tree.before (IMAGE is put back).
f_redundant() {
	f_rc 0 -n -f "$1"
	mv "$2" "$T/away.img"
	t_mount "$1" "$T/mnt" -o ro
	t_tree_sum "$T/mnt" >"$T/tree.after"
	t_umount "$T/mnt"
	mv "$T/away.img" "$2"
	diff "$T/tree.before" "$T/tree.after" ||
		t_fail "contents differ without $(basename "$2")"
}

# f_damage IMAGE OFFSET: 64 bytes of the 4 KiB block at OFFSET overwritten
# (at RAID 0 the block is lost: nothing can rebuild it)
f_damage() {
	"$PY" - "$1" "$2" <<'PY'
import sys
p, off = sys.argv[1], int(sys.argv[2])
with open(p, "r+b") as f:
    f.seek(off + 4000)
    f.write(b"X" * 64)
PY
}

# f_files_ok SOURCE N: $n = the files d/f1 .. d/fN still there (read-only
# mount), each of which must read "file I"
f_files_ok() {
	local i
	t_mount "$1" "$T/mnt" -o ro
	n=0
	for i in $(seq 1 "$2"); do
		[ -e "$T/mnt/d/f$i" ] || continue
		[ "$(cat "$T/mnt/d/f$i")" = "file $i" ] || t_fail "d/f$i reads wrong"
		n=$((n + 1))
	done
	t_umount "$T/mnt"
}

# f_lossy SOURCE P_RC TOLD DONE: damage whose repair loses data.  fsck -n
# -f exits 4, its output matches TOLD and no image changes; -p -f exits
# with one of P_RC and refuses ("UNEXPECTED INCONSISTENCY"); -y -f exits 1
# and its output matches DONE; the next -n -f is clean.
f_lossy() {
	local src=$1 prc=$2 told=$3 done=$4
	sha256sum "${IMG_LIST[@]}" >"$T/sums"
	f_rc 4 -n -f "$src"
	grep -q -- "$told" "$T/out" || { cat "$T/out"; t_fail "fsck -n: no '$told'"; }
	sha256sum -c --quiet "$T/sums" || t_fail "fsck -n wrote"
	f_rc "$prc" -p -f "$src"
	grep -q "UNEXPECTED INCONSISTENCY" "$T/out" || { cat "$T/out"; t_fail "fsck -p made a repair that loses data"; }
	f_rc 1 -y -f "$src"
	grep -q -- "$done" "$T/out" || { cat "$T/out"; t_fail "fsck -y: no '$done'"; }
	f_rc 0 -n -f "$src"
	grep -q "reached; 0 problems" "$T/out" || { cat "$T/out"; t_fail "not clean after fsck -y"; }
}
