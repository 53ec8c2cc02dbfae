"""faultenv: the processes of a fault test (faults.py) - a faultfs mount
that serves the member images, raidfs daemons on top of it, fsck.raidfs -
and nothing else.  Every process started here is recorded in the test's
pid file (lib.sh kills what is left of them at exit) and every mount is
undone by close().

    env = Env(work, bindir, faultfs)   # $T/back (images), $T/ff, $T/mnt
    env.start()                        # faultfs: $T/ff/NAME is $T/back/NAME
    env.attach(names) / env.detach()   # loop=True: members as loop devices
                                       # over $T/ff/NAME (recorded in
                                       # $T/loops for lib.sh)
    env.rule("m1.img lose-writes 0 8k")
    d = env.mount(source, log)         # a foreground raidfs, or MountFailed
    d.stop() -> exit status;  d.kill() (a crash: SIGKILL, mount dropped)
    rc, out = env.fsck("-n", "-f", source)
    env.close()
"""
import os
import signal
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
UMOUNT_IDLE = os.path.join(HERE, "umount_idle.sh")


def is_mounted(path):
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == path for line in f)


def lazy_umount(path):
    """Drops a mount whose daemon is gone (or going)."""
    for cmd in (["umount", "-l", path], ["fusermount3", "-u", "-z", path]):
        if not is_mounted(path):
            return
        subprocess.run(cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


class MountFailed(Exception):
    def __init__(self, rc):
        super().__init__("raidfs exited %d before mounting" % rc)
        self.rc = rc


class Daemon:
    """One foreground raidfs serving env.mnt."""

    def __init__(self, env, proc):
        self.env = env
        self.p = proc

    def stop(self):
        """Unmounts (waiting while busy) and returns the daemon's status."""
        r = subprocess.run([UMOUNT_IDLE, self.env.mnt],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if r.returncode:
            lazy_umount(self.env.mnt)
        try:
            return self.p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return self.p.wait()

    def kill(self, umount=True):
        """A crash: the daemon dies with whatever it had not written.  With
        umount=False its dead mount stays (every access fails ENOTCONN)
        until the caller drops it: a program still writing must not land
        in the bare directory under it and believe its files written."""
        self.p.send_signal(signal.SIGKILL)
        self.p.wait()
        if umount:
            lazy_umount(self.env.mnt)


class Env:
    def __init__(self, work, bindir, faultfs, loop=False):
        self.work = work
        self.loop = loop
        self.loops = {}                # name -> /dev/loopN over $T/ff/name
        self.loopfile = os.path.join(work, "loops")
        self.back = os.path.join(work, "back")
        self.ff = os.path.join(work, "ff")
        self.mnt = os.path.join(work, "mnt")
        self.bindir = bindir
        self.faultfs = faultfs
        self.pidfile = os.path.join(work, "pids")
        self.ffproc = None
        self.daemons = []

    def _record(self, proc):
        with open(self.pidfile, "a") as f:
            f.write("%d\n" % proc.pid)

    def start(self):
        for d in (self.back, self.ff, self.mnt):
            os.makedirs(d, exist_ok=True)
        self.ffproc = subprocess.Popen([self.faultfs, "-f", self.back,
                                        self.ff], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
        self._record(self.ffproc)
        for _ in range(200):
            if is_mounted(self.ff):
                return
            time.sleep(0.05)
        raise RuntimeError("faultfs did not mount %s" % self.ff)

    def close(self):
        for d in self.daemons:
            if d.p.poll() is None:
                d.kill()
        lazy_umount(self.mnt)
        self.detach()
        if self.ffproc:
            subprocess.run(["fusermount3", "-u", self.ff],
                           stderr=subprocess.DEVNULL)
            lazy_umount(self.ff)
            try:
                self.ffproc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.ffproc.kill()
                self.ffproc.wait()

    def member(self, name):
        """The path raidfs opens (on faultfs, or the loop device over it)
        and the backing image."""
        ff = os.path.join(self.ff, name)
        return self.loops.get(name, ff), os.path.join(self.back, name)

    # -- loop devices: the block-device path of the same faults ----------
    # The loop device reads and writes the faultfs file, so faultfs's
    # rules reach it; its own page cache is dropped after every fault
    # (flush), as a real disk's media has none.

    def attach(self, names):
        """Loop devices over the members (loop mode), at their size now."""
        for n in names if self.loop else ():
            if n in self.loops:
                continue
            r = subprocess.run(["losetup", "-f", "--show",
                                os.path.join(self.ff, n)],
                               stdout=subprocess.PIPE, text=True, check=True)
            self.loops[n] = r.stdout.strip()
            self._record_loops()

    def detach(self):
        for n in list(self.loops):
            subprocess.run(["losetup", "-d", self.loops.pop(n)],
                           stderr=subprocess.DEVNULL)
        self._record_loops()

    def _record_loops(self):
        """Only the devices attached now: a number freed may soon be
        another program's."""
        with open(self.loopfile, "w") as f:
            f.write("".join(d + "\n" for d in self.loops.values()))

    def flush(self, name, resize=False):
        """After a fault: the loop device forgets what it cached (and, with
        resize, takes the image's new size: a device that shrank)."""
        dev = self.loops.get(name)
        if not dev:
            return
        if resize:
            subprocess.run(["losetup", "-c", dev], stderr=subprocess.DEVNULL)
        subprocess.run(["blockdev", "--flushbufs", dev],
                       stderr=subprocess.DEVNULL)

    def rule(self, line):
        with open(os.path.join(self.ff, ".faultctl"), "w") as f:
            f.write(line + "\n")

    def mount(self, source, log, opts="cache_mb=4"):
        args = [os.path.join(self.bindir, "raidfs"), "-f"]
        # a member named but not there is what the cases make: degraded
        # is meant (raidfs takes it for a typo otherwise)
        if "degraded=" not in (opts or ""):
            opts = (opts + "," if opts else "") + "degraded=allow"
        if opts:
            args += ["-o", opts]
        with open(log, "a") as lf:
            p = subprocess.Popen(args + [source, self.mnt], stdout=lf,
                                 stderr=lf)
        self._record(p)
        d = Daemon(self, p)
        self.daemons.append(d)
        for _ in range(600):
            if is_mounted(self.mnt):
                return d
            if p.poll() is not None:
                raise MountFailed(p.returncode)
            time.sleep(0.025)
        d.kill()
        raise MountFailed(-1)

    def run(self, prog, *args, log=None):
        """Runs one of the programs; returns (exit status, output)."""
        r = subprocess.run([os.path.join(self.bindir, prog)] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, errors="replace")
        if log:
            with open(log, "a") as f:
                f.write("$ %s %s\n%s" % (prog, " ".join(args), r.stdout))
        return r.returncode, r.stdout

    def fsck(self, *args, log=None):
        return self.run("fsck.raidfs", *args, log=log)
