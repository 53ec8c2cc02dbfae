"""workload: files whose contents the fault tests know, and the load that
keeps a mount busy while a member fails (faults.py).

    fs = FileSet()
    fs.write(root, "d/f3", size, seed)  # written, fsynced, remembered
    fs.check(root) -> {rel: "ok" | "wrong" | "eio" | "missing" | errno name}
    busy = Busy(root, fs, readers=[...], seed); busy.start(); busy.stop()

A file's contents are random.Random(seed).randbytes(size): nothing but
the seed and size need be kept.  Busy runs one writer (new files under
busy/, each remembered only once close() returned: what a program may
rely on; the oldest are removed again, so that blocks are freed and
reused) and one reader (the given files, over and over, each compared
with what it must hold); a reader that sees wrong bytes records it.
"""
import errno
import hashlib
import os
import random
import threading


def content(size, seed):
    return random.Random(seed).randbytes(size)


def classify(path, want_sha):
    """How one file reads back now: ok, wrong, eio, missing, or an errno."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        return "missing" if e.errno == errno.ENOENT else errno.errorcode.get(
            e.errno, str(e.errno))
    try:
        # past the kernel's page cache: the daemon must answer
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        h = hashlib.sha256()
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            h.update(b)
    except OSError as e:
        return "eio" if e.errno == errno.EIO else errno.errorcode.get(
            e.errno, str(e.errno))
    finally:
        try:
            os.close(fd)
        except OSError:
            pass                  # the mount went away (a crash)
    return "ok" if h.hexdigest() == want_sha else "wrong"


class FileSet:
    def __init__(self):
        self.files = {}                   # rel -> (size, seed, sha256)
        self.lock = threading.Lock()

    def write(self, root, rel, size, seed):
        data = content(size, seed)
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        self.remember(rel, size, seed, data)

    def remember(self, rel, size, seed, data=None):
        data = content(size, seed) if data is None else data
        with self.lock:
            self.files[rel] = (size, seed, hashlib.sha256(data).hexdigest())

    def copy(self):
        c = FileSet()
        c.files = dict(self.files)
        return c

    def check(self, root):
        with self.lock:
            items = sorted(self.files.items())
        return {rel: classify(os.path.join(root, rel), sha)
                for rel, (_, _, sha) in items}


def summary(statuses):
    """{"ok": 40, "wrong": 1} from a check()."""
    out = {}
    for s in statuses.values():
        out[s] = out.get(s, 0) + 1
    return out


class Busy:
    """A writer and a reader on a mount, until stop()."""

    SIZES = (4096, 20000, 65536, 150000, 400000)
    KEEP = 16        # busy files kept: the oldest goes (the array is small)

    def __init__(self, root, fileset, readers, seed):
        self.root = root
        self.fs = fileset
        self.readers = list(readers)
        self.rng = random.Random(seed)
        self.halt = threading.Event()
        self.crashed = False              # errors after a crash are expected
        self.wrong = set()                # files a reader got wrong bytes of
        self.read_errors = {}             # rel -> status other than ok/wrong
        self.write_errors = {}            # rel -> errno name
        self.written = 0
        self.threads = [threading.Thread(target=self._writer, daemon=True),
                        threading.Thread(target=self._reader, daemon=True)]

    def start(self):
        for t in self.threads:
            t.start()

    def stop(self, crashed=False):
        self.crashed = self.crashed or crashed
        self.halt.set()
        for t in self.threads:
            t.join(timeout=120)

    def _writer(self):
        n = 0
        while not self.halt.is_set():
            rel = "busy/w%04d" % n
            size = self.rng.choice(self.SIZES)
            try:
                if n >= self.KEEP:
                    self._remove("busy/w%04d" % (n - self.KEEP))
                self.fs.write(self.root, rel, size, seed=100000 + n)
                self.written += 1
            except OSError as e:
                if not self.crashed and not self.halt.is_set():
                    self.write_errors[rel] = errno.errorcode.get(e.errno, "?")
                if e.errno in (errno.ENOTCONN, errno.ENXIO):
                    return
            n += 1

    def _remove(self, rel):
        with self.fs.lock:
            self.fs.files.pop(rel, None)
        try:
            os.unlink(os.path.join(self.root, rel))
        except FileNotFoundError:
            pass

    def _reader(self):
        while not self.halt.is_set():
            for rel in self.readers:
                if self.halt.is_set():
                    return
                with self.fs.lock:
                    sha = self.fs.files[rel][2]
                s = classify(os.path.join(self.root, rel), sha)
                if s == "wrong" and not self.crashed:
                    self.wrong.add(rel)
                elif s not in ("ok", "wrong") and not self.crashed:
                    self.read_errors[rel] = s
