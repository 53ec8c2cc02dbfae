#!/usr/bin/env python3
"""Model-based random test: one random sequence of operations applied to a
raidfs mount and to a reference directory on tmpfs; after every step the two
trees must be identical (names, types, sizes, link counts, contents), and
every operation must succeed or fail the same way on both.

    model.py --raidfs BIN --source SOURCE --mnt DIR --ref DIR --seed N
             --ops N [--log FILE] [--pids FILE]

"remount" unmounts (umount(8), through umount_idle.sh), waits for the daemon to exit 0 (it flushes
and marks the array clean), and starts it again.
"""
import argparse
import errno
import os
import random
import stat
import subprocess
import sys
import time

UMOUNT_IDLE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "umount_idle.sh")


class Daemon:
    def __init__(self, args):
        self.a = args
        self.p = None

    def start(self):
        log = open(self.a.log, "a") if self.a.log else subprocess.DEVNULL
        # degraded=allow: a slot left out is named by a path that does
        # not exist, which raidfs takes for a typo unless told
        self.p = subprocess.Popen([self.a.raidfs, "-f", "-o",
                                   "degraded=allow", self.a.source,
                                   self.a.mnt], stdout=log, stderr=log)
        if self.a.pids:
            with open(self.a.pids, "a") as f:
                f.write("%d\n" % self.p.pid)
        for _ in range(400):
            if is_mounted(self.a.mnt):
                return
            if self.p.poll() is not None:
                raise AssertionError("raidfs exited %d before mounting"
                                     % self.p.returncode)
            time.sleep(0.025)
        raise AssertionError("raidfs did not mount in 10 s")

    def stop(self):
        # waits while the mount is busy, as every test's umount does
        subprocess.run([UMOUNT_IDLE, self.a.mnt], check=True)
        rc = self.p.wait(timeout=120)
        if rc != 0:
            raise AssertionError("raidfs exited %d after umount" % rc)


def is_mounted(path):
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == path for line in f)


def snapshot(root):
    """path -> (type, size, nlink, content) for everything under root."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for n in dirs + files:
            full = os.path.join(dirpath, n)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISDIR(st.st_mode):
                out[rel] = ("d", 0, st.st_nlink, None)
            else:
                with open(full, "rb") as f:
                    out[rel] = ("f", st.st_size, st.st_nlink, f.read())
    return out


def compare(a, b, step, op):
    if a == b:
        return
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            def brief(v):
                return v if v is None else v[:3] + (
                    None if v[3] is None else "%d bytes" % len(v[3]),)
            raise AssertionError("step %d (%s): %s differs: raidfs %s, model %s"
                                 % (step, op, k, brief(a.get(k)), brief(b.get(k))))


class Model:
    def __init__(self, args):
        self.a = args
        self.r = random.Random(args.seed)
        self.roots = (args.mnt, args.ref)

    def paths(self, kind):
        """Existing files ('f') or directories ('d', including '.')."""
        out = ["."] if kind == "d" else []
        for dirpath, dirs, files in os.walk(self.a.ref):
            rel = os.path.relpath(dirpath, self.a.ref)
            names = dirs if kind == "d" else files
            out += [os.path.normpath(os.path.join(rel, n)) for n in names]
        return out

    def new_name(self):
        d = self.r.choice(self.paths("d"))
        return os.path.normpath(os.path.join(d, "n%d" % self.r.randrange(40)))

    def any_path(self):
        # never "." itself: renaming the reference root would succeed
        return self.r.choice(self.paths("f") + self.paths("d")[1:] +
                             [self.new_name()])

    def data(self):
        return self.r.randbytes(self.r.choice([1, 100, 4096, 4097, 20000, 65536,
                                               150000]))

    def both(self, fn, *rel):
        """Runs fn(abs paths...) on both trees; the outcomes must agree."""
        res = []
        for root in self.roots:
            try:
                fn(*[os.path.join(root, p) for p in rel])
                res.append(0)
            except OSError as e:
                res.append(e.errno)
        if res[0] != res[1]:
            raise AssertionError("%s%r: raidfs %s, model %s" % (
                fn.__name__, rel, errno.errorcode.get(res[0], res[0]),
                errno.errorcode.get(res[1], res[1])))

    def op_create(self):
        data = self.data()

        def create(p):
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        self.both(create, self.new_name())

    def op_write(self):
        files = self.paths("f")
        if not files:
            return self.op_create()
        data = self.data()
        off = self.r.randrange(0, 300000)

        def write(p):
            fd = os.open(p, os.O_WRONLY)
            try:
                os.pwrite(fd, data, off)
            finally:
                os.close(fd)
        self.both(write, self.r.choice(files))

    def op_truncate(self):
        size = self.r.choice([0, 1, 4095, 4096, 10000, 200000, 500000])

        def truncate(p):
            os.truncate(p, size)
        self.both(truncate, self.any_path())

    def op_rename(self):
        self.both(os.rename, self.any_path(), self.any_path())

    def op_link(self):
        files = self.paths("f")
        src = self.r.choice(files) if files else self.new_name()
        self.both(os.link, src, self.new_name())

    def op_unlink(self):
        self.both(os.unlink, self.any_path())

    def op_mkdir(self):
        self.both(os.mkdir, self.new_name())

    def op_rmdir(self):
        self.both(os.rmdir, self.r.choice(self.paths("d")[1:] or ["absent"]))

    def op_fsync(self):
        def fsync(p):
            fd = os.open(p, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        self.both(fsync, self.any_path())

    OPS = [("create", 5), ("write", 6), ("truncate", 2), ("rename", 3),
           ("link", 2), ("unlink", 3), ("mkdir", 2), ("rmdir", 2),
           ("fsync", 2)]

    def run(self, daemon):
        names = [n for n, w in self.OPS for _ in range(w)]
        for step in range(1, self.a.ops + 1):
            if self.r.random() < self.a.remount_rate:
                op = "remount"
                daemon.stop()
                daemon.start()
            else:
                op = self.r.choice(names)
                getattr(self, "op_" + op)()
            compare(snapshot(self.a.mnt), snapshot(self.a.ref), step, op)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raidfs", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--mnt", required=True)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ops", type=int, default=200)
    ap.add_argument("--remount-rate", type=float, default=0.02)
    ap.add_argument("--log")
    ap.add_argument("--pids")
    a = ap.parse_args()
    a.mnt = os.path.abspath(a.mnt)
    d = Daemon(a)
    d.start()
    ok = False
    try:
        Model(a).run(d)
        ok = True
    finally:
        if is_mounted(a.mnt):
            try:
                d.stop()
            except Exception as e:   # report the first failure, not this one
                if ok:
                    raise
                print("  (stopping after the failure: %s)" % e)
    print("  %d operations, seed %d: identical" % (a.ops, a.seed))


if __name__ == "__main__":
    main()
