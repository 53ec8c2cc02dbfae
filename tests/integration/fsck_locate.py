#!/usr/bin/env python3
"""Finds filesystem structures on raidfs member images, 4 KiB block by block,
for the fsck tests (t2NN_fsck_*.sh).

  fsck_locate.py KIND IMAGE...   prints "IMAGE OFFSET" lines, one per hit

KIND:
  data:N      a block of test file N (written by fsck_pattern: it starts with
              b"F%03dB%06d" % (N, block))
  anydata     any test file block
  parity      a block whose row (same offset on every other member) holds
              only test file data: RAID 4/5 parity of full data rows
  inode       the inode table block holding the root (inode 1)
  inodes:N    the inode table block of chunk N (inodes 16N .. 16N+15): a
              slot of it holds its own inode number
  dirnode     a directory B+tree node (FBLK header, type 6, tree 2)
  bbitmap     a block bitmap block (type 4)
  ichunks     an inode chunk map node (FBLK header, type 6, tree 5)
  journal     the journal superblock (type 1)
  jdesc       a journal descriptor (type 2): a transaction in the ring
  fssb        a filesystem superblock copy ("RAIDFSFS")
Only each member's data region is searched (not raidcore's journal).
"""
import re
import struct
import sys

BS = 4096
PAT = re.compile(rb"F(\d{3})B(\d{6})")


def data_offset(path):
    """Bytes before the member's data region (superblock data_offset): the
    raidcore journal before it holds copies of recently written blocks."""
    with open(path, "rb") as f:
        return struct.unpack_from("<Q", f.read(BS), 104)[0] * BS


def blocks(path):
    with open(path, "rb") as f:
        off = data_offset(path)
        f.seek(off)
        while True:
            b = f.read(BS)
            if len(b) < BS:
                return
            yield off, b
            off += BS


def is_data(b, n=None):
    m = PAT.match(b)
    return bool(m) and (n is None or int(m.group(1)) == n)


def fblk(b, btype, tree=None):
    if b[:4] != b"FBLK" or struct.unpack_from("<H", b, 4)[0] != btype:
        return False
    return tree is None or struct.unpack_from("<H", b, 38)[0] == tree


def matcher(kind):
    if kind.startswith("data:"):
        n = int(kind[5:])
        return lambda b: is_data(b, n)
    if kind.startswith("inodes:"):
        n = int(kind[7:])
        return lambda b: any(
            b[s * 256:s * 256 + 2] == b"IN" and
            struct.unpack_from("<Q", b, s * 256 + 24)[0] == 16 * n + s
            for s in range(16))
    return {
        "anydata": lambda b: is_data(b),
        "inode": lambda b: b[256:258] == b"IN" and
        struct.unpack_from("<Q", b, 256 + 24)[0] == 1,
        "dirnode": lambda b: fblk(b, 6, 2),
        "bbitmap": lambda b: fblk(b, 4),
        "ichunks": lambda b: fblk(b, 6, 5),
        "journal": lambda b: fblk(b, 1),
        "jdesc": lambda b: fblk(b, 2),
        "fssb": lambda b: b[:8] == b"RAIDFSFS" and
        struct.unpack_from("<Q", b, 16)[0] != 0,
    }[kind]


def parity(images):
    files = [open(p, "rb") for p in images]
    size = min(f.seek(0, 2) for f in files)
    for off in range(data_offset(images[0]), size, BS):
        row = []
        for f in files:
            f.seek(off)
            row.append(f.read(BS))
        for i, b in enumerate(row):
            others = row[:i] + row[i + 1:]
            if b.strip(b"\0") and not is_data(b) and all(is_data(o) for o in others):
                print(images[i], off)
                return


def main():
    kind, images = sys.argv[1], sys.argv[2:]
    if kind == "parity":
        parity(images)
        return
    match = matcher(kind)
    for p in images:
        for off, b in blocks(p):
            if match(b):
                print(p, off, flush=True)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:     # the caller took the first hit only
        sys.exit(0)
