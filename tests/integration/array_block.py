#!/usr/bin/env python3
"""Overwrites one block of a RAID 1 array the way a bug above raidcore
would: on every member, with the member's checksum table entry and the
table block's seal made to agree (docs/FORMAT.md, "Checksum table"), so
that raidcore vouches for the new bytes and only the filesystem's own
checks can tell.

    array_block.py fill BLOCK BYTE MEMBER...   the block filled with BYTE
    array_block.py copy FROM TO MEMBER...      block FROM copied over TO
    array_block.py inode INO MEMBER            prints the block holding
                                               inode INO (its table block)
    array_block.py unwritten BLOCK MEMBER...   the block's checksum entry
                                               says "never written" (0)
    array_block.py sb-add OFF N MEMBER         N added to the u64 at byte
                                               OFF of every superblock copy
                                               (checksums resealed)
    array_block.py save BLOCK FILE MEMBER      the block written to FILE
    array_block.py restore BLOCK FILE MEMBER   FILE put back at the block

Blocks are array blocks: at RAID 1, data-region block N of every member.
"""
import ctypes
import os
import struct
import sys

BS = 4096
ENTRIES = 511                   # checksum entries per table block
GOLDEN = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1

_x = ctypes.CDLL("libxxhash.so.0")
_x.XXH3_64bits_withSeed.restype = ctypes.c_uint64
_x.XXH3_64bits_withSeed.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                    ctypes.c_uint64]


def xxh(b, seed=0):
    return _x.XXH3_64bits_withSeed(bytes(b), len(b), seed & MASK)


def u64(b, o):
    return struct.unpack_from("<Q", b, o)[0]


def sb_copies(path):
    """(block, bytes) of each superblock copy that has the magic."""
    blocks = os.path.getsize(path) // BS
    with open(path, "rb") as f:
        for blk in (0, 1, blocks - 2, blocks - 1):
            f.seek(blk * BS)
            s = bytearray(f.read(BS))
            if s[:8] == b"RAIDFSMB":
                yield blk, s


def sb_seal(s):
    s[4088:4096] = bytes(8)
    struct.pack_into("<Q", s, 4088, xxh(s))


def superblock(path):
    """The newest superblock copy whose checksum holds."""
    best = None
    for _, s in sb_copies(path):
        t = bytearray(s)
        sb_seal(t)
        if t != s:
            continue
        if best is None or u64(s, 144) > u64(best, 144):
            best = s
    if best is None:
        sys.exit("%s: no superblock" % path)
    return best


def put(path, block, data, entry=None):
    """data at block (None: left as it is), its entry made to agree (or
    set to entry), the table block resealed."""
    s = superblock(path)
    data_offset, csum_offset = u64(s, 104), u64(s, 128)
    seed = xxh(bytes(s[40:56]) + bytes(s[56:72]))   # array, member uuid
    mb = data_offset + block
    tb = csum_offset + block // ENTRIES
    with open(path, "r+b") as f:
        if data is not None:
            f.seek(mb * BS)
            f.write(data)
        f.seek(tb * BS)
        t = bytearray(f.read(BS))
        if entry is None:
            c = xxh(data, mb)
            entry = c if c else 1
        struct.pack_into("<Q", t, 8 * (block % ENTRIES), entry)
        seal = xxh(bytes(t[:4088]), seed ^ ((tb * GOLDEN) & MASK))
        struct.pack_into("<Q", t, 4088, seal if seal else 1)
        f.seek(tb * BS)
        f.write(t)


def get(path, block):
    s = superblock(path)
    with open(path, "rb") as f:
        f.seek((u64(s, 104) + block) * BS)
        return f.read(BS)


def inode_block(path, ino):
    """The data-region block holding inode ino at home: 16 inodes of 256
    bytes a block, each starting "IN" with its number at byte 24.  The
    last such block: the filesystem journal's ring, which may hold older
    copies, lies before every inode table block (mkfs places it first)."""
    s = superblock(path)
    slot = (ino % 16) * 256
    found = None
    with open(path, "rb") as f:
        for d in range(u64(s, 96)):
            f.seek((u64(s, 104) + d) * BS)
            b = f.read(BS)
            if b[slot:slot + 2] == b"IN" and u64(b, slot + 24) == ino:
                found = d
    if found is None:
        sys.exit("%s: no block holds inode %d" % (path, ino))
    return found


def main():
    op = sys.argv[1]
    if op == "fill":
        block, fill = int(sys.argv[2]), int(sys.argv[3])
        for path in sys.argv[4:]:
            put(path, block, bytes([fill]) * BS)
    elif op == "copy":
        src, dst = int(sys.argv[2]), int(sys.argv[3])
        data = get(sys.argv[4], src)
        for path in sys.argv[4:]:
            put(path, dst, data)
    elif op == "unwritten":
        for path in sys.argv[3:]:
            put(path, int(sys.argv[2]), None, entry=0)
    elif op == "sb-add":
        off, n, path = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
        copies = list(sb_copies(path))
        with open(path, "r+b") as f:
            for blk, b in copies:
                struct.pack_into("<Q", b, off, u64(b, off) + n)
                sb_seal(b)
                f.seek(blk * BS)
                f.write(b)
    elif op == "save":
        with open(sys.argv[3], "wb") as f:
            f.write(get(sys.argv[4], int(sys.argv[2])))
    elif op == "restore":
        with open(sys.argv[3], "rb") as f:
            put(sys.argv[4], int(sys.argv[2]), f.read())
    elif op == "inode":
        print(inode_block(sys.argv[3], int(sys.argv[2])))
    else:
        sys.exit("array_block.py: fill, copy, unwritten, sb-add, save, "
                 "restore or inode")


if __name__ == "__main__":
    main()
