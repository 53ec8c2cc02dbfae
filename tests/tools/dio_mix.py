#!/usr/bin/env python3
"""dio_mix.py FILE [OPS [SEED]]: O_DIRECT and buffered I/O mixed on one file.

Two descriptors of FILE, one O_DIRECT and one buffered, and shared
mappings of either.  A seeded random sequence of aligned direct writes and
reads, unaligned buffered writes and reads, reads through the mapping,
writes through it (msync'd), truncates, fsyncs, and a direct descriptor
reopened with fcntl(F_SETFL) clearing and setting O_DIRECT; every read is
checked against an in-memory model of the file.  This is what Linux
promises for O_DIRECT beside the page cache on a local filesystem: a
direct read sees earlier buffered writes (dirty pages are written back
first), a buffered or mapped read sees earlier direct writes (the cached
pages are dropped).  Exits 1 at the first mismatch, printing the
operations so far.
"""
import fcntl
import mmap
import os
import random
import sys

B = 4096
MAXSIZE = 64 * B


def main():
    path = sys.argv[1]
    ops = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    model = bytearray()
    log = []
    fb = os.open(path, os.O_CREAT | os.O_TRUNC | os.O_RDWR, 0o644)
    fd = os.open(path, os.O_RDWR | os.O_DIRECT)
    buf = mmap.mmap(-1, 16 * B)        # page-aligned for O_DIRECT

    def check(what, got, off):
        want = bytes(model[off:off + len(got)])
        if got != want:
            print("\n".join(log[-40:]))
            print("MISMATCH after %d ops: %s at %d: got %r... want %r..."
                  % (len(log), what, off, got[:16], want[:16]))
            sys.exit(1)

    def put(off, data):
        if off > len(model):
            model.extend(bytes(off - len(model)))
        model[off:off + len(data)] = data

    for i in range(ops):
        op = rnd.choice(("dwrite", "dwrite", "dread", "dread", "bwrite",
                         "bread", "mread", "mwrite", "trunc", "fsync",
                         "toggle"))
        nb = rnd.randint(1, 8)
        off = rnd.randrange(0, MAXSIZE // B - nb) * B
        log.append("%d %s off=%d blocks=%d size=%d" % (i, op, off, nb, len(model)))
        if op == "dwrite":
            data = bytes([rnd.randrange(1, 256)]) * (nb * B)
            buf[:nb * B] = data
            n = os.pwritev(fd, [memoryview(buf)[:nb * B]], off)
            assert n == nb * B, n
            put(off, data)
        elif op == "dread":
            n = os.preadv(fd, [memoryview(buf)[:nb * B]], off)
            check("direct read", bytes(buf[:n]), off)
            if n != max(0, min(nb * B, len(model) - off)):
                check("direct read length %d" % n, b"?", off)
        elif op == "bwrite":
            o = off + rnd.randrange(0, B)
            data = bytes([rnd.randrange(1, 256)]) * rnd.randint(1, nb * B)
            os.pwrite(fb, data, o)
            put(o, data)
        elif op == "bread":
            o = off + rnd.randrange(0, B)
            check("buffered read", os.pread(fb, nb * B, o), o)
        elif op in ("mread", "mwrite"):
            size = len(model)
            if size == 0:
                continue
            m = mmap.mmap(rnd.choice((fb, fd)), size, mmap.MAP_SHARED,
                          mmap.PROT_READ | mmap.PROT_WRITE)
            o = min(off, size - 1)
            if op == "mread":
                check("mapped read", m[o:o + nb * B], o)
            else:
                data = bytes([rnd.randrange(1, 256)]) * min(nb * B, size - o)
                m[o:o + len(data)] = data
                m.flush()
                put(o, data)
            m.close()
        elif op == "trunc":
            size = rnd.randrange(0, MAXSIZE // B) * B + rnd.choice((0, 100))
            os.ftruncate(fb, size)
            del model[size:]
            model.extend(bytes(size - len(model)))
        elif op == "fsync":
            os.fsync(rnd.choice((fb, fd)))
        elif op == "toggle":
            fl = fcntl.fcntl(fd, fcntl.F_GETFL)
            fcntl.fcntl(fd, fcntl.F_SETFL, fl ^ os.O_DIRECT)
            n = os.preadv(fd, [memoryview(buf)[:nb * B]], off)
            check("read after toggling O_DIRECT", bytes(buf[:n]), off)
            fcntl.fcntl(fd, fcntl.F_SETFL, fl)
        if os.fstat(fb).st_size != len(model):
            check("size %d" % os.fstat(fb).st_size, b"?", len(model))
    os.close(fd)
    os.close(fb)
    with open(path, "rb") as f:
        got = f.read()
    check("whole file after close", got, 0)
    if len(got) != len(model):
        check("size after close %d" % len(got), b"?", len(model))
    print("dio_mix: %d ops, size %d" % (ops, len(model)))


if __name__ == "__main__":
    main()
