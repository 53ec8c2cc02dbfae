#!/usr/bin/env python3
"""Overwrites one block of a RAID 1 array the way a bug above raidcore
would: on every member, with the member's checksum table entry and the
table block's seal made to agree (docs/FORMAT.md, "Checksum table"), so
that raidcore vouches for the new bytes and only the filesystem's own
checks can tell.

    array_block.py BLOCK FILL MEMBER...

BLOCK: the array block (at RAID 1, data-region block BLOCK of every
member).  FILL: a byte value (0-255) the whole block is filled with.
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


def superblock(path):
    """The newest superblock copy whose checksum holds."""
    blocks = os.path.getsize(path) // BS
    best = None
    with open(path, "rb") as f:
        for blk in (0, 1, blocks - 2, blocks - 1):
            f.seek(blk * BS)
            s = bytearray(f.read(BS))
            if s[:8] != b"RAIDFSMB":
                continue
            t = bytearray(s)
            t[4088:4096] = bytes(8)
            if xxh(t) != u64(s, 4088):
                continue
            if best is None or u64(s, 144) > u64(best, 144):
                best = s
    if best is None:
        sys.exit("%s: no superblock" % path)
    return best


def put(path, block, data):
    s = superblock(path)
    data_offset, csum_offset = u64(s, 104), u64(s, 128)
    seed = xxh(bytes(s[40:56]) + bytes(s[56:72]))   # array, member uuid
    mb = data_offset + block
    tb = csum_offset + block // ENTRIES
    with open(path, "r+b") as f:
        f.seek(mb * BS)
        f.write(data)
        f.seek(tb * BS)
        t = bytearray(f.read(BS))
        c = xxh(data, mb)
        struct.pack_into("<Q", t, 8 * (block % ENTRIES), c if c else 1)
        seal = xxh(bytes(t[:4088]), seed ^ ((tb * GOLDEN) & MASK))
        struct.pack_into("<Q", t, 4088, seal if seal else 1)
        f.seek(tb * BS)
        f.write(t)


def main():
    block, fill = int(sys.argv[1]), int(sys.argv[2])
    for path in sys.argv[3:]:
        put(path, block, bytes([fill]) * BS)


if __name__ == "__main__":
    main()
