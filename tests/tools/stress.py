#!/usr/bin/env python3
"""Concurrent namespace and data stress, then a consistency check.

    stress.py run   --dir D [--procs 4] [--seconds 20] [--seed N]
    stress.py check --dir D          (consistency; prints a snapshot to
                                      stdout for comparison across remounts)

run: PROCS processes share one small tree of names (so they collide) and
for SECONDS do create / write / truncate / fsync / rename (files and
directories) / link / unlink / mkdir / rmdir / readdir+stat at random.
Errors a race explains (ENOENT, EEXIST, ENOTEMPTY, ENOTDIR, EISDIR, EINVAL,
EXDEV, EBUSY) are expected; any other (EIO, ENOSPC, EUCLEAN, ...) fails.

Data is self-describing: every write covers whole 64-byte records at
64-byte aligned offsets, each "RFS1" + its own file offset + writer + a
digest of those, so a record is either zeros (a hole) or valid and at the
right offset, whatever the interleaving of writers.

check: every name can be stat'ed; every directory's link count is 2 + its
subdirectories; every regular file's link count is the number of names
found for its inode; every file reads to its size, records intact; the
listing of each directory matches what stat finds.  Prints one line per
name (path, type, size, link group, content digest) for comparison.
"""
import argparse
import errno
import hashlib
import os
import random
import stat
import struct
import sys
import time

REC = 64
EXPECTED = {errno.ENOENT, errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR,
            errno.EISDIR, errno.EINVAL, errno.EXDEV, errno.EBUSY}
DIRS = ["", "a", "b", "a/c", "b/d", "a/c/e"]
NAMES = ["f%d" % i for i in range(12)] + ["a", "b", "c", "d", "e"]


def record(off, who):
    head = b"RFS1" + struct.pack("<QQ", off, who)
    return head + hashlib.blake2b(head, digest_size=REC - len(head)).digest()


def record_ok(data, off):
    if data == b"\0" * REC:
        return True
    if data[:4] != b"RFS1":
        return False
    roff, who = struct.unpack("<QQ", data[4:20])
    return roff == off and data == record(off, who)


class Worker:
    def __init__(self, root, wid, seed):
        self.root = root
        self.wid = wid
        self.r = random.Random(seed * 1000 + wid)
        self.seq = 0
        self.counts = {}

    def path(self):
        d = self.r.choice(DIRS)
        return os.path.join(self.root, d, self.r.choice(NAMES))

    def data(self, off, nrec):
        self.seq += 1
        who = (self.wid << 32) | self.seq
        return b"".join(record(off + i * REC, who) for i in range(nrec))

    def op_write(self):
        p = self.path()
        fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            off = self.r.randrange(0, 512 << 10, REC)
            nrec = self.r.choice([1, 3, 64, 64 * 5, 1024])
            os.pwrite(fd, self.data(off, nrec), off)
            if self.r.random() < 0.1:
                os.fsync(fd)
        finally:
            os.close(fd)

    def op_truncate(self):
        os.truncate(self.path(), self.r.randrange(0, 1 << 20, REC))

    def op_rename(self):
        os.rename(self.path(), self.path())

    def op_rename_dir(self):
        a = os.path.join(self.root, self.r.choice(DIRS[1:]))
        b = os.path.join(self.root, self.r.choice(DIRS), self.r.choice(NAMES))
        os.rename(a, b)

    def op_link(self):
        try:
            os.link(self.path(), self.path())
        except OSError as e:
            if e.errno != errno.EPERM:    # EPERM: the source is a directory
                raise

    def op_unlink(self):
        os.unlink(self.path())

    def op_mkdir(self):
        os.mkdir(os.path.join(self.root, self.r.choice(DIRS)))

    def op_mkdir_name(self):
        os.mkdir(self.path())

    def op_rmdir(self):
        os.rmdir(self.path())

    def op_readdir(self):
        d = os.path.join(self.root, self.r.choice(DIRS))
        for n in os.listdir(d):
            try:
                os.lstat(os.path.join(d, n))
            except OSError as e:
                if e.errno != errno.ENOENT:   # raced with an unlink
                    raise

    def op_read(self):
        with open(self.path(), "rb") as f:
            f.read()

    OPS = [("write", 8), ("truncate", 1), ("rename", 3), ("rename_dir", 1),
           ("link", 2), ("unlink", 3), ("mkdir", 2), ("mkdir_name", 1),
           ("rmdir", 2), ("readdir", 3), ("read", 3)]

    def run(self, deadline):
        names = [n for n, w in self.OPS for _ in range(w)]
        while time.monotonic() < deadline:
            op = self.r.choice(names)
            try:
                getattr(self, "op_" + op)()
                self.counts[op] = self.counts.get(op, 0) + 1
            except OSError as e:
                if e.errno not in EXPECTED:
                    print("worker %d: %s: unexpected %s (%s)" % (
                        self.wid, op, errno.errorcode.get(e.errno), e))
                    return 1
        return 0


def cmd_run(a):
    for d in DIRS[1:]:
        os.makedirs(os.path.join(a.dir, d), exist_ok=True)
    deadline = time.monotonic() + a.seconds
    pids = []
    for wid in range(a.procs):
        pid = os.fork()
        if pid == 0:
            w = Worker(a.dir, wid, a.seed)
            rc = w.run(deadline)
            print("worker %d: %s" % (wid, " ".join(
                "%s=%d" % kv for kv in sorted(w.counts.items()))))
            sys.stdout.flush()
            os._exit(rc)
        pids.append(pid)
    rc = 0
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        rc |= os.waitstatus_to_exitcode(status) != 0
    return rc


def file_digest(path, size, problems):
    h = hashlib.sha1()
    got = 0
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            zero = b"\0" * REC
            for i in range(0, len(chunk) - len(chunk) % REC, REC):
                rec = chunk[i:i + REC]
                if rec != zero and not record_ok(rec, got + i):
                    problems.append("%s: bad record at offset %d" %
                                    (path, got + i))
                    break
            h.update(chunk)
            got += len(chunk)
    if got != size:
        problems.append("%s: read %d bytes, size %d" % (path, got, size))
    return h.hexdigest()[:16]


def cmd_check(a):
    problems, names_of, info = [], {}, {}
    for dirpath, dirs, files in os.walk(a.dir, onerror=lambda e:
                                        problems.append("walk: %s" % e)):
        listed = dirs + files
        st = os.lstat(dirpath)
        if len(listed) != len(set(listed)):
            problems.append("%s: a name listed twice" % dirpath)
        if st.st_nlink != 2 + len(dirs):
            problems.append("%s: nlink %d, %d subdirectories" %
                            (dirpath, st.st_nlink, len(dirs)))
        for n in listed:
            p = os.path.join(dirpath, n)
            try:
                s = os.lstat(p)
            except OSError as e:
                problems.append("%s: listed but lstat: %s" % (p, e))
                continue
            if (n in dirs) != stat.S_ISDIR(s.st_mode):
                problems.append("%s: readdir type disagrees with stat" % p)
            rel = os.path.relpath(p, a.dir)
            if stat.S_ISREG(s.st_mode):
                names_of.setdefault(s.st_ino, []).append(rel)
                info[rel] = ("f", s.st_size, s.st_ino,
                             file_digest(p, s.st_size, problems), s.st_nlink)
            elif stat.S_ISDIR(s.st_mode):
                info[rel] = ("d", 0, s.st_ino, "", s.st_nlink)
            else:
                info[rel] = ("o", s.st_size, s.st_ino, "", s.st_nlink)
    for ino, names in names_of.items():
        nl = info[names[0]][4]
        if nl != len(names):
            problems.append("inode %d: nlink %d, names %s" % (ino, nl, names))
    for rel in sorted(info):
        kind, size, ino, digest, nl = info[rel]
        group = min(names_of.get(ino, [rel])) if kind == "f" else rel
        print("%s %s %d %s %s" % (rel, kind, size, group, digest))
    for p in problems:
        print("PROBLEM " + p, file=sys.stderr)
    print("%d names, %d problems" % (len(info), len(problems)), file=sys.stderr)
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["run", "check"])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--procs", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    return cmd_run(a) if a.cmd == "run" else cmd_check(a)


if __name__ == "__main__":
    sys.exit(main())
