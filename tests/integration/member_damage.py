#!/usr/bin/env python3
"""Damages one region of a raidfs member image, for the fsck tests.

  member_damage.py KIND REGION IMAGE [SEED]

KIND: random (bytes from a PRNG seeded with SEED) or zero.
REGION, located from the first superblock copy found by its magic (block
0, 1, or one of the last two blocks of the image):
  sb-start    blocks 0-1, superblock copies 0 and 1
  sb-end      the last two blocks, copies 2 and 3
  first-mib   the first MiB (copies 0, 1 and the journal's start)
  journal     the whole journal ring
  tables      the whole checksum table
  data-head   the first MiB of the data region
  data-all    the whole data region
  tail-half   the second half of the image (data, copies 2 and 3)
  whole       every byte
  B:N         N bytes at byte B
Prints what it did."""
import os, random, struct, sys

BS = 4096


def sb_fields(path):
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        for off in (0, BS, size - 2 * BS, size - BS):
            f.seek(off); b = f.read(BS)
            if b[:8] == b"RAIDFSMB":
                q = lambda o: struct.unpack_from("<Q", b, o)[0]
                return dict(member_blocks=q(96), data_offset=q(104), journal_offset=q(112),
                            journal_blocks=q(120), csum_offset=q(128), csum_blocks=q(136),
                            device_blocks=q(200))
    return None

def region(name, path, size):
    if ":" in name:
        off, n = name.split(":")
        return int(off), int(n)
    fixed = {
        "sb-start": (0, 2 * BS),
        "sb-end": (size - 2 * BS, 2 * BS),
        "first-mib": (0, 1 << 20),
        "tail-half": (size // 2, size - size // 2),
        "whole": (0, size),
    }
    if name in fixed:
        return fixed[name]
    d = sb_fields(path)
    if d is None:
        sys.exit("no superblock on " + path)
    return {
        "journal": (d["journal_offset"] * BS, d["journal_blocks"] * BS),
        "tables": (d["csum_offset"] * BS, d["csum_blocks"] * BS),
        "data-head": (d["data_offset"] * BS, 1 << 20),
        "data-all": (d["data_offset"] * BS, d["member_blocks"] * BS),
    }[name]


if len(sys.argv) < 4 or sys.argv[1] not in ("random", "zero"):
    sys.exit(__doc__)
kind, name, path = sys.argv[1:4]
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
size = os.path.getsize(path)
off, n = region(name, path, size)
n = max(0, min(n, size - off))
rnd = random.Random(seed)
with open(path, "r+b") as f:
    f.seek(off)
    left = n
    while left:
        k = min(left, 1 << 20)
        f.write(rnd.randbytes(k) if kind == "random" else bytes(k))
        left -= k
print("%s %s: bytes %d-%d" % (kind, name, off, off + n - 1))
