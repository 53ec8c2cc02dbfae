# Helpers the fsck tests (t2NN_fsck_*.sh) share; sourced after lib.sh.
#
#   f_pattern_files DIR BLOCKS...   file0, file1, ... of BLOCKS[n] blocks
#   f_pattern_array LEVEL BLOCKS... four members holding such files
#   f_parity_of OFFSET IMAGE...     the RAID 5 parity member of a row
#   f_rc WANT ARGS...               fsck.raidfs ARGS exits with one of WANT
#   f_redundant SOURCE IMAGE        clean, and every file reads without IMAGE

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
