#!/usr/bin/env python3
"""Every operation a program uses, with its errors, on a mounted raidfs.

    ops.py MOUNTPOINT GROUP...

Groups: names, files, links, special, times, sparse, big, xattr, perm_root,
perm_user (run as an unprivileged user).  Each check raises on the first
difference from POSIX/Linux behaviour; the exit status is non-zero then.
"""
import errno
import os
import stat
import sys
import time

M = None


def p(*parts):
    return os.path.join(M, *parts)


def expect_errno(err, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except OSError as e:
        if e.errno != err:
            raise AssertionError("%s%r: errno %s, expected %s" % (
                fn.__name__, args, errno.errorcode.get(e.errno),
                errno.errorcode[err]))
        return
    raise AssertionError("%s%r succeeded, expected %s" % (
        fn.__name__, args, errno.errorcode[err]))


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def write_file(path, data, mode=0o644):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def g_names():
    d = p("names")
    os.mkdir(d)
    expect_errno(errno.EEXIST, os.mkdir, d)
    expect_errno(errno.ENOENT, os.stat, p("names", "absent"))
    expect_errno(errno.ENOENT, os.mkdir, p("names", "no", "such"))
    write_file(p("names", "f"), b"x")
    expect_errno(errno.ENOTDIR, os.mkdir, p("names", "f", "sub"))
    expect_errno(errno.ENOTDIR, os.stat, p("names", "f", "sub"))
    expect_errno(errno.ENOTDIR, os.rmdir, p("names", "f"))
    expect_errno(errno.EISDIR, os.unlink, d)
    expect_errno(errno.EISDIR, os.open, d, os.O_WRONLY)
    expect_errno(errno.EEXIST, os.open, p("names", "f"),
                 os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    # names: 255 bytes is fine, 256 is ENAMETOOLONG, in every call
    long_ok = "a" * 255
    write_file(p("names", long_ok), b"long")
    check(long_ok in os.listdir(d), "255-byte name not listed")
    too_long = "b" * 256
    expect_errno(errno.ENAMETOOLONG, os.open, p("names", too_long),
                 os.O_CREAT | os.O_WRONLY)
    expect_errno(errno.ENAMETOOLONG, os.mkdir, p("names", too_long))
    expect_errno(errno.ENAMETOOLONG, os.stat, p("names", too_long))
    expect_errno(errno.ENAMETOOLONG, os.rename, p("names", "f"),
                 p("names", too_long))
    # rmdir of a non-empty directory
    os.mkdir(p("names", "full"))
    write_file(p("names", "full", "x"), b"")
    expect_errno(errno.ENOTEMPTY, os.rmdir, p("names", "full"))
    os.unlink(p("names", "full", "x"))
    os.rmdir(p("names", "full"))
    expect_errno(errno.ENOENT, os.rmdir, p("names", "full"))
    # rename: plain, over a file, directory over empty / non-empty directory
    write_file(p("names", "r1"), b"one")
    write_file(p("names", "r2"), b"two")
    os.rename(p("names", "r1"), p("names", "r2"))
    check(read_file(p("names", "r2")) == b"one", "rename over a file")
    expect_errno(errno.ENOENT, os.stat, p("names", "r1"))
    os.mkdir(p("names", "da"))
    os.mkdir(p("names", "db"))
    write_file(p("names", "da", "inside"), b"in")
    os.rename(p("names", "da"), p("names", "db"))
    check(os.listdir(p("names", "db")) == ["inside"], "dir over empty dir")
    os.mkdir(p("names", "dc"))
    write_file(p("names", "dc", "z"), b"")
    expect_errno(errno.ENOTEMPTY, os.rename, p("names", "db"), p("names", "dc"))
    expect_errno(errno.EISDIR, os.rename, p("names", "r2"), p("names", "dc"))
    expect_errno(errno.ENOTDIR, os.rename, p("names", "dc"), p("names", "r2"))
    expect_errno(errno.EINVAL, os.rename, p("names", "db"),
                 p("names", "db", "under"))
    # directory moved to another parent: ".." and link counts follow
    os.mkdir(p("names", "p1"))
    os.mkdir(p("names", "p2"))
    os.mkdir(p("names", "p1", "c"))
    n1, n2 = os.stat(p("names", "p1")).st_nlink, os.stat(p("names", "p2")).st_nlink
    os.rename(p("names", "p1", "c"), p("names", "p2", "c"))
    check(os.stat(p("names", "p1")).st_nlink == n1 - 1, "nlink of old parent")
    check(os.stat(p("names", "p2")).st_nlink == n2 + 1, "nlink of new parent")
    check(os.stat(p("names", "p2", "c", "..")).st_ino ==
          os.stat(p("names", "p2")).st_ino, ".. after rename")
    renameat2_checks()
    listing_checks()


def renameat2_checks():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    AT_FDCWD = -100

    def renameat2(a, b, flags):
        if libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(),
                          flags) != 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
    renameat2.__name__ = "renameat2"
    write_file(p("names", "x1"), b"x1")
    write_file(p("names", "x2"), b"x2")
    expect_errno(errno.EEXIST, renameat2, p("names", "x1"), p("names", "x2"), 1)
    renameat2(p("names", "x1"), p("names", "x3"), 1)   # RENAME_NOREPLACE
    renameat2(p("names", "x3"), p("names", "x2"), 2)   # RENAME_EXCHANGE
    check(read_file(p("names", "x2")) == b"x1", "exchange: x2")
    check(read_file(p("names", "x3")) == b"x2", "exchange: x3")
    os.mkdir(p("names", "xd"))
    renameat2(p("names", "xd"), p("names", "x2"), 2)   # file <-> directory
    check(os.path.isdir(p("names", "x2")), "exchange dir/file")
    check(read_file(p("names", "xd")) == b"x1", "exchange dir/file data")
    expect_errno(errno.ENOENT, renameat2, p("names", "nope"), p("names", "x2"), 2)


def listing_checks():
    d = p("names", "list")
    os.mkdir(d)
    names = set("entry-%03d" % i for i in range(300))
    for n in names:
        write_file(os.path.join(d, n), b"")
    check(set(os.listdir(d)) == names, "readdir lists every entry once")
    # unlink while reading the directory: nothing repeated, nothing that
    # stayed is skipped
    seen, removed = [], set()
    with os.scandir(d) as it:
        for i, e in enumerate(it):
            seen.append(e.name)
            if i == 10:
                for n in sorted(names - set(seen))[:5]:
                    os.unlink(os.path.join(d, n))
                    removed.add(n)
    check(len(seen) == len(set(seen)), "readdir repeated an entry")
    check(names - removed <= set(seen), "readdir skipped an entry")
    names -= removed
    for n in names:
        os.unlink(os.path.join(d, n))
    check(os.listdir(d) == [], "directory not empty after unlinking all")
    os.rmdir(d)


def g_files():
    f = p("files_a")
    data = os.urandom(3 * 1024 * 1024 + 123)
    write_file(f, data)
    check(read_file(f) == data, "read back")
    check(os.stat(f).st_size == len(data), "size")
    # overwrite in the middle, then at an unaligned offset past the end
    fd = os.open(f, os.O_RDWR)
    os.pwrite(fd, b"Z" * 5000, 4093)
    os.pwrite(fd, b"tail", len(data) + 10)
    os.close(fd)
    exp = bytearray(data)
    exp[4093:4093 + 5000] = b"Z" * 5000
    exp += b"\0" * 10 + b"tail"
    check(read_file(f) == bytes(exp), "overwrite and extend")
    # truncate down and up
    os.truncate(f, 100)
    check(read_file(f) == bytes(exp[:100]), "truncate down")
    os.truncate(f, 8192)
    check(read_file(f) == bytes(exp[:100]) + b"\0" * 8092, "truncate up")
    # O_TRUNC
    fd = os.open(f, os.O_WRONLY | os.O_TRUNC)
    os.close(fd)
    check(os.stat(f).st_size == 0, "O_TRUNC")
    # O_APPEND from two descriptors
    a1 = os.open(f, os.O_WRONLY | os.O_APPEND)
    a2 = os.open(f, os.O_WRONLY | os.O_APPEND)
    os.write(a1, b"one\n")
    os.write(a2, b"two\n")
    os.pwrite(a1, b"three\n", 0)   # Linux: pwrite on O_APPEND appends
    os.close(a1)
    os.close(a2)
    check(read_file(f) == b"one\ntwo\nthree\n", "O_APPEND: %r" % read_file(f))
    # fsync / fdatasync / syncfs
    fd = os.open(f, os.O_RDWR)
    os.fsync(fd)
    os.fdatasync(fd)
    os.close(fd)
    dfd = os.open(M, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(dfd)
    os.close(dfd)
    os.sync()
    # mode changes
    os.chmod(f, 0o640)
    check(stat.S_IMODE(os.stat(f).st_mode) == 0o640, "chmod")
    os.chown(f, 1234, 5678)
    st = os.stat(f)
    check((st.st_uid, st.st_gid) == (1234, 5678), "chown")
    # fallocate, copy_file_range
    fd = os.open(p("files_b"), os.O_RDWR | os.O_CREAT, 0o644)
    os.posix_fallocate(fd, 0, 1 << 20)
    check(os.fstat(fd).st_size == 1 << 20, "fallocate size")
    check(os.pread(fd, 1 << 20, 0) == b"\0" * (1 << 20), "fallocate zeros")
    os.close(fd)
    src = os.urandom(1 << 20)
    write_file(p("files_src"), src)
    fi = os.open(p("files_src"), os.O_RDONLY)
    fo = os.open(p("files_dst"), os.O_WRONLY | os.O_CREAT, 0o644)
    done = 0
    while done < len(src):
        n = os.copy_file_range(fi, fo, len(src) - done, done, done)
        check(n > 0, "copy_file_range made no progress")
        done += n
    os.close(fi)
    os.close(fo)
    check(read_file(p("files_dst")) == src, "copy_file_range content")
    # O_EXCL create, then open with O_CREAT of an existing file
    fd = os.open(p("files_x"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)
    fd = os.open(p("files_x"), os.O_CREAT | os.O_WRONLY, 0o600)
    os.close(fd)
    # statfs
    sv = os.statvfs(M)
    check(sv.f_bsize == 4096 and sv.f_blocks > 0, "statvfs")
    check(sv.f_bfree <= sv.f_blocks and sv.f_bavail <= sv.f_bfree, "statvfs free")
    check(sv.f_namemax == 255, "f_namemax %d" % sv.f_namemax)


def g_links():
    f = p("links_f")
    write_file(f, b"linked")
    os.link(f, p("links_g"))
    os.mkdir(p("links_d"))
    os.link(f, p("links_d", "h"))
    check(os.stat(f).st_nlink == 3, "nlink 3")
    check(os.stat(f).st_ino == os.stat(p("links_d", "h")).st_ino, "same inode")
    expect_errno(errno.EEXIST, os.link, f, p("links_g"))
    expect_errno(errno.EPERM, os.link, p("links_d"), p("links_dd"))
    os.unlink(f)
    check(os.stat(p("links_g")).st_nlink == 2, "nlink after unlink")
    check(read_file(p("links_g")) == b"linked", "data via the other link")
    # symlinks
    os.symlink("links_g", p("links_s"))
    check(os.readlink(p("links_s")) == "links_g", "readlink")
    check(read_file(p("links_s")) == b"linked", "follow symlink")
    check(stat.S_ISLNK(os.lstat(p("links_s")).st_mode), "lstat symlink")
    os.symlink("dangling-target", p("links_dangling"))
    expect_errno(errno.ENOENT, os.stat, p("links_dangling"))
    os.symlink("loop2", p("loop1"))
    os.symlink("loop1", p("loop2"))
    expect_errno(errno.ELOOP, os.stat, p("loop1"))
    expect_errno(errno.ELOOP, os.open, p("loop1"), os.O_RDONLY)
    long_target = "t" * 4095
    os.symlink(long_target, p("links_long"))
    check(os.readlink(p("links_long")) == long_target, "4095-byte target")
    expect_errno(errno.EEXIST, os.symlink, "x", p("links_g"))
    expect_errno(errno.EINVAL, os.readlink, p("links_g"))
    # open-unlinked files stay readable and writable until closed
    write_file(p("links_open"), b"still here")
    fd = os.open(p("links_open"), os.O_RDWR)
    os.unlink(p("links_open"))
    expect_errno(errno.ENOENT, os.stat, p("links_open"))
    check(os.pread(fd, 100, 0) == b"still here", "read after unlink")
    os.pwrite(fd, b"!", 10)
    check(os.pread(fd, 100, 0) == b"still here!", "write after unlink")
    check(os.fstat(fd).st_nlink == 0, "nlink 0 while open")
    os.close(fd)


def g_special():
    os.mkfifo(p("fifo"))
    check(stat.S_ISFIFO(os.stat(p("fifo")).st_mode), "fifo")
    os.mknod(p("chr"), stat.S_IFCHR | 0o600, os.makedev(1, 3))
    st = os.stat(p("chr"))
    check(stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3), "chr dev")
    os.mknod(p("blk"), stat.S_IFBLK | 0o600, os.makedev(7, 0))
    check(stat.S_ISBLK(os.stat(p("blk")).st_mode), "blk dev")
    import socket
    s = socket.socket(socket.AF_UNIX)
    s.bind(p("sock"))
    s.close()
    check(stat.S_ISSOCK(os.stat(p("sock")).st_mode), "socket")
    os.mknod(p("reg"), stat.S_IFREG | 0o644)
    check(stat.S_ISREG(os.stat(p("reg")).st_mode), "mknod regular")
    # sticky and setgid directories
    os.mkdir(p("sgid"))
    os.chown(p("sgid"), 0, 4242)
    os.chmod(p("sgid"), 0o2775)
    write_file(p("sgid", "f"), b"")
    os.mkdir(p("sgid", "sub"))
    check(os.stat(p("sgid", "f")).st_gid == 4242, "setgid dir: file gid")
    check(os.stat(p("sgid", "sub")).st_gid == 4242, "setgid dir: subdir gid")
    check(os.stat(p("sgid", "sub")).st_mode & stat.S_ISGID, "setgid inherited")


def g_times():
    f = p("times_f")
    write_file(f, b"t")
    os.utime(f, ns=(1_000_000_123, 2_000_000_456))
    st = os.stat(f)
    check(st.st_atime_ns == 1_000_000_123, "atime ns %d" % st.st_atime_ns)
    check(st.st_mtime_ns == 2_000_000_456, "mtime ns %d" % st.st_mtime_ns)
    c0 = st.st_ctime_ns
    time.sleep(0.02)
    os.chmod(f, 0o600)
    check(os.stat(f).st_ctime_ns > c0, "chmod updates ctime")
    d0 = os.stat(M).st_mtime_ns
    time.sleep(0.02)
    write_file(p("times_new"), b"")
    check(os.stat(M).st_mtime_ns > d0, "create updates the dir mtime")
    m0 = os.stat(f).st_mtime_ns
    time.sleep(0.02)
    with open(f, "ab") as fh:
        fh.write(b"more")
    check(os.stat(f).st_mtime_ns > m0, "write updates mtime")


def g_sparse():
    f = p("sparse")
    fd = os.open(f, os.O_RDWR | os.O_CREAT, 0o644)
    os.pwrite(fd, b"A" * 4096, 1 << 20)
    os.pwrite(fd, b"B" * 4096, 10 << 20)
    os.ftruncate(fd, 16 << 20)
    st = os.fstat(fd)
    check(st.st_size == 16 << 20, "sparse size")
    check(st.st_blocks * 512 < 1 << 20, "holes allocated: %d blocks" % st.st_blocks)
    check(os.lseek(fd, 0, os.SEEK_DATA) == 1 << 20, "SEEK_DATA from 0")
    check(os.lseek(fd, 1 << 20, os.SEEK_HOLE) == (1 << 20) + 4096, "SEEK_HOLE")
    check(os.lseek(fd, (1 << 20) + 4096, os.SEEK_DATA) == 10 << 20, "2nd data")
    check(os.lseek(fd, 11 << 20, os.SEEK_HOLE) == 11 << 20, "hole in a hole")
    expect_errno(errno.ENXIO, os.lseek, fd, (10 << 20) + 4096, os.SEEK_DATA)
    expect_errno(errno.ENXIO, os.lseek, fd, 16 << 20, os.SEEK_HOLE)
    check(os.pread(fd, 4096, 5 << 20) == b"\0" * 4096, "hole reads zeros")
    # punch a hole in the data
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 1, 2
    r = libc.fallocate(fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE,
                       ctypes.c_long(10 << 20), ctypes.c_long(4096))
    check(r == 0, "punch hole: errno %d" % ctypes.get_errno())
    check(os.pread(fd, 4096, 10 << 20) == b"\0" * 4096, "punched reads zeros")
    check(os.fstat(fd).st_size == 16 << 20, "punch keeps size")
    expect_errno(errno.ENXIO, os.lseek, fd, (1 << 20) + 4096, os.SEEK_DATA)
    os.close(fd)


def g_big():
    """A sparse file larger than 4 GiB: offsets above 32 bits."""
    f = p("big")
    fd = os.open(f, os.O_RDWR | os.O_CREAT, 0o644)
    offs = [(4 << 30) - 2048, 5 << 30, (17 << 30) + 12345]
    for i, o in enumerate(offs):
        os.pwrite(fd, bytes([65 + i]) * 8192, o)
    os.close(fd)
    st = os.stat(f)
    check(st.st_size == offs[-1] + 8192, "big size %d" % st.st_size)
    check(st.st_blocks * 512 < 1 << 20, "big file is sparse")
    fd = os.open(f, os.O_RDONLY)
    for i, o in enumerate(offs):
        check(os.pread(fd, 8192, o) == bytes([65 + i]) * 8192, "big @%d" % o)
    check(os.pread(fd, 4096, 3 << 30) == b"\0" * 4096, "big hole")
    check(os.lseek(fd, 0, os.SEEK_DATA) == offs[0] & ~4095, "big SEEK_DATA")
    os.close(fd)
    os.truncate(f, 6 << 30)
    check(os.stat(f).st_size == 6 << 30, "big truncate")


def g_xattr():
    f = p("xattr_f")
    write_file(f, b"")
    os.setxattr(f, "user.a", b"value-a")
    os.setxattr(f, "user.empty", b"")
    check(os.getxattr(f, "user.a") == b"value-a", "getxattr")
    check(os.getxattr(f, "user.empty") == b"", "empty value")
    check(sorted(os.listxattr(f)) == ["user.a", "user.empty"], "listxattr")
    expect_errno(errno.EEXIST, os.setxattr, f, "user.a", b"x", os.XATTR_CREATE)
    expect_errno(errno.ENODATA, os.setxattr, f, "user.b", b"x",
                 os.XATTR_REPLACE)
    os.setxattr(f, "user.a", b"replaced", os.XATTR_REPLACE)
    check(os.getxattr(f, "user.a") == b"replaced", "replace")
    expect_errno(errno.ENODATA, os.getxattr, f, "user.none")
    os.removexattr(f, "user.a")
    expect_errno(errno.ENODATA, os.removexattr, f, "user.a")
    check(os.listxattr(f) == ["user.empty"], "after remove")
    big = os.urandom(2000)
    os.setxattr(f, "user.big", big)
    check(os.getxattr(f, "user.big") == big, "2000-byte value")
    os.mkdir(p("xattr_d"))
    os.setxattr(p("xattr_d"), "user.dir", b"on a dir")
    check(os.getxattr(p("xattr_d"), "user.dir") == b"on a dir", "dir xattr")
    os.symlink("xattr_f", p("xattr_s"))
    check(os.getxattr(p("xattr_s"), "user.empty") == b"", "follows symlink")


def g_perm_root():
    """Set up what perm_user checks (run as root, before perm_user)."""
    os.mkdir(p("perm"), 0o755)
    write_file(p("perm", "private"), b"secret", 0o600)
    write_file(p("perm", "public"), b"public", 0o644)
    os.mkdir(p("perm", "closed"), 0o700)
    os.mkdir(p("perm", "sticky"))
    os.chmod(p("perm", "sticky"), 0o1777)    # mkdir's mode meets the umask
    write_file(p("perm", "sticky", "roots"), b"", 0o666)
    os.chmod(p("perm", "sticky", "roots"), 0o666)
    os.mkdir(p("perm", "open"))
    os.chmod(p("perm", "open"), 0o777)


def g_perm_user():
    check(os.getuid() != 0, "perm_user must not run as root")
    expect_errno(errno.EACCES, os.open, p("perm", "private"), os.O_RDONLY)
    check(read_file(p("perm", "public")) == b"public", "public readable")
    expect_errno(errno.EACCES, os.open, p("perm", "public"), os.O_WRONLY)
    expect_errno(errno.EACCES, os.listdir, p("perm", "closed"))
    expect_errno(errno.EACCES, os.stat, p("perm", "closed", "x"))
    expect_errno(errno.EACCES, os.open, p("perm", "new"),
                 os.O_CREAT | os.O_WRONLY)
    expect_errno(errno.EACCES, os.mkdir, p("perm", "newdir"))
    expect_errno(errno.EPERM, os.chmod, p("perm", "public"), 0o777)
    expect_errno(errno.EPERM, os.chown, p("perm", "public"), os.getuid(), -1)
    expect_errno(errno.EPERM, os.utime, p("perm", "public"), (1, 1))
    # sticky: cannot remove another user's file from a 1777 directory
    expect_errno(errno.EPERM, os.unlink, p("perm", "sticky", "roots"))
    write_file(p("perm", "sticky", "mine"), b"")
    os.unlink(p("perm", "sticky", "mine"))
    # files created by this user belong to it, with its umask
    old = os.umask(0o027)
    write_file(p("perm", "open", "mine"), b"", 0o666)
    os.umask(old)
    st = os.stat(p("perm", "open", "mine"))
    check(st.st_uid == os.getuid(), "owner of new file")
    check(stat.S_IMODE(st.st_mode) == 0o640, "umask applied: %o" % st.st_mode)


GROUPS = {
    "names": g_names, "files": g_files, "links": g_links,
    "special": g_special, "times": g_times, "sparse": g_sparse,
    "big": g_big, "xattr": g_xattr, "perm_root": g_perm_root,
    "perm_user": g_perm_user,
}

if __name__ == "__main__":
    M = sys.argv[1]
    for g in sys.argv[2:]:
        GROUPS[g]()
        print("  ok: %s" % g)
