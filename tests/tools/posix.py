#!/usr/bin/env python3
"""A pjdfstest-style POSIX conformance suite that uses the kernel's own
behaviour on tmpfs as its reference.

    posix.py --ref DIR --ref-other DIR --test DIR --test-other DIR [CASE...]
    posix.py --snapshot DIR      (the tree's state, to compare across remounts)

Each case is a function that performs a few system calls in a fresh
directory and records their outcomes: "ok" or the errno name, and the
resulting state (modes, owners, sizes, link counts, which of atime / mtime /
ctime changed).  Every case runs first under --ref (tmpfs) and then under
--test (raidfs); the two lists of outcomes must be equal.  Outcomes that
POSIX leaves open are recorded as "info": a difference is printed but is
not a failure.  A few outcomes are also checked against a fixed expectation
(want), which keeps the suite honest about its reference.

--*-other is a directory on another filesystem (for EXDEV).  Runs as root;
the unprivileged steps run in a forked child with setresuid/setresgid and
no supplementary groups.  The mount must allow other users (allow_other).

Prints one line per case, "RESULT name ok|FAIL", details indented below;
exits 1 when any case failed.  --list prints the case names.  Cases in
ISOLATED run only when named.
"""
import argparse
import ctypes
import errno
import hashlib
import os
import pickle
import stat
import sys
import time
import traceback

LIBC = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2
UTIME_NOW, UTIME_OMIT = (1 << 30) - 1, (1 << 30) - 2
AT_SYMLINK_NOFOLLOW = 0x100
XATTR_CREATE, XATTR_REPLACE = 1, 2
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 1, 2

# Two unprivileged users (no passwd entries needed) and a foreign group.
UA, UB, GX = 1001, 1002, 1500

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def ename(e):
    return errno.errorcode.get(e, str(e))


def oserr():
    e = ctypes.get_errno()
    raise OSError(e, os.strerror(e))


# ---- system calls Python does not offer directly ---------------------------
def renameat2(a, b, flags):
    if LIBC.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), flags):
        oserr()


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def utimensat(path, atime, mtime, flags=0):
    """atime/mtime: (sec, nsec), UTIME_NOW, UTIME_OMIT, or both None."""
    def ts(v):
        if isinstance(v, tuple):
            return Timespec(*v)
        return Timespec(0, v)
    times = None if atime is None else (Timespec * 2)(ts(atime), ts(mtime))
    if LIBC.utimensat(AT_FDCWD, path.encode(), times, flags):
        oserr()


def fchmodat_nofollow(path, mode):
    if LIBC.fchmodat(AT_FDCWD, path.encode(), mode, AT_SYMLINK_NOFOLLOW):
        oserr()


def fallocate(fd, mode, off, length):
    LIBC.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long,
                               ctypes.c_long]
    if LIBC.fallocate(fd, mode, off, length):
        oserr()


def getxattr_size(path, name, size):
    """getxattr with a caller-chosen buffer size; returns the length."""
    buf = ctypes.create_string_buffer(max(size, 1))
    n = LIBC.getxattr(path.encode(), name.encode(), buf if size else None,
                      ctypes.c_size_t(size))
    if n < 0:
        oserr()
    return n


def listxattr_size(path, size):
    buf = ctypes.create_string_buffer(max(size, 1))
    n = LIBC.listxattr(path.encode(), buf if size else None,
                       ctypes.c_size_t(size))
    if n < 0:
        oserr()
    return n


# ---- helpers ---------------------------------------------------------------
def outcome(fn, *args, **kw):
    """'ok' (or the value, for calls that return one) or the errno name."""
    try:
        v = fn(*args, **kw)
    except OSError as e:
        return ename(e.errno)
    return "ok" if v is None else v


def brief(v):
    """Long byte strings as length and digest, so reports stay readable."""
    if isinstance(v, bytes) and len(v) > 48:
        return "%d bytes, sha1 %s" % (len(v), hashlib.sha1(v).hexdigest()[:12])
    if isinstance(v, tuple):
        return tuple(brief(x) for x in v)
    return v


def as_user(uid, gid, fn, *args):
    """Runs fn(*args) in a child with the given credentials; its value."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(r)
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            try:
                v = fn(*args)
            except OSError as e:
                v = ename(e.errno)
            except BaseException as e:    # reported by the parent
                v = "exception %r" % (e,)
            os.write(w, pickle.dumps(v))
        except BaseException:
            traceback.print_exc()
            code = 1
        os._exit(code)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return pickle.loads(data) if data else "child failed"


def write_file(path, data=b"", mode=0o644):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def tick():
    """Long enough for any clock (coarse kernel clock included) to move."""
    time.sleep(0.02)


def times(path, follow=True):
    """path: a name or an open fd."""
    st = os.stat(path, follow_symlinks=follow) if isinstance(path, str) \
        else os.fstat(path)
    return (st.st_atime_ns, st.st_mtime_ns, st.st_ctime_ns)


def delta(before, after):
    """Which of atime, mtime, ctime changed: e.g. 'mc'."""
    return "".join(k for k, b, a in zip("amc", before, after) if a != b) or "-"


def mode_of(path, follow=True):
    return "%o" % os.stat(path, follow_symlinks=follow).st_mode


def owner_of(path, follow=True):
    st = os.stat(path, follow_symlinks=follow)
    return "%d:%d" % (st.st_uid, st.st_gid)


def nlink(path):
    return os.lstat(path).st_nlink


class Ctx:
    """One run of one case in directory `d`."""

    def __init__(self, d, other):
        self.d = d
        self.other = other        # a directory on another filesystem
        self.out = []             # (label, value, strict)
        self.wants = []           # (label, value, expected)

    def p(self, *parts):
        return os.path.join(self.d, *parts)

    def r(self, label, value, strict=True):
        self.out.append((label, brief(value), strict))

    def info(self, label, value):
        self.r(label, value, False)

    def e(self, label, fn, *args, **kw):
        v = outcome(fn, *args, **kw)
        self.r(label, v)
        return v

    def want(self, label, value, expected):
        self.r(label, value)
        if value != expected:
            self.wants.append((label, value, expected))

    def we(self, label, expected, fn, *args, **kw):
        self.want(label, outcome(fn, *args, **kw), expected)

    def u(self, label, uid, fn, *args, gid=None):
        self.r(label, as_user(uid, uid if gid is None else gid, fn, *args))

    def timed(self, label, paths, fn, *args, **kw):
        """Runs fn; records its outcome and which times of each path's
        inode changed (followed by an O_PATH fd: it may move or go)."""
        fds = [os.open(p, os.O_PATH | os.O_NOFOLLOW) for p in paths]
        before = [times(fd) for fd in fds]
        tick()
        self.e(label, fn, *args, **kw)
        for i, p in enumerate(paths):
            self.r("%s: times of %s" % (label, os.path.relpath(p, self.d)),
                   delta(before[i], times(fds[i])))
            os.close(fds[i])


# ---- chmod -----------------------------------------------------------------
@case
def chmod_basic(c):
    write_file(c.p("f"))
    c.timed("chmod 0751", [c.p("f")], os.chmod, c.p("f"), 0o751)
    c.want("mode", mode_of(c.p("f")), "100751")
    c.e("chmod 07777", os.chmod, c.p("f"), 0o7777)
    c.r("mode after 07777", mode_of(c.p("f")))
    os.mkdir(c.p("d"))
    c.e("chmod dir 01777", os.chmod, c.p("d"), 0o1777)
    c.r("dir mode", mode_of(c.p("d")))
    os.symlink("f", c.p("l"))
    c.e("chmod via symlink", os.chmod, c.p("l"), 0o600)
    c.r("target mode", mode_of(c.p("f")))
    c.r("link mode", mode_of(c.p("l"), False))
    c.e("fchmodat AT_SYMLINK_NOFOLLOW", fchmodat_nofollow, c.p("l"), 0o600)
    c.we("chmod missing", "ENOENT", os.chmod, c.p("nope"), 0o644)
    c.we("chmod through file", "ENOTDIR", os.chmod, c.p("f", "x"), 0o644)


@case
def chmod_perm(c):
    os.chmod(c.d, 0o777)
    write_file(c.p("root"))
    write_file(c.p("mine"))
    os.chown(c.p("mine"), UA, UA)
    c.u("non-owner chmod", UA, outcome, os.chmod, c.p("root"), 0o600)
    c.u("owner chmod", UA, outcome, os.chmod, c.p("mine"), 0o600)
    c.r("mode", mode_of(c.p("mine")))
    # setgid on a file whose group the owner is not in: bit silently dropped
    os.chown(c.p("mine"), UA, GX)
    c.u("owner chmod g+s, foreign group", UA, outcome, os.chmod, c.p("mine"),
        0o2755)
    c.want("setgid dropped", mode_of(c.p("mine")), "100755")
    os.chown(c.p("mine"), UA, UA)
    c.u("owner chmod u+s g+s, own group", UA, outcome, os.chmod, c.p("mine"),
        0o6755)
    c.want("setuid setgid kept", mode_of(c.p("mine")), "106755")
    os.mkdir(c.p("d"))
    os.chown(c.p("d"), UA, UA)
    c.u("owner chmod dir +t", UA, outcome, os.chmod, c.p("d"), 0o1755)
    c.r("dir mode", mode_of(c.p("d")))


# ---- chown / lchown ----------------------------------------------------------
@case
def chown_root(c):
    write_file(c.p("f"))
    c.timed("chown 123:456", [c.p("f")], os.chown, c.p("f"), 123, 456)
    c.want("owner", owner_of(c.p("f")), "123:456")
    c.timed("chown -1:-1", [c.p("f")], os.chown, c.p("f"), -1, -1)
    c.r("owner", owner_of(c.p("f")))
    os.symlink("f", c.p("l"))
    c.e("lchown", os.lchown, c.p("l"), 7, 8)
    c.r("link owner", owner_of(c.p("l"), False))
    c.r("target owner", owner_of(c.p("f")))
    c.e("chown via symlink", os.chown, c.p("l"), 9, 10)
    c.r("target owner", owner_of(c.p("f")))
    c.r("link owner", owner_of(c.p("l"), False))
    c.we("chown missing", "ENOENT", os.chown, c.p("nope"), 1, 1)


@case
def chown_clears_suid(c):
    for name, mode in (("ug", 0o6755), ("g_noexec", 0o2745), ("u", 0o4700)):
        write_file(c.p(name))
        os.chmod(c.p(name), mode)
        c.e("chown " + name, os.chown, c.p(name), UA, UA)
        c.r("mode of " + name, mode_of(c.p(name)))
    c.want("suid+sgid cleared by chown", mode_of(c.p("ug")), "100755")
    os.mkdir(c.p("d"))
    os.chmod(c.p("d"), 0o3755)
    c.e("chown dir", os.chown, c.p("d"), UA, UA)
    c.r("dir mode after chown", mode_of(c.p("d")))
    # an owner's chgrp to its own group also clears them
    write_file(c.p("own"))
    os.chown(c.p("own"), UA, GX)
    os.chmod(c.p("own"), 0o6755)
    c.u("owner chgrp", UA, outcome, os.chown, c.p("own"), -1, UA)
    c.r("mode after owner chgrp", mode_of(c.p("own")))
    c.r("owner after chgrp", owner_of(c.p("own")))


@case
def chown_perm(c):
    write_file(c.p("mine"))
    os.chown(c.p("mine"), UA, UA)
    write_file(c.p("root"))
    c.u("user gives file away", UA, outcome, os.chown, c.p("mine"), UB, -1)
    c.u("user chgrp to foreign group", UA, outcome, os.chown, c.p("mine"),
        -1, GX)
    c.u("user chgrp to own group", UA, outcome, os.chown, c.p("mine"), -1, UA)
    c.u("user chown -1 -1 own", UA, outcome, os.chown, c.p("mine"), -1, -1)
    c.u("user chown -1 -1 not own", UA, outcome, os.chown, c.p("root"), -1, -1)
    c.u("user chown to self, not own", UA, outcome, os.chown, c.p("root"),
        UA, -1)
    c.r("owner", owner_of(c.p("mine")))


@case
def write_clears_suid(c):
    os.chmod(c.d, 0o777)
    for name, mode in (("ug", 0o6777), ("g_noexec", 0o2666), ("u", 0o4766)):
        write_file(c.p(name), b"0123456789")
        os.chmod(c.p(name), mode)

        def w(path):
            fd = os.open(path, os.O_WRONLY)
            os.write(fd, b"x")
            os.close(fd)
            return "ok"
        c.u("write " + name + " as non-owner", UA, w, c.p(name))
        c.r("mode of " + name + " after write", mode_of(c.p(name)))
    c.want("write by non-owner clears suid+sgid", mode_of(c.p("ug")),
           "100777")
    write_file(c.p("t"), b"0123456789")
    os.chmod(c.p("t"), 0o6777)
    c.u("truncate as non-owner", UA, outcome, os.truncate, c.p("t"), 3)
    c.r("mode after truncate", mode_of(c.p("t")))
    write_file(c.p("r"), b"0123456789")
    os.chmod(c.p("r"), 0o6777)
    fd = os.open(c.p("r"), os.O_WRONLY)
    c.e("write as root", os.write, fd, b"y")
    os.close(fd)
    c.r("mode after root write", mode_of(c.p("r")))


# ---- link --------------------------------------------------------------------
@case
def link_basic(c):
    os.mkdir(c.p("d"))
    write_file(c.p("f"), b"data")
    c.timed("link", [c.p("f"), c.p("d")], os.link, c.p("f"), c.p("d", "g"))
    c.want("nlink", nlink(c.p("f")), 2)
    c.r("same inode", os.stat(c.p("f")).st_ino == os.stat(c.p("d", "g")).st_ino)
    c.r("data", read_file(c.p("d", "g")))
    c.we("link over existing", "EEXIST", os.link, c.p("f"), c.p("d", "g"))
    c.we("link dir", "EPERM", os.link, c.p("d"), c.p("d2"))
    c.we("link missing", "ENOENT", os.link, c.p("nope"), c.p("x"))
    c.we("link into missing dir", "ENOENT", os.link, c.p("f"), c.p("no", "x"))
    c.we("link through file", "ENOTDIR", os.link, c.p("f"), c.p("f", "x"))
    c.we("link src trailing slash", "ENOTDIR", os.link, c.p("f") + "/",
         c.p("x"))
    c.e("link to other fs", os.link, c.p("f"), os.path.join(c.other, "xdev"))
    os.symlink("f", c.p("s"))
    c.e("link a symlink", os.link, c.p("s"), c.p("s2"), follow_symlinks=False)
    c.r("link of symlink is symlink", os.path.islink(c.p("s2")))
    c.r("symlink nlink", nlink(c.p("s")))
    c.e("link following symlink", os.link, c.p("s"), c.p("s3"),
        follow_symlinks=True)
    c.r("f nlink", nlink(c.p("f")))
    os.unlink(c.p("f"))
    c.r("nlink after unlink", nlink(c.p("d", "g")))
    c.r("data via other name", read_file(c.p("d", "g")))


@case
def link_perm(c):
    os.mkdir(c.p("ro"))
    os.chmod(c.d, 0o777)
    write_file(c.p("f"))
    os.chmod(c.p("f"), 0o644)
    write_file(c.p("secret"))
    os.chmod(c.p("secret"), 0o600)
    c.u("link into non-writable dir", UA, outcome, os.link, c.p("f"),
        c.p("ro", "x"))
    c.u("link root's 0600 file (protected_hardlinks)", UA, outcome, os.link,
        c.p("secret"), c.p("y"))
    write_file(c.p("ua"))
    os.chown(c.p("ua"), UA, UA)
    c.u("link own file", UA, outcome, os.link, c.p("ua"), c.p("z"))


# ---- mkdir -------------------------------------------------------------------
@case
def mkdir_basic(c):
    n0 = nlink(c.d)
    c.timed("mkdir", [c.d], os.mkdir, c.p("a"), 0o755)
    c.want("mode", mode_of(c.p("a")), "40755")
    c.want("nlink of new", nlink(c.p("a")), 2)
    c.want("parent nlink", nlink(c.d) - n0, 1)
    c.e("mkdir 07777", os.mkdir, c.p("b"), 0o7777)
    c.r("mode", mode_of(c.p("b")))
    c.e("mkdir 0", os.mkdir, c.p("z"), 0)
    c.r("mode 0", mode_of(c.p("z")))
    c.we("exists", "EEXIST", os.mkdir, c.p("a"))
    write_file(c.p("f"))
    c.we("over file", "EEXIST", os.mkdir, c.p("f"))
    os.symlink("nowhere", c.p("dangling"))
    c.we("over dangling symlink", "EEXIST", os.mkdir, c.p("dangling"))
    c.we("missing parent", "ENOENT", os.mkdir, c.p("no", "x"))
    c.we("through file", "ENOTDIR", os.mkdir, c.p("f", "x"))
    c.e("trailing slash", os.mkdir, c.p("t") + "/")
    c.r("exists", os.path.isdir(c.p("t")))
    for i in range(5):
        os.mkdir(c.p("a", "s%d" % i))
    c.want("nlink with 5 subdirs", nlink(c.p("a")), 7)
    write_file(c.p("a", "file"))
    c.want("files do not count", nlink(c.p("a")), 7)
    c.we("mkdir .", "EEXIST", os.mkdir, c.p("a", "."))
    c.we("mkdir ..", "EEXIST", os.mkdir, c.p("a", ".."))


@case
def mkdir_sgid(c):
    os.mkdir(c.p("g"))
    os.chown(c.p("g"), 0, GX)
    os.chmod(c.p("g"), 0o2777)
    c.e("mkdir in setgid dir", os.mkdir, c.p("g", "sub"))
    c.want("subdir group", owner_of(c.p("g", "sub")), "0:%d" % GX)
    c.want("subdir inherits setgid", mode_of(c.p("g", "sub")), "42755")
    write_file(c.p("g", "f"))
    c.want("file group", owner_of(c.p("g", "f")), "0:%d" % GX)
    c.r("file mode", mode_of(c.p("g", "f")))
    c.u("user creates in setgid dir", UA,
        lambda: (write_file(c.p("g", "uf"), mode=0o2755),
                 mode_of(c.p("g", "uf")), owner_of(c.p("g", "uf"))))
    c.u("user mkdir in setgid dir", UA,
        lambda: (os.mkdir(c.p("g", "ud")), mode_of(c.p("g", "ud")),
                 owner_of(c.p("g", "ud"))))
    c.u("user mkdir in root dir", UA, outcome, os.mkdir, c.p("nope"))


# ---- mkfifo / mknod ----------------------------------------------------------
@case
def mknod_all(c):
    c.e("mkfifo", os.mkfifo, c.p("fifo"), 0o640)
    c.r("fifo mode", mode_of(c.p("fifo")))
    c.we("mkfifo exists", "EEXIST", os.mkfifo, c.p("fifo"))
    fd = os.open(c.p("fifo"), os.O_RDONLY | os.O_NONBLOCK)
    c.r("fifo read, no writer", os.read(fd, 10))
    os.close(fd)
    c.e("mknod char", os.mknod, c.p("chr"), stat.S_IFCHR | 0o600,
        os.makedev(1, 3))
    st = os.stat(c.p("chr"))
    c.r("char", (mode_of(c.p("chr")), os.major(st.st_rdev),
                 os.minor(st.st_rdev), st.st_size))
    c.e("mknod block", os.mknod, c.p("blk"), stat.S_IFBLK | 0o600,
        os.makedev(7, 250))
    st = os.stat(c.p("blk"))
    c.r("block", (mode_of(c.p("blk")), os.major(st.st_rdev),
                  os.minor(st.st_rdev)))
    c.e("mknod socket", os.mknod, c.p("sock"), stat.S_IFSOCK | 0o644)
    c.r("socket mode", mode_of(c.p("sock")))
    c.e("mknod regular", os.mknod, c.p("reg"), stat.S_IFREG | 0o644)
    c.r("regular", (mode_of(c.p("reg")), os.stat(c.p("reg")).st_size))
    c.e("mknod dir type", os.mknod, c.p("dir"), stat.S_IFDIR | 0o755)
    c.e("mknod bad type", os.mknod, c.p("bad"), 0o170000 | 0o644)
    c.we("mknod exists", "EEXIST", os.mknod, c.p("reg"), stat.S_IFREG)
    os.chmod(c.d, 0o777)
    c.u("user mknod char", UA, outcome, os.mknod, c.p("uc"),
        stat.S_IFCHR | 0o600, os.makedev(1, 3))
    c.u("user mkfifo", UA, outcome, os.mkfifo, c.p("uf"))
    c.r("user fifo owner", owner_of(c.p("uf")) if os.path.exists(c.p("uf"))
        else None)


# ---- open --------------------------------------------------------------------
@case
def open_create(c):
    os.umask(0o022)
    c.timed("O_CREAT new", [c.d], lambda: os.close(
        os.open(c.p("f"), os.O_CREAT | os.O_WRONLY, 0o777)))
    c.want("mode with umask", mode_of(c.p("f")), "100755")
    c.timed("O_CREAT existing", [c.d, c.p("f")], lambda: os.close(
        os.open(c.p("f"), os.O_CREAT | os.O_WRONLY, 0o600)))
    c.r("mode kept", mode_of(c.p("f")))
    c.we("O_EXCL existing", "EEXIST", os.open, c.p("f"),
         os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    os.symlink("missing", c.p("dangle"))
    c.we("O_EXCL dangling symlink", "EEXIST", os.open, c.p("dangle"),
         os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    c.e("O_CREAT via dangling symlink", lambda: os.close(
        os.open(c.p("dangle"), os.O_CREAT | os.O_WRONLY, 0o644)))
    c.r("symlink target created", os.path.exists(c.p("missing")))
    os.mkdir(c.p("d"))
    c.we("O_CREAT on dir", "EISDIR", os.open, c.p("d"), os.O_CREAT | os.O_WRONLY)
    c.we("O_WRONLY on dir", "EISDIR", os.open, c.p("d"), os.O_WRONLY)
    c.we("O_RDWR on dir", "EISDIR", os.open, c.p("d"), os.O_RDWR)
    c.we("O_CREAT trailing slash", "EISDIR", os.open, c.p("new") + "/",
         os.O_CREAT | os.O_WRONLY)
    c.we("file with trailing slash", "ENOTDIR", os.open, c.p("f") + "/",
         os.O_RDONLY)
    c.we("missing", "ENOENT", os.open, c.p("nope"), os.O_RDONLY)
    c.we("through file", "ENOTDIR", os.open, c.p("f", "x"),
         os.O_CREAT | os.O_WRONLY)
    c.e("O_CREAT mode 07777", lambda: os.close(
        os.open(c.p("m"), os.O_CREAT | os.O_WRONLY, 0o7777)))
    c.r("mode", mode_of(c.p("m")))


@case
def open_flags(c):
    write_file(c.p("f"), b"0123456789")
    os.symlink("f", c.p("l"))
    os.mkdir(c.p("d"))
    os.symlink("d", c.p("ld"))
    c.we("O_DIRECTORY on file", "ENOTDIR", os.open, c.p("f"), os.O_DIRECTORY)
    c.e("O_DIRECTORY on dir", lambda: os.close(
        os.open(c.p("d"), os.O_DIRECTORY)))
    c.e("O_DIRECTORY via symlink to dir", lambda: os.close(
        os.open(c.p("ld"), os.O_DIRECTORY)))
    c.we("O_NOFOLLOW on symlink", "ELOOP", os.open, c.p("l"),
         os.O_RDONLY | os.O_NOFOLLOW)
    c.e("O_NOFOLLOW on file", lambda: os.close(
        os.open(c.p("f"), os.O_RDONLY | os.O_NOFOLLOW)))
    c.e("O_NOFOLLOW|O_PATH on symlink", lambda: os.close(
        os.open(c.p("l"), os.O_PATH | os.O_NOFOLLOW)))
    c.timed("O_TRUNC", [c.p("f")], lambda: os.close(
        os.open(c.p("f"), os.O_WRONLY | os.O_TRUNC)))
    c.want("size after O_TRUNC", os.stat(c.p("f")).st_size, 0)
    c.timed("O_TRUNC on empty", [c.p("f")], lambda: os.close(
        os.open(c.p("f"), os.O_WRONLY | os.O_TRUNC)))
    write_file(c.p("g"), b"abc")
    c.timed("O_RDONLY|O_TRUNC", [c.p("g")], lambda: os.close(
        os.open(c.p("g"), os.O_RDONLY | os.O_TRUNC)))
    c.r("size", os.stat(c.p("g")).st_size)


@case
def open_append(c):
    write_file(c.p("f"), b"abc")
    fd = os.open(c.p("f"), os.O_WRONLY | os.O_APPEND)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, b"DEF")
    c.r("lseek(0) then write", os.lseek(fd, 0, os.SEEK_CUR))
    c.e("pwrite at 0 with O_APPEND", os.pwrite, fd, b"GH", 0)
    os.close(fd)
    c.want("contents", read_file(c.p("f")), b"abcDEFGH")
    fd = os.open(c.p("f"), os.O_RDWR | os.O_APPEND)
    os.ftruncate(fd, 2)
    os.write(fd, b"Z")
    os.close(fd)
    c.want("append after ftruncate", read_file(c.p("f")), b"abZ")


@case
def open_perm(c):
    os.chmod(c.d, 0o755)
    write_file(c.p("secret"), b"s")
    os.chmod(c.p("secret"), 0o600)
    write_file(c.p("pub"), b"p")
    os.chmod(c.p("pub"), 0o644)
    c.u("read 0600 root file", UA, outcome, os.open, c.p("secret"), os.O_RDONLY)
    c.u("write 0644 root file", UA, outcome, os.open, c.p("pub"), os.O_WRONLY)
    c.u("read 0644", UA, lambda: os.read(os.open(c.p("pub"), os.O_RDONLY), 9))
    c.u("create in root 0755 dir", UA, outcome, os.open, c.p("n"),
        os.O_CREAT | os.O_WRONLY)
    os.mkdir(c.p("noexec"))
    write_file(c.p("noexec", "f"))
    os.chmod(c.p("noexec"), 0o766)
    c.u("open through dir without x", UA, outcome, os.open,
        c.p("noexec", "f"), os.O_RDONLY)
    c.u("access W_OK", UA, outcome, os.access, c.p("pub"), os.W_OK)
    c.u("access R_OK", UA, outcome, os.access, c.p("pub"), os.R_OK)
    c.r("root access X_OK on 0644", os.access(c.p("pub"), os.X_OK))
    c.r("root access W_OK on 0600", os.access(c.p("secret"), os.W_OK))


@case
def open_unlinked(c):
    write_file(c.p("f"), b"still here")
    fd = os.open(c.p("f"), os.O_RDWR)
    os.unlink(c.p("f"))
    c.want("fstat nlink", os.fstat(fd).st_nlink, 0)
    c.want("read after unlink", os.pread(fd, 100, 0), b"still here")
    os.pwrite(fd, b"X", 20)
    c.r("size after write", os.fstat(fd).st_size)
    os.close(fd)
    c.r("listing", sorted(os.listdir(c.d)))
    # rename over an open file: the old inode lives on behind the fd
    write_file(c.p("a"), b"old")
    write_file(c.p("b"), b"new")
    fd = os.open(c.p("a"), os.O_RDONLY)
    os.rename(c.p("b"), c.p("a"))
    c.want("replaced file read via fd", os.pread(fd, 10, 0), b"old")
    c.r("replaced file nlink", os.fstat(fd).st_nlink)
    os.close(fd)


@case
def open_tmpfile(c):
    """O_TMPFILE is not required of raidfs: outcomes are info only."""
    fd = outcome(os.open, c.d, os.O_TMPFILE | os.O_RDWR, 0o600)
    c.info("O_TMPFILE", fd if isinstance(fd, str) else "ok")
    if isinstance(fd, str):
        return
    os.write(fd, b"tmp")
    os.close(fd)


# ---- rename ------------------------------------------------------------------
@case
def rename_files(c):
    write_file(c.p("a"), b"A")
    write_file(c.p("b"), b"B")
    fd = os.open(c.p("b"), os.O_RDONLY)
    c.timed("rename over file", [c.p("a"), c.d], os.rename, c.p("a"), c.p("b"))
    c.want("replaced fd nlink", os.fstat(fd).st_nlink, 0)
    os.close(fd)
    c.want("contents", read_file(c.p("b")), b"A")
    c.we("old name gone", "ENOENT", os.stat, c.p("a"))
    c.timed("rename to itself", [c.p("b"), c.d], os.rename, c.p("b"), c.p("b"))
    os.link(c.p("b"), c.p("h"))
    c.e("rename between hard links", os.rename, c.p("b"), c.p("h"))
    c.want("both names stay", sorted(os.listdir(c.d)), ["b", "h"])
    c.r("nlink", nlink(c.p("b")))
    c.we("missing source", "ENOENT", os.rename, c.p("nope"), c.p("x"))
    c.we("missing target dir", "ENOENT", os.rename, c.p("b"), c.p("no", "x"))
    c.we("target through file", "ENOTDIR", os.rename, c.p("b"),
         c.p("h", "x"))
    c.e("to other fs", os.rename, c.p("b"), os.path.join(c.other, "x"))
    c.we("file with trailing slash", "ENOTDIR", os.rename, c.p("b") + "/",
         c.p("x"))
    c.we("to name with trailing slash", "ENOTDIR", os.rename, c.p("b"),
         c.p("x") + "/")
    c.we("empty name", "ENOENT", os.rename, "", c.p("x"))
    os.symlink("b", c.p("s"))
    c.e("rename symlink", os.rename, c.p("s"), c.p("s2"))
    c.r("symlink moved, not target", (os.readlink(c.p("s2")),
                                      os.path.exists(c.p("b"))))


@case
def rename_dirs(c):
    for n in ("a", "b", "full", "p1", "p2"):
        os.mkdir(c.p(n))
    write_file(c.p("a", "in"))
    write_file(c.p("full", "x"))
    write_file(c.p("f"))
    c.timed("dir over empty dir", [c.p("a"), c.d], os.rename, c.p("a"),
            c.p("b"))
    c.want("moved contents", os.listdir(c.p("b")), ["in"])
    c.e("dir over non-empty dir", os.rename, c.p("b"), c.p("full"))
    c.we("dir over file", "ENOTDIR", os.rename, c.p("b"), c.p("f"))
    c.we("file over dir", "EISDIR", os.rename, c.p("f"), c.p("b"))
    os.mkdir(c.p("b", "sub"))
    c.we("dir into own child", "EINVAL", os.rename, c.p("b"),
         c.p("b", "sub", "x"))
    c.we("dir into itself", "EINVAL", os.rename, c.p("b"), c.p("b", "x"))
    c.we("parent over own child", "EINVAL", os.rename, c.p("b"),
         c.p("b", "sub"))
    c.we("child over own parent", "ENOTEMPTY", os.rename, c.p("b", "sub"),
         c.p("b"))
    c.e("dir to itself", os.rename, c.p("b"), c.p("b"))
    c.e("dir with trailing slashes", os.rename, c.p("b") + "/",
        c.p("c") + "/")
    c.r("renamed", os.path.isdir(c.p("c")))
    c.e("rename .", os.rename, c.p("c", "."), c.p("dot"))
    c.e("rename ..", os.rename, c.p("c", "sub", ".."), c.p("dotdot"))
    c.e("rename onto .", os.rename, c.p("p2"), c.p("c", "."))
    os.mkdir(c.p("p1", "m"))
    n1, n2 = nlink(c.p("p1")), nlink(c.p("p2"))
    c.timed("dir to other parent", [c.p("p1", "m"), c.p("p1"), c.p("p2")],
            os.rename, c.p("p1", "m"), c.p("p2", "m"))
    c.want("nlink of parents", (nlink(c.p("p1")) - n1, nlink(c.p("p2")) - n2),
           (-1, 1))
    c.want(".. follows", os.stat(c.p("p2", "m", "..")).st_ino ==
           os.stat(c.p("p2")).st_ino, True)
    os.mkdir(c.p("p1", "e"))
    os.mkdir(c.p("p2", "e2"))
    n1, n2 = nlink(c.p("p1")), nlink(c.p("p2"))
    c.e("dir over empty dir, other parent", os.rename, c.p("p1", "e"),
        c.p("p2", "e2"))
    c.want("nlink of parents", (nlink(c.p("p1")) - n1, nlink(c.p("p2")) - n2),
           (-1, 0))


@case
def rename_flags(c):
    write_file(c.p("x"), b"x")
    write_file(c.p("y"), b"y")
    os.mkdir(c.p("d1"))
    os.mkdir(c.p("d1", "s"))
    os.mkdir(c.p("d2"))
    c.we("NOREPLACE onto existing", "EEXIST", renameat2, c.p("x"), c.p("y"),
         RENAME_NOREPLACE)
    c.e("NOREPLACE to new", renameat2, c.p("x"), c.p("z"), RENAME_NOREPLACE)
    c.timed("EXCHANGE files", [c.p("z"), c.p("y")], renameat2, c.p("z"),
            c.p("y"), RENAME_EXCHANGE)
    c.want("exchanged", (read_file(c.p("z")), read_file(c.p("y"))),
           (b"y", b"x"))
    n0, n1, n2 = nlink(c.d), nlink(c.p("d1")), nlink(c.p("d2"))
    c.e("EXCHANGE dir with file in other dir", renameat2, c.p("d1", "s"),
        c.p("y"), RENAME_EXCHANGE)
    c.r("nlinks after exchange", (nlink(c.d) - n0, nlink(c.p("d1")) - n1,
                                  nlink(c.p("d2")) - n2))
    c.r(".. of moved dir", os.stat(c.p("y", "..")).st_ino == os.stat(c.d).st_ino)
    c.we("EXCHANGE with missing", "ENOENT", renameat2, c.p("z"), c.p("nope"),
         RENAME_EXCHANGE)
    c.e("EXCHANGE|NOREPLACE", renameat2, c.p("z"), c.p("y"),
        RENAME_EXCHANGE | RENAME_NOREPLACE)
    c.e("EXCHANGE dir into own subtree", renameat2, c.d,
        c.p("y"), RENAME_EXCHANGE)


@case
def rename_sticky(c):
    os.chmod(c.d, 0o755)
    os.mkdir(c.p("t"))
    os.chmod(c.p("t"), 0o1777)
    for n, uid in (("ua", UA), ("ua2", UA), ("ub", UB), ("root", 0)):
        write_file(c.p("t", n))
        os.chown(c.p("t", n), uid, uid)
    os.mkdir(c.p("t", "uadir"))
    os.chown(c.p("t", "uadir"), UA, UA)
    c.u("B renames A's file", UB, outcome, os.rename, c.p("t", "ua"),
        c.p("t", "x"))
    c.u("B unlinks A's file", UB, outcome, os.unlink, c.p("t", "ua"))
    c.u("B rmdir A's dir", UB, outcome, os.rmdir, c.p("t", "uadir"))
    c.u("B renames own file over A's", UB, outcome, os.rename,
        c.p("t", "ub"), c.p("t", "ua"))
    c.u("A renames own file", UA, outcome, os.rename, c.p("t", "ua"),
        c.p("t", "ua3"))
    c.u("A renames own over root's", UA, outcome, os.rename, c.p("t", "ua3"),
        c.p("t", "root"))
    c.u("A renames own over own", UA, outcome, os.rename, c.p("t", "ua3"),
        c.p("t", "ua2"))
    c.e("root renames B's file", os.rename, c.p("t", "ub"), c.p("t", "ub2"))
    # the directory's owner may remove anything in it
    os.chown(c.p("t"), UB, UB)
    c.u("dir owner unlinks A's file", UB, outcome, os.unlink, c.p("t", "ua2"))
    c.r("listing", sorted(os.listdir(c.p("t"))))


@case
def rename_perm(c):
    os.chmod(c.d, 0o777)
    os.mkdir(c.p("p1"))
    os.mkdir(c.p("p2"))
    os.chmod(c.p("p1"), 0o777)
    os.chmod(c.p("p2"), 0o777)
    os.mkdir(c.p("p1", "rootdir"))       # 0755, root's: ".." not writable
    write_file(c.p("p1", "rootfile"))
    c.u("move root's dir to other parent", UA, outcome, os.rename,
        c.p("p1", "rootdir"), c.p("p2", "rootdir"))
    c.u("rename root's dir in place", UA, outcome, os.rename,
        c.p("p1", "rootdir"), c.p("p1", "rd"))
    c.u("move root's file to other parent", UA, outcome, os.rename,
        c.p("p1", "rootfile"), c.p("p2", "rootfile"))
    os.mkdir(c.p("ro"))
    write_file(c.p("ro", "f"))
    c.u("rename in non-writable dir", UA, outcome, os.rename,
        c.p("ro", "f"), c.p("ro", "g"))
    c.u("move out of non-writable dir", UA, outcome, os.rename,
        c.p("ro", "f"), c.p("p1", "g"))


@case
def rename_times(c):
    os.mkdir(c.p("s"))
    os.mkdir(c.p("t"))
    write_file(c.p("s", "f"), b"data")
    c.timed("rename file across dirs", [c.p("s", "f"), c.p("s"), c.p("t")],
            os.rename, c.p("s", "f"), c.p("t", "f"))
    os.mkdir(c.p("s", "d"))
    c.timed("rename dir across dirs", [c.p("s", "d"), c.p("s"), c.p("t")],
            os.rename, c.p("s", "d"), c.p("t", "d"))
    write_file(c.p("t", "g"))
    c.timed("rename within dir", [c.p("t", "g"), c.p("t")],
            os.rename, c.p("t", "g"), c.p("t", "h"))


# ---- rmdir / unlink ----------------------------------------------------------
@case
def rmdir_all(c):
    os.mkdir(c.p("a"))
    n0 = nlink(c.d)
    c.timed("rmdir", [c.d], os.rmdir, c.p("a"))
    c.want("parent nlink", nlink(c.d) - n0, -1)
    os.mkdir(c.p("full"))
    write_file(c.p("full", "x"))
    c.we("non-empty", "ENOTEMPTY", os.rmdir, c.p("full"))
    c.we("file", "ENOTDIR", os.rmdir, c.p("full", "x"))
    c.we("missing", "ENOENT", os.rmdir, c.p("nope"))
    c.we("rmdir .", "EINVAL", os.rmdir, c.p("full", "."))
    c.e("rmdir ..", os.rmdir, c.p("full", ".."))
    os.mkdir(c.p("ts"))
    c.e("trailing slash", os.rmdir, c.p("ts") + "/")
    os.symlink("full", c.p("ls"))
    c.we("symlink to dir", "ENOTDIR", os.rmdir, c.p("ls"))
    os.mkdir(c.p("open"))
    fd = os.open(c.p("open"), os.O_RDONLY | os.O_DIRECTORY)
    os.rmdir(c.p("open"))
    c.r("fstat of removed dir", os.fstat(fd).st_nlink)
    c.r("listdir of removed dir", os.listdir(fd))
    c.r("create in removed dir", outcome(os.open, "x", os.O_CREAT | os.O_WRONLY,
                                         0o644, dir_fd=fd))
    os.close(fd)
    os.mkdir(c.p("ro"))
    os.mkdir(c.p("ro", "sub"))
    c.u("rmdir in non-writable dir", UA, outcome, os.rmdir, c.p("ro", "sub"))


@case
def unlink_all(c):
    write_file(c.p("f"), b"x")
    os.link(c.p("f"), c.p("g"))
    c.timed("unlink one of two links", [c.p("g"), c.d], os.unlink, c.p("f"))
    c.want("nlink", nlink(c.p("g")), 1)
    os.mkdir(c.p("d"))
    c.we("unlink dir", "EISDIR", os.unlink, c.p("d"))
    c.we("missing", "ENOENT", os.unlink, c.p("nope"))
    c.we("trailing slash", "ENOTDIR", os.unlink, c.p("g") + "/")
    c.we("through file", "ENOTDIR", os.unlink, c.p("g", "x"))
    os.symlink("g", c.p("s"))
    c.e("unlink symlink", os.unlink, c.p("s"))
    c.r("target kept", os.path.exists(c.p("g")))
    os.mkdir(c.p("ro"))
    write_file(c.p("ro", "f"))
    os.chmod(c.p("ro", "f"), 0o666)
    c.u("unlink in non-writable dir", UA, outcome, os.unlink, c.p("ro", "f"))
    c.r("listing", sorted(os.listdir(c.d)))


@case
def unlink_special(c):
    """Isolated: t310 runs it alone on its own mount (freeing these inodes
    once hung the daemon)."""
    os.mkfifo(c.p("fifo"))
    os.mknod(c.p("sock"), stat.S_IFSOCK | 0o644)
    os.mknod(c.p("chr"), stat.S_IFCHR | 0o600, os.makedev(1, 3))
    for n in ("fifo", "sock", "chr"):
        c.timed("unlink " + n, [c.d], os.unlink, c.p(n))
    c.r("listing", os.listdir(c.d))


ISOLATED = ["unlink_special"]


# ---- symlink / readlink ------------------------------------------------------
@case
def symlink_all(c):
    c.timed("symlink", [c.d], os.symlink, "some/target", c.p("l"))
    c.want("readlink", os.readlink(c.p("l")), "some/target")
    st = os.lstat(c.p("l"))
    c.want("lstat", (stat.S_ISLNK(st.st_mode), st.st_size,
                     st.st_mode & 0o777), (True, 11, 0o777))
    c.we("exists", "EEXIST", os.symlink, "x", c.p("l"))
    c.we("empty target", "ENOENT", os.symlink, "", c.p("e"))
    c.e("4095-byte target", os.symlink, "t" * 4095, c.p("long"))
    c.r("long readlink length", len(os.readlink(c.p("long"))))
    c.we("4096-byte target", "ENAMETOOLONG", os.symlink, "t" * 4096, c.p("l2"))
    write_file(c.p("f"))
    c.we("readlink on file", "EINVAL", os.readlink, c.p("f"))
    os.symlink("loop2", c.p("loop1"))
    os.symlink("loop1", c.p("loop2"))
    c.we("stat symlink loop", "ELOOP", os.stat, c.p("loop1"))
    c.we("open symlink loop", "ELOOP", os.open, c.p("loop1"), os.O_RDONLY)
    os.symlink("self", c.p("self"))
    c.we("self loop", "ELOOP", os.stat, c.p("self"))
    os.mkdir(c.p("d"))
    os.symlink("d", c.p("ld"))
    c.e("create through dir symlink", write_file, c.p("ld", "in"))
    c.r("created inside dir", os.listdir(c.p("d")))
    c.we("symlink through file", "ENOTDIR", os.symlink, "x", c.p("f", "x"))
    # 40 nested symlinks are allowed, the 41st is ELOOP
    prev = "f"
    for i in range(41):
        os.symlink(prev, c.p("c%d" % i))
        prev = "c%d" % i
    c.r("40 nested links", outcome(lambda: os.stat(c.p("c39")) and None))
    c.r("41 nested links", outcome(lambda: os.stat(c.p("c40")) and None))


# ---- truncate / ftruncate / fallocate ----------------------------------------
@case
def truncate_all(c):
    write_file(c.p("f"), b"0123456789")
    c.timed("truncate grow", [c.p("f")], os.truncate, c.p("f"), 100)
    c.want("grown contents", read_file(c.p("f")), b"0123456789" + b"\0" * 90)
    c.timed("truncate shrink", [c.p("f")], os.truncate, c.p("f"), 4)
    c.want("shrunk contents", read_file(c.p("f")), b"0123")
    c.e("grow again", os.truncate, c.p("f"), 8)
    c.want("no stale data", read_file(c.p("f")), b"0123\0\0\0\0")
    before = times(c.p("f"))
    tick()
    os.truncate(c.p("f"), 8)
    c.info("truncate to same size: times", delta(before, times(c.p("f"))))
    c.we("negative", "EINVAL", os.truncate, c.p("f"), -1)
    os.mkdir(c.p("d"))
    c.we("dir", "EISDIR", os.truncate, c.p("d"), 0)
    c.we("missing", "ENOENT", os.truncate, c.p("nope"), 0)
    fd = os.open(c.p("f"), os.O_RDONLY)
    c.we("ftruncate read-only fd", "EINVAL", os.ftruncate, fd, 0)
    os.close(fd)
    fd = os.open(c.p("f"), os.O_RDWR)
    c.e("ftruncate", os.ftruncate, fd, 1 << 20)
    c.r("size", os.fstat(fd).st_size)
    c.info("ftruncate to 2^63-1", outcome(os.ftruncate, fd, (1 << 63) - 1))
    c.e("ftruncate 1 TiB", os.ftruncate, fd, 1 << 40)
    c.r("read at 1 TiB - 3", os.pread(fd, 10, (1 << 40) - 3))
    os.ftruncate(fd, 1 << 20)       # keeps later tree walks cheap
    os.close(fd)
    os.chmod(c.p("f"), 0o644)
    c.u("truncate without write permission", UA, outcome, os.truncate,
        c.p("f"), 0)


@case
def fallocate_all(c):
    fd = os.open(c.p("f"), os.O_RDWR | os.O_CREAT, 0o644)
    os.write(fd, b"abc")
    before = times(c.p("f"))
    tick()
    c.e("posix_fallocate grow", os.posix_fallocate, fd, 0, 1 << 20)
    c.r("times", delta(before, times(c.p("f"))))
    st = os.fstat(fd)
    c.want("size", st.st_size, 1 << 20)
    c.want("blocks cover it", st.st_blocks * 512 >= 1 << 20, True)
    c.want("data kept, rest zero", os.pread(fd, 6, 0), b"abc\0\0\0")
    c.e("posix_fallocate inside", os.posix_fallocate, fd, 100, 1000)
    c.r("size", os.fstat(fd).st_size)
    c.e("keep size past EOF", fallocate, fd, FALLOC_FL_KEEP_SIZE, 1 << 20,
        1 << 20)
    c.r("size", os.fstat(fd).st_size)
    os.pwrite(fd, b"X" * 8192, 8192)
    c.e("punch hole", fallocate, fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
        8192, 4096)
    c.want("punched zeros", os.pread(fd, 8192, 8192), b"\0" * 4096 + b"X" * 4096)
    c.e("punch without KEEP_SIZE", fallocate, fd, FALLOC_FL_PUNCH_HOLE, 0, 4096)
    c.e("zero length", fallocate, fd, 0, 0, 0)
    c.e("negative offset", fallocate, fd, 0, -1, 10)
    os.close(fd)
    fd = os.open(c.p("f"), os.O_RDONLY)
    c.e("posix_fallocate read-only fd", os.posix_fallocate, fd, 0, 10)
    os.close(fd)


# ---- utimensat ---------------------------------------------------------------
@case
def utimes_all(c):
    write_file(c.p("f"))
    c.timed("set both", [c.p("f")], utimensat, c.p("f"), (1000, 123456789),
            (2000, 987654321))
    st = os.stat(c.p("f"))
    c.want("ns preserved", (st.st_atime_ns, st.st_mtime_ns),
           (1000123456789, 2000987654321))
    c.timed("UTIME_OMIT both", [c.p("f")], utimensat, c.p("f"), UTIME_OMIT,
            UTIME_OMIT)
    c.timed("UTIME_NOW atime, OMIT mtime", [c.p("f")], utimensat, c.p("f"),
            UTIME_NOW, UTIME_OMIT)
    c.want("mtime kept", os.stat(c.p("f")).st_mtime_ns, 2000987654321)
    c.timed("NULL (both now)", [c.p("f")], utimensat, c.p("f"), None, None)
    c.e("pre-epoch", utimensat, c.p("f"), (-1000, 5), (-1, 999999999))
    st = os.stat(c.p("f"))
    c.r("pre-epoch values", (st.st_atime_ns, st.st_mtime_ns))
    c.e("year 2500", utimensat, c.p("f"), (16725225600, 0), (16725225600, 1))
    c.r("far future", os.stat(c.p("f")).st_mtime_ns)
    c.e("bad nsec", utimensat, c.p("f"), (1, 1000000000), (1, 0))
    os.symlink("f", c.p("l"))
    c.e("NOFOLLOW on symlink", utimensat, c.p("l"), (3000, 0), (4000, 0),
        AT_SYMLINK_NOFOLLOW)
    c.r("symlink mtime", os.lstat(c.p("l")).st_mtime_ns)
    c.r("target mtime", os.stat(c.p("f")).st_mtime_ns)


@case
def utimes_perm(c):
    write_file(c.p("w"))
    os.chmod(c.p("w"), 0o666)     # root's, writable by all
    write_file(c.p("r"))
    os.chmod(c.p("r"), 0o644)     # root's, read-only for others
    write_file(c.p("own"))
    os.chown(c.p("own"), UA, UA)
    os.chmod(c.p("own"), 0o444)
    for name in ("w", "r", "own"):
        p = c.p(name)
        c.u(name + ": NULL times", UA, outcome, utimensat, p, None, None)
        c.u(name + ": both UTIME_NOW", UA, outcome, utimensat, p, UTIME_NOW,
            UTIME_NOW)
        c.u(name + ": explicit", UA, outcome, utimensat, p, (5, 0), (6, 0))
        c.u(name + ": NOW + OMIT", UA, outcome, utimensat, p, UTIME_NOW,
            UTIME_OMIT)
        c.u(name + ": OMIT both", UA, outcome, utimensat, p, UTIME_OMIT,
            UTIME_OMIT)


# ---- timestamps per operation ------------------------------------------------
@case
def times_io(c):
    write_file(c.p("f"), b"x" * 100)
    os.utime(c.p("f"), ns=(10**18, 10**18))    # atime/mtime in the past
    fd = os.open(c.p("f"), os.O_RDWR)
    before = times(c.p("f"))
    tick()
    os.pwrite(fd, b"y", 5)
    os.close(fd)        # writeback-cached times reach the daemon by now
    c.r("write", delta(before, times(c.p("f"))))
    before = times(c.p("f"))
    tick()
    with open(c.p("f"), "rb") as f:
        f.read()
    c.info("read (relatime, atime older than mtime)",
           delta(before, times(c.p("f"))))
    before = times(c.p("f"))
    tick()
    fd = os.open(c.p("f"), os.O_RDWR)
    os.write(fd, b"")
    os.close(fd)
    c.info("zero-length write", delta(before, times(c.p("f"))))
    os.mkdir(c.p("d"))
    write_file(c.p("d", "x"))
    before = times(c.p("d"))
    tick()
    os.listdir(c.p("d"))
    c.info("readdir", delta(before, times(c.p("d"))))
    c.timed("chmod (ctime only)", [c.p("f")], os.chmod, c.p("f"), 0o600)
    c.timed("setxattr", [c.p("f")], os.setxattr, c.p("f"), "user.t", b"v")
    c.timed("removexattr", [c.p("f")], os.removexattr, c.p("f"), "user.t")
    c.timed("create in dir", [c.p("d")], write_file, c.p("d", "y"))
    c.timed("unlink in dir", [c.p("d")], os.unlink, c.p("d", "y"))
    c.timed("mkfifo in dir", [c.p("d")], os.mkfifo, c.p("d", "p"))
    c.timed("mkdir in dir", [c.p("d")], os.mkdir, c.p("d", "s"))
    c.timed("rmdir in dir", [c.p("d")], os.rmdir, c.p("d", "s"))
    fd = os.open(c.p("f"), os.O_RDWR)
    before = times(c.p("f"))
    tick()
    os.ftruncate(fd, 10)
    os.close(fd)
    c.r("ftruncate", delta(before, times(c.p("f"))))
    before = times(c.p("f"))
    tick()
    fd = os.open(c.p("f"), os.O_RDWR)
    os.posix_fallocate(fd, 0, 1 << 16)
    os.close(fd)
    c.r("fallocate grow", delta(before, times(c.p("f"))))


@case
def times_mmap(c):
    import mmap
    write_file(c.p("f"), b"\0" * 8192)
    fd = os.open(c.p("f"), os.O_RDWR)
    before = times(c.p("f"))
    tick()
    m = mmap.mmap(fd, 8192)
    m[0:4] = b"abcd"
    m.flush()
    m.close()
    os.close(fd)
    # atime is left out: a page fault may or may not touch it
    c.r("mmap write + msync",
        delta(before, times(c.p("f"))).replace("a", "") or "-")
    c.want("data", read_file(c.p("f"))[:4], b"abcd")


# ---- xattrs ------------------------------------------------------------------
@case
def xattr_all(c):
    write_file(c.p("f"))
    f = c.p("f")
    c.we("get missing", "ENODATA", os.getxattr, f, "user.none")
    c.e("set", os.setxattr, f, "user.a", b"value")
    c.want("get", os.getxattr(f, "user.a"), b"value")
    c.we("CREATE on existing", "EEXIST", os.setxattr, f, "user.a", b"x",
         XATTR_CREATE)
    c.we("REPLACE on missing", "ENODATA", os.setxattr, f, "user.b", b"x",
         XATTR_REPLACE)
    c.e("REPLACE on existing", os.setxattr, f, "user.a", b"longer value",
        XATTR_REPLACE)
    c.want("size query", getxattr_size(f, "user.a", 0), 12)
    c.we("buffer too small", "ERANGE", getxattr_size, f, "user.a", 5)
    c.want("exact buffer", getxattr_size(f, "user.a", 12), 12)
    c.e("empty value", os.setxattr, f, "user.empty", b"")
    c.want("empty get", os.getxattr(f, "user.empty"), b"")
    c.want("list", sorted(os.listxattr(f)), ["user.a", "user.empty"])
    c.want("list size query", listxattr_size(f, 0), 18)
    c.we("list buffer too small", "ERANGE", listxattr_size, f, 3)
    c.we("name of 256 bytes", "ERANGE", os.setxattr, f, "user." + "n" * 251,
         b"x")
    c.e("name of 255 bytes", os.setxattr, f, "user." + "n" * 250, b"x")
    c.we("empty name", "ERANGE", os.setxattr, f, "", b"x")
    c.we("no namespace", "ENOTSUP", os.setxattr, f, "noprefix", b"x")
    c.we("value over 64 KiB", "E2BIG", os.setxattr, f, "user.big",
         b"v" * 65537)
    c.info("value of 64 KiB", outcome(os.setxattr, f, "user.max",
                                      b"w" * 65536))
    c.e("value of 1000 bytes", os.setxattr, f, "user.mid", b"m" * 1000)
    c.e("1000 back", os.getxattr, f, "user.mid")
    # like ext4 (one block per inode), raidfs may refuse large values
    c.info("value of 4000 bytes", outcome(os.setxattr, f, "user.mid",
                                          b"m" * 4000))
    c.e("remove", os.removexattr, f, "user.a")
    c.we("remove missing", "ENODATA", os.removexattr, f, "user.a")
    c.we("get removed", "ENODATA", os.getxattr, f, "user.a")
    c.we("on missing file", "ENOENT", os.getxattr, c.p("nope"), "user.a")


@case
def xattr_kinds(c):
    os.mkdir(c.p("d"))
    c.e("dir set", os.setxattr, c.p("d"), "user.d", b"dv")
    c.r("dir get", outcome(os.getxattr, c.p("d"), "user.d"))
    write_file(c.p("f"))
    os.symlink("f", c.p("l"))
    c.e("symlink, no follow", os.setxattr, c.p("l"), "user.l", b"x",
        follow_symlinks=False)
    c.e("via symlink", os.setxattr, c.p("l"), "user.via", b"x")
    c.r("target has it", outcome(os.getxattr, c.p("f"), "user.via"))
    os.mkfifo(c.p("p"))
    c.e("fifo user xattr", os.setxattr, c.p("p"), "user.p", b"x")
    c.e("trusted as root", os.setxattr, c.p("f"), "trusted.t", b"t")
    c.r("trusted back", outcome(os.getxattr, c.p("f"), "trusted.t"))
    os.link(c.p("f"), c.p("h"))
    c.r("shared by hard link", outcome(os.getxattr, c.p("h"), "user.via"))
    os.rename(c.p("f"), c.p("g"))
    c.r("kept across rename", outcome(os.getxattr, c.p("g"), "user.via"))
    for i in range(100):
        os.setxattr(c.p("g"), "user.k%03d" % i, b"%d" % i)
    c.want("100 listed", len([n for n in os.listxattr(c.p("g"))
                              if n.startswith("user.k")]), 100)
    os.chmod(c.p("g"), 0o644)
    c.u("user sets on root's 0644 file", UA, outcome, os.setxattr, c.p("g"),
        "user.x", b"x")
    c.u("user reads", UA, outcome, os.getxattr, c.p("g"), "user.via")
    c.u("user sets trusted", UA, outcome, os.setxattr, c.p("g"), "trusted.x",
        b"x")
    c.u("user lists (no trusted)", UA, lambda: sorted(
        n for n in os.listxattr(c.p("g")) if not n.startswith("user.k")))
    os.chmod(c.p("g"), 0o600)
    c.u("user reads 0600", UA, outcome, os.getxattr, c.p("g"), "user.via")


# ---- names -------------------------------------------------------------------
@case
def names_long(c):
    n255, n256 = "a" * 255, "b" * 256
    write_file(c.p("f"))
    os.mkdir(c.p("d"))
    c.we("create 255", "ok", lambda: write_file(c.p(n255)))
    c.r("listed", n255 in os.listdir(c.d))
    calls = [
        ("open", os.open, (c.p(n256), os.O_CREAT | os.O_WRONLY)),
        ("mkdir", os.mkdir, (c.p(n256),)),
        ("rmdir", os.rmdir, (c.p(n256),)),
        ("unlink", os.unlink, (c.p(n256),)),
        ("stat", os.stat, (c.p(n256),)),
        ("chmod", os.chmod, (c.p(n256), 0o644)),
        ("rename to", os.rename, (c.p("f"), c.p(n256))),
        ("rename from", os.rename, (c.p(n256), c.p("g"))),
        ("link", os.link, (c.p("f"), c.p(n256))),
        ("symlink", os.symlink, ("f", c.p(n256))),
        ("mkfifo", os.mkfifo, (c.p(n256),)),
        ("truncate", os.truncate, (c.p(n256), 0)),
        ("setxattr", os.setxattr, (c.p(n256), "user.a", b"x")),
        ("in the middle", os.stat, (c.p(n256, "x"),)),
    ]
    for label, fn, args in calls:
        c.we(label + " 256", "ENAMETOOLONG", fn, *args)
    deep = "/".join(["d"] * 2100)          # 4199 bytes > PATH_MAX
    c.we("PATH_MAX", "ENAMETOOLONG", os.stat, c.p(deep))
    # a long path that fits: 15 levels of 250-byte names (~3.8 KB)
    p = c.d
    for i in range(15):
        p = os.path.join(p, chr(ord("a") + i) * 250)
        os.mkdir(p)
    c.e("deep file", write_file, os.path.join(p, "f"), b"deep")
    c.r("deep read", read_file(os.path.join(p, "f")))


@case
def readdir_all(c):
    for i in range(50):
        write_file(c.p("f%02d" % i))
    os.mkdir(c.p("sub"))
    fd = os.open(c.d, os.O_RDONLY | os.O_DIRECTORY)
    names = set()
    with os.scandir(c.d) as it:
        for e in it:
            names.add(e.name)
            if e.inode() != os.lstat(c.p(e.name)).st_ino:
                names.add("bad d_ino for " + e.name)
            if e.is_dir(follow_symlinks=False) != (e.name == "sub"):
                names.add("bad d_type for " + e.name)
    os.close(fd)
    c.want("entries, d_ino and d_type", len(names), 51)
    c.r("names", sorted(names) == sorted(["f%02d" % i for i in range(50)] +
                                         ["sub"]))


# ---- space accounting --------------------------------------------------------
@case
def blocks_sparse(c):
    fd = os.open(c.p("s"), os.O_RDWR | os.O_CREAT, 0o644)
    os.pwrite(fd, b"z", 1 << 30)
    os.fsync(fd)
    st = os.fstat(fd)
    c.want("1 GiB sparse: size", st.st_size, (1 << 30) + 1)
    c.want("1 GiB sparse: blocks small", st.st_blocks * 512 <= 64 * 1024, True)
    c.r("SEEK_DATA from 0", outcome(os.lseek, fd, 0, os.SEEK_DATA))
    c.r("SEEK_HOLE from 0", outcome(os.lseek, fd, 0, os.SEEK_HOLE))
    c.r("SEEK_DATA past EOF", outcome(os.lseek, fd, (1 << 30) + 5,
                                      os.SEEK_DATA))
    os.pwrite(fd, b"d" * (1 << 20), 0)
    os.fsync(fd)
    blocks = os.fstat(fd).st_blocks
    c.want("1 MiB written: blocks", blocks * 512 >= 1 << 20, True)
    c.r("SEEK_HOLE after data", outcome(os.lseek, fd, 0, os.SEEK_HOLE))
    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 1 << 20)
    os.fsync(fd)
    c.want("punch frees blocks", os.fstat(fd).st_blocks < blocks, True)
    os.close(fd)
    os.unlink(c.p("s"))             # keeps later tree walks cheap
    os.mkdir(c.p("d"))
    c.r("dir blocks > 0", os.stat(c.p("d")).st_blocks > 0)


@case
def statvfs_all(c):
    def free():
        os.sync()
        v = os.statvfs(c.d)
        return v.f_bfree * v.f_frsize, v.f_ffree
    v = os.statvfs(c.d)
    c.want("sane", (v.f_bavail <= v.f_bfree <= v.f_blocks, v.f_namemax,
                    v.f_bsize > 0, v.f_frsize > 0), (True, 255, True, True))
    b0, i0 = free()
    fd = os.open(c.p("big"), os.O_WRONLY | os.O_CREAT, 0o644)
    for _ in range(8):
        os.write(fd, b"q" * (1 << 20))
    os.fsync(fd)
    os.close(fd)
    b1, i1 = free()
    c.want("8 MiB written: free space drops by >= 8 MiB", b0 - b1 >= 8 << 20,
           True)
    c.info("... and by less than 16 MiB", b0 - b1 < 16 << 20)
    for i in range(100):
        write_file(c.p("n%d" % i))
    b2, i2 = free()
    c.info("100 files: free inodes drop by >= 100", i1 - i2 >= 100)
    os.unlink(c.p("big"))
    for i in range(100):
        os.unlink(c.p("n%d" % i))
    b3, i3 = free()
    c.want("all deleted: free space back (within 1 MiB)",
           abs(b3 - b0) <= 1 << 20, True)
    c.info("all deleted: free inodes back", i3 == i0)


# ---- driver ------------------------------------------------------------------
def snapshot(root):
    """One line per name under root: everything stat and the xattrs say,
    and a digest of the contents (used to compare across a remount)."""
    lines = []
    for dirpath, dirs, files in os.walk(root):
        for n in sorted(dirs + files):
            full = os.path.join(dirpath, n)
            st = os.lstat(full)
            extra = ""
            if stat.S_ISREG(st.st_mode):
                h = hashlib.sha1()
                with open(full, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                extra = h.hexdigest()[:16]
            elif stat.S_ISLNK(st.st_mode):
                extra = os.readlink(full)[:40]
            try:
                xa = sorted((k, os.getxattr(full, k, follow_symlinks=False))
                            for k in os.listxattr(full, follow_symlinks=False))
            except OSError as e:
                xa = ename(e.errno)
            lines.append("%s %o %d:%d n%d s%d r%x m%d c%d %s x%s" % (
                os.path.relpath(full, root)[:60], st.st_mode, st.st_uid,
                st.st_gid, st.st_nlink, st.st_size, st.st_rdev,
                st.st_mtime_ns, st.st_ctime_ns, extra,
                hashlib.sha1(repr(xa).encode()).hexdigest()[:8]))
    return "\n".join(lines) + "\n"


def run_case(fn, root, other):
    d = os.path.join(root, fn.__name__)
    os.mkdir(d)
    os.chmod(d, 0o755)
    c = Ctx(d, other)
    old = os.umask(0o022)
    try:
        fn(c)
    except Exception as e:      # an unexpected failure is an outcome too
        c.r("exception", "%s: %s" % (type(e).__name__, e))
        c.r("traceback", traceback.format_exc().splitlines()[-3].strip(),
            False)
    finally:
        os.umask(old)
    return c


def compare(name, ref, test):
    """Lines describing differences; (strict lines, info lines)."""
    bad, info = [], []
    for i in range(max(len(ref.out), len(test.out))):
        a = ref.out[i] if i < len(ref.out) else ("(missing)", None, True)
        b = test.out[i] if i < len(test.out) else ("(missing)", None, True)
        if a == b:
            continue
        line = "%s: tmpfs %r, raidfs %r" % (a[0] if a[0] == b[0] else
                                            "%s / %s" % (a[0], b[0]),
                                            a[1], b[1])
        (bad if a[2] or b[2] else info).append(line)
    for label, value, expected in ref.wants:
        bad.append("SUITE: on tmpfs %s is %r, expected %r (fix the suite)"
                   % (label, value, expected))
    return bad, info


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref")
    ap.add_argument("--ref-other")
    ap.add_argument("--test")
    ap.add_argument("--test-other")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--snapshot", metavar="DIR", help="print the tree's state")
    ap.add_argument("-v", action="store_true", help="print every outcome")
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    if a.snapshot:
        sys.stdout.write(snapshot(a.snapshot))
        return 0
    if a.list:      # the cases a run without names runs
        print("\n".join(fn.__name__ for fn in CASES
                        if fn.__name__ not in ISOLATED))
        return 0
    chosen = [fn for fn in CASES if fn.__name__ in a.cases or
              (not a.cases and fn.__name__ not in ISOLATED)]
    failed = 0
    for fn in chosen:
        ref = run_case(fn, a.ref, a.ref_other)
        test = run_case(fn, a.test, a.test_other)
        bad, info = compare(fn.__name__, ref, test)
        print("RESULT %s %s" % (fn.__name__, "FAIL" if bad else "ok"))
        for line in bad:
            print("    " + line)
        for line in info:
            print("    info (not a failure): " + line)
        if a.v:
            for label, value, strict in test.out:
                print("      %s = %r" % (label, value))
        failed += bool(bad)
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
