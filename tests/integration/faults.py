#!/usr/bin/env python3
"""faults: one member of an array misbehaves; nothing wrong may come of it.
The fault matrix (t400_fault_matrix.sh, `make faults`) and the repair
property test (t410_repair_property.sh) of issue 8.

    faults.py --work T --bin DIR --faultfs PATH [--known FILE]
              [--table FILE] [--loop] (--sample | --full | --case ID... |
              --property N [--seed S])

A case is KIND/REGION/MODE/raidLEVEL/mMEMBER, e.g. zeros/csum/online/raid5/m1:
  KIND    zeros, random (bytes over a range), trunc0 (the image truncated to
          0), shrink (its last MiB cut off), stale (an older copy of the
          image put back), lost-writes, misdirect (writes land elsewhere on
          the member), eio (reads fail until the block is rewritten: pending
          sectors); none, the control (a crash without a fault)
  REGION  sb-start, journal, csum, data, sb-end (read from the superblock,
          rcformat.py); "all"/"end" for the whole-member kinds
  MODE    offline (the image changed while unmounted; for the journal, after
          a crash, so that replay reads it) or online (while a writer and a
          reader run; lost writes, misdirection and EIO come from faultfs,
          tests/tools/faultfs.c, on which the images are served)
With --loop the members are loop devices over the faultfs files (the
partition/disk path: a block device's size, O_EXCL, its page cache dropped
after each fault as a disk's media has none; a shrink is the device
shrinking, truncation to 0 a blank disk of the same size).
Each case: every file reads back exactly (one member is within every
level's redundancy: EIO counts as a failure too, wrong bytes are the worst);
the fault is logged naming the member (daemon log) and counted against it
(its superblock's counters, its slot no longer active, or fsck's
per-member report) and against no other member; `fsck -y` (and, for a
member left out, `fsck -y --rebuild` onto it) then `fsck -n -f` exits 0;
every file is still intact.  Damage that reading the files need not touch
(may_be_latent) may be found by fsck -n -f alone, and repaired by
fsck -y -f.  Cases matching a pattern in KNOWN_FAULTS ("PATTERN reason",
fnmatch) fail as "known" and do not fail the run.  The table kind/region x
level -> result (the worst failure per cell, with the members that gave
it; rb: passed but the member was faulted and rebuilt, lat: latent damage
repaired by fsck -y -f) goes to stdout and --table.

The property test damages one random range of one random member of a
random level (zeros, random, revert: the range as it was before the base's
last writes, eio; or a shrink or truncation; seeded, the seed is printed),
then checks: the set of files
that read correctly (read-only mount) after `fsck -y -f` (a full pass:
nothing recorded the damage) contains the set before, every file reads
correctly, and `fsck -n -f` then exits 0.
"""
import argparse
import fnmatch
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
import traceback
import zlib

sys.dont_write_bytecode = True     # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultenv import Env, MountFailed, lazy_umount  # noqa: E402
from rcformat import BS, Member, size_of           # noqa: E402
from workload import Busy, FileSet, summary        # noqa: E402

LEVELS = {1: 2, 4: 3, 5: 4, 6: 4, 10: 4}           # level -> members
IMAGE_BYTES = 24 << 20
CHUNK = "16K"
KINDS = ("none", "zeros", "random", "trunc0", "shrink", "lost-writes",
         "stale", "misdirect", "eio")
REGIONS = ("sb-start", "journal", "csum", "data", "sb-end")
# "none" is the control: the crash of the journal cases without a fault
WHOLE = {"none": "journal", "trunc0": "all", "shrink": "end", "stale": "all"}
ONLINE_ONLY = ("lost-writes", "misdirect")
SHRINK_BYTES = 1 << 20
DATA_RANGE = 64 * BS        # a damaged range in the data region
MISDIRECT = 64 * BS         # how far a misdirected data write lands

# Every kind, region, level and mode at least once, in a few minutes.
SAMPLE = (
    "zeros/data/offline/raid5/m1",
    "zeros/csum/offline/raid6/m2",
    "random/sb-start/offline/raid1/m0",
    "random/journal/offline/raid5/m3",
    "zeros/sb-end/offline/raid10/m1",
    "eio/sb-start/offline/raid4/m1",
    "stale/all/offline/raid6/m0",
    "random/data/online/raid5/m0",
    "zeros/journal/online/raid1/m0",
    "trunc0/all/online/raid5/m2",
    "shrink/end/online/raid4/m0",
    "stale/all/online/raid1/m1",
    "lost-writes/data/online/raid4/m2",
    "lost-writes/csum/online/raid10/m3",
    "lost-writes/sb-start/online/raid5/m1",
    "misdirect/data/online/raid6/m1",
    "eio/data/online/raid10/m0",
    "none/journal/online/raid6/m2",
    "none/journal/offline/raid4/m1",
    "trunc0/all/offline/raid1/m0",
    "shrink/end/offline/raid10/m2",
    "eio/data/offline/raid5/m2",
    "eio/csum/online/raid1/m1",
    "eio/journal/online/raid5/m1",
    "lost-writes/csum/online/raid5/m1",
    "lost-writes/journal/online/raid10/m3",
    "misdirect/csum/online/raid4/m0",
    "misdirect/sb-end/online/raid6/m3",
)

# File sets of the base image of every level: (name, size).  Phase 2
# rewrites some phase-1 files, so that a stale copy of a member (taken
# between the phases) holds their old contents.
PHASE1 = (("f0", 0), ("f1", 1), ("f2", 4095), ("f3", 4096), ("f4", 4097),
          ("d/f5", 16384), ("d/f6", 65539), ("d/e/f7", 100000),
          ("d/e/f8", 262151), ("f9", 1 << 20), ("d/f10", (3 << 20) - 5))
PHASE2_REWRITE = ("f3", "d/f6", "d/e/f8", "f9")
PHASE2_NEW = (("g/h0", 200000), ("g/h1", 1 << 20), ("g/h2", 7))


class Case:
    def __init__(self, kind, region, mode, level, member):
        self.kind, self.region, self.mode = kind, region, mode
        self.level, self.member = level, member
        self.id = "%s/%s/%s/raid%d/m%d" % (kind, region, mode, level, member)

    @staticmethod
    def parse(cid):
        kind, region, mode, lv, m = cid.split("/")
        return Case(kind, region, mode, int(lv[4:]), int(m[1:]))

    @property
    def crash(self):
        """Journal damage matters only to replay: those cases crash."""
        return self.region == "journal"


def all_cases():
    for mode in ("offline", "online"):
        for kind in KINDS:
            if kind in ONLINE_ONLY and mode == "offline":
                continue
            for region in ([WHOLE[kind]] if kind in WHOLE else REGIONS):
                for level, n in LEVELS.items():
                    for m in range(n):
                        yield Case(kind, region, mode, level, m)


class Known:
    """KNOWN_FAULTS: "PATTERN reason" lines; # comments."""

    def __init__(self, path):
        self.entries = []
        if path and os.path.exists(path):
            with open(path) as f:
                for line in f:
                    line = line.strip()
                    if line and not line.startswith("#"):
                        pat, _, why = line.partition(" ")
                        self.entries.append((pat, why.strip()))

    def reason(self, cid):
        for pat, why in self.entries:
            if fnmatch.fnmatchcase(cid, pat):
                return why
        return None


# ---- the arrays every case starts from -------------------------------------

class Base:
    """A populated array of one level, kept as pristine images (and a stale
    copy of each, from between the two phases) for the cases to copy."""

    def __init__(self, env, level, logdir):
        self.env, self.level, self.n = env, level, LEVELS[level]
        self.dir = os.path.join(env.work, "base%d" % level)
        self.names = ["m%d.img" % i for i in range(self.n)]
        self.log = os.path.join(logdir, "base%d.log" % level)
        self.files = FileSet()
        self.geo, self.used = [], []

    @property
    def source(self):
        """The member list (loop devices change from case to case)."""
        return ":".join(self.env.member(n)[0] for n in self.names)

    def build(self):
        env = self.env
        os.makedirs(os.path.join(self.dir, "stale"), exist_ok=True)
        self.clear_back()
        for n in self.names:
            with open(env.member(n)[1], "wb") as f:
                f.truncate(IMAGE_BYTES)
        env.attach(self.names)
        rc, out = env.run("mkfs.raidfs", "-q", "-f", "-l", str(self.level),
                          "-c", CHUNK, *self.source.split(":"), log=self.log)
        if rc:
            raise RuntimeError("mkfs.raidfs -l %d: %s" % (self.level, out))
        self.phase(lambda root: [self.files.write(root, rel, size, seed=i)
                                 for i, (rel, size) in enumerate(PHASE1)])
        self.save(os.path.join(self.dir, "stale"))
        self.phase(self.phase2)
        self.save(self.dir)
        for n in self.names:
            m = Member.read(os.path.join(self.dir, n))
            self.geo.append(m)
            self.used.append(m.used_blocks())

    def phase2(self, root):
        for i, rel in enumerate(PHASE2_REWRITE):
            self.files.write(root, rel, self.files.files[rel][0], seed=500 + i)
        for i, (rel, size) in enumerate(PHASE2_NEW):
            self.files.write(root, rel, size, seed=600 + i)

    def phase(self, fill):
        d = self.env.mount(self.source, self.log)
        fill(self.env.mnt)
        rc = d.stop()
        if rc:
            raise RuntimeError("base raid%d: daemon exit %d"
                               % (self.level, rc))

    def save(self, to):
        for n in self.names:
            shutil.copyfile(self.env.member(n)[1], os.path.join(to, n))

    def clear_back(self):
        self.env.detach()
        for n in os.listdir(self.env.back):
            os.unlink(os.path.join(self.env.back, n))

    def restore(self):
        for n in self.names:
            self.env.rule("%s clear" % n)
        self.clear_back()
        for n in self.names:
            shutil.copyfile(os.path.join(self.dir, n), self.env.member(n)[1])
        self.env.attach(self.names)

    def stale_image(self, member):
        return os.path.join(self.dir, "stale", self.names[member])


# ---- faults -----------------------------------------------------------------

def fault_range(case, geo, used):
    """(offset, length, delta) in bytes of the case's fault on its member."""
    regions = geo.regions()
    off, ln = regions.get(case.region, (0, 0))
    delta = 0
    if case.region == "data" and case.kind not in ONLINE_ONLY:
        # where the files are: the reader reads them, the checks find them
        start = used[len(used) // 3] * BS if used else off
        ln = min(DATA_RANGE, off + ln - start)
        off = start
    elif case.kind == "misdirect":
        step = {"sb-start": 2 * BS, "sb-end": -2 * BS, "journal": 16 * BS,
                "csum": BS, "data": MISDIRECT}[case.region]
        ln -= abs(step) if case.region in ("journal", "data") else 0
        delta = step
    return off, ln, delta


def overwrite(path, off, data):
    with open(path, "r+b") as f:
        f.seek(off)
        f.write(data)


def put_back(path, old):
    """The old image's bytes over the current one, in place (the daemon may
    hold it open: the same file must stay)."""
    with open(old, "rb") as src, open(path, "r+b") as dst:
        while True:
            b = src.read(1 << 20)
            if not b:
                break
            dst.write(b)
        dst.truncate()


def apply_fault(env, base, case, rng, rng_range=None):
    name = base.names[case.member]
    back = env.member(name)[1]
    geo, used = base.geo[case.member], base.used[case.member]
    off, ln, delta = rng_range or fault_range(case, geo, used)
    k = case.kind
    if k == "none":
        pass
    elif k == "zeros":
        overwrite(back, off, bytes(ln))
    elif k == "random":
        overwrite(back, off, rng.randbytes(ln))
    elif k == "trunc0":
        os.truncate(back, 0)
    elif k == "shrink":
        os.truncate(back, size_of(back) - SHRINK_BYTES)
    elif k == "stale":
        put_back(back, base.stale_image(case.member))
    elif k == "revert":
        # the range as it was before phase 2: writes lost there
        with open(base.stale_image(case.member), "rb") as f:
            f.seek(off)
            overwrite(back, off, f.read(ln))
    elif k == "lost-writes":
        env.rule("%s lose-writes %d %d" % (name, off, ln))
    elif k == "misdirect":
        env.rule("%s misdirect %d %d %d" % (name, off, ln, delta))
    elif k == "eio":
        env.rule("%s eio-pending %d %d" % (name, off, ln))
    env.flush(name, resize=k == "shrink")
    return off, ln


# ---- one case ---------------------------------------------------------------

class Result:
    def __init__(self, case):
        self.case = case
        self.fails = []          # short codes, worst first when shown
        self.notes = []
        self.known = None
        self.secs = 0.0

    def fail(self, code):
        if code not in self.fails:
            self.fails.append(code)

    def files(self, statuses, when):
        s = summary(statuses)
        bad = sorted(f for f, st in statuses.items() if st != "ok")
        if bad:
            self.notes.append("%s: %s%s" % (when, " ".join(
                "%s:%s" % (f, statuses[f]) for f in bad[:3]),
                " ..." if len(bad) > 3 else ""))
        for bad, code in (("wrong", "WRONG"), ("missing", "MISSING"),
                          ("eio", "EIO")):
            if s.get(bad):
                self.fail("%s@%s" % (code, when))
        other = [k for k in s if k not in ("ok", "wrong", "missing", "eio")]
        if other:
            self.fail("ERR(%s)@%s" % (",".join(other), when))

    @property
    def passed(self):
        return not self.fails

    def cell(self):
        if self.passed:
            # a range fault that cost the member (faulted past the error
            # threshold, then rebuilt), not a repair in place
            if "rebuilt" in self.notes and self.case.kind not in WHOLE:
                return "rb"
            return "lat" if "latent: fsck -y -f" in self.notes else "ok"
        rank = ("WRONG", "MISSING", "EIO", "ERR", "mount", "fsck", "rebuild")
        worst = sorted(self.fails, key=lambda c: next(
            (i for i, r in enumerate(rank) if c.startswith(r)), len(rank)))
        return worst[0].split("@")[0] + ("(k)" if self.known else "")


def member_state(env, base, member):
    """(counted, not-active) of member, from the superblocks as they are:
    its own counters, and the slot state the other members record."""
    me = Member.read(env.member(base.names[member])[1])
    counted = bool(me and sum(me.counters.values()))
    others = [Member.read(env.member(n)[1])
              for i, n in enumerate(base.names) if i != member]
    others = [o for o in others if o]
    newest = max(others, key=lambda o: o.events) if others else None
    out = me is None or bool(newest and (
        newest.slot_states[member] != "active" or me.events < newest.events))
    return counted, out


def needs_rebuild(env, base, member):
    """Left out by the array, or shorter than it was made (no array can use
    it as it is): what an administrator replaces."""
    return (member_state(env, base, member)[1] or
            size_of(env.member(base.names[member])[1]) < IMAGE_BYTES)


def names_member(text, path):
    """Whether fsck's output says something about the member beyond
    listing it ("PATH: slot N of array ...") or naming SOURCE in its
    verdict (the last line)."""
    listing = re.compile(r"^  %s: (slot \d+|spare) of array [-0-9a-f]+ "
                         r"\([^)]*\), events \d+$" % re.escape(path))
    return any(path in line and not listing.match(line)
               for line in text.splitlines()[:-1])


def may_be_latent(case):
    """Damage that reading every file need not touch, which the daemon can
    therefore miss (fsck -f finds it): the journal (only replay reads it);
    in the data region and checksum table, what reads skip - RAID 4's
    parity member, one of a mirror's copies - and writes that went astray
    (only some of them are ever read back)."""
    if case.region == "journal":
        return True
    if case.region in ("data", "csum"):
        return (case.level in (1, 10) or case.kind in ONLINE_ONLY or
                (case.level == 4 and case.member == LEVELS[4] - 1))
    return False


class Told:
    """What was said and recorded about the fault before any repair: the
    daemon's log, the members' superblocks, fsck -n -f's report."""

    def __init__(self, env, base, case, daemon_log, fsck_nf):
        path = env.member(base.names[case.member])[0]
        self.daemon = any(path in line for line in daemon_log.splitlines())
        self.fsck = names_member(fsck_nf, path)
        self.counted, self.out = member_state(env, base, case.member)
        self.errors_flag = any(m and m.errors_flag for m in (
            Member.read(env.member(n)[1]) for n in base.names))
        self.blamed = [j for j in range(base.n) if j != case.member and
                       any(member_state(env, base, j))]
        self.env, self.base = env, base

    def rewritten_over(self, case):
        """Bytes over both superblock copies of one end while mounted: the
        daemon's next superblock write may replace both before anything
        reads them, and then there is no damage left to find (nothing is
        wrong: both copies are current again)."""
        if case.mode != "online" or case.kind not in ("zeros", "random") \
                or case.region not in ("sb-start", "sb-end"):
            return False
        path = self.env.member(self.base.names[case.member])[1]
        cps = Member.copies(path)
        mine = (0, 1) if case.region == "sb-start" else (2, 3)
        best = max(cps.values()) if cps else None
        return all(cps.get(c) == best for c in mine) and \
            not self.counted and not self.fsck

    @property
    def recorded(self):
        """The array knows something happened: a repair must not skip it."""
        return self.counted or self.out or self.errors_flag

    @property
    def latent(self):
        """Damage nobody read before fsck -f (parity, a second copy): the
        daemon could not tell, and a repair without -f need not see it."""
        return not self.daemon and not self.recorded

    def judge(self, case, res):
        res.notes.append("daemon log: %s" % ("names it" if self.daemon
                                             else "silent"))
        res.notes.append("counted" if self.counted else
                         "taken out" if self.out else "not counted")
        if self.rewritten_over(case):
            res.notes.append("the damaged copies were rewritten whole by "
                             "the next superblock write before any read")
        elif not case.crash and case.kind != "none":
            if not (self.daemon or (self.fsck and may_be_latent(case))):
                res.fail("nolog")
            if not (self.counted or self.out or self.fsck):
                res.fail("nocount")
        for j in self.blamed:
            res.fail("blamed-m%d" % j)
            me = Member.read(self.env.member(self.base.names[j])[1])
            res.notes.append("m%d: %s" % (j, "no superblock" if not me else
                             "events %d, %s" % (me.events, " ".join(
                                 "%s=%d" % kv for kv in me.counters.items()
                                 if kv[1]))))


class Runner:
    def __init__(self, env, known, logdir):
        self.env, self.known, self.logdir = env, known, logdir
        self.bases = {}

    def base(self, level):
        if level not in self.bases:
            b = Base(self.env, level, self.logdir)
            b.build()
            self.bases[level] = b
        return self.bases[level]

    def case_log(self, case):
        return os.path.join(self.logdir, case.id.replace("/", "_") + ".log")

    def run(self, case):
        res = Result(case)
        t0 = time.time()
        base = self.base(case.level)
        base.restore()
        log = self.case_log(case)
        open(log, "w").close()
        try:
            self.run_steps(case, base, res, log)
        except MountFailed as e:
            res.fail("mount=%d" % e.rc)
        except Exception:            # a broken case must not end the run
            res.fail("test-error")
            with open(log, "a") as f:
                f.write(traceback.format_exc())
            for d in self.env.daemons:
                if d.p.poll() is None:
                    d.kill()
        res.secs = time.time() - t0
        res.known = self.known.reason(case.id)
        if self.env.loop:
            res.notes.append("loop devices")
        return res

    def run_steps(self, case, base, res, log):
        env = self.env
        rng = random.Random(zlib.crc32(case.id.encode()))
        files = base.files.copy()
        if case.mode == "offline":
            if case.crash:
                self.busy(case, base, files, res, log, fault=False)
            apply_fault(env, base, case, rng)
        else:
            self.busy(case, base, files, res, log, fault=True, rng=rng)
        # the writes went astray; what the member holds stays so
        for rule in ("lose-writes", "misdirect"):
            env.rule("%s clear %s" % (base.names[case.member], rule))
        self.read_all(base, files, log, res, "read")
        with open(log) as f:
            daemon_log = f.read()
        rc, out_n = env.fsck("-n", base.source, log=log)
        rc, out_nf = env.fsck("-n", "-f", base.source, log=log)
        told = Told(env, base, case, daemon_log, out_nf)
        told.judge(case, res)
        if told.recorded and "every member is clean" in out_n:
            res.fail("fsck-n-fastpath")
        self.repair(case, base, res, log, told)
        self.read_all(base, files, log, res, "after")

    def busy(self, case, base, files, res, log, fault, rng=None):
        """The mount with a writer and a reader; the fault in the middle
        (online); a crash at the end for the journal cases."""
        d = self.env.mount(base.source, log)
        b = Busy(self.env.mnt, files, sorted(base.files.files), seed=7)
        b.start()
        time.sleep(0.8)
        if fault:
            apply_fault(self.env, base, case, rng)
        time.sleep(1.5)
        if case.crash:
            # the writer stops on the dead mount (ENOTCONN) before it goes:
            # else its next file lands in the bare directory below
            b.crashed = True
            d.kill(umount=False)
            b.stop(crashed=True)
            lazy_umount(self.env.mnt)
            self.bare_mount_point(res)
        else:
            b.stop()
            rc = d.stop()
            if rc:
                res.fail("daemon=%d@busy" % rc)
        if b.wrong:
            res.fail("WRONG@busy")
        if b.read_errors:
            res.fail("EIO@busy")
        if b.write_errors:
            res.fail("EIO-write@busy")
            res.notes.append("write errors: %s" % " ".join(
                "%s:%s" % kv for kv in sorted(b.write_errors.items())[:4]))
        if b.read_errors:
            res.notes.append("read errors: %s" % " ".join(
                "%s:%s" % kv for kv in sorted(b.read_errors.items())[:4]))
        res.notes.append("%d files written while busy" % b.written)

    def bare_mount_point(self, res):
        """Nothing may have been written to the mount point itself: those
        files would be hidden by the next mount and look lost."""
        stray = os.listdir(self.env.mnt)
        if stray:
            res.fail("test-error")
            res.notes.append("written under the bare mount point: %s"
                             % " ".join(stray[:4]))
            for n in stray:
                shutil.rmtree(os.path.join(self.env.mnt, n),
                              ignore_errors=True)

    def read_all(self, base, files, log, res, when, opts="cache_mb=4"):
        try:
            d = self.env.mount(base.source, log, opts)
        except MountFailed as e:
            res.fail("mount=%d@%s" % (e.rc, when))
            return {}
        statuses = files.check(self.env.mnt)
        rc = d.stop()
        res.files(statuses, when)
        if rc:
            res.fail("daemon=%d@%s" % (rc, when))
        return statuses

    def repair(self, case, base, res, log, told):
        """fsck -y (a rebuild onto a member left out), then fsck -n -f must
        find nothing.  Latent damage may need fsck -y -f: nothing told the
        array about it."""
        env, src = self.env, base.source
        rc, out = env.fsck("-y", src, log=log)
        if rc & ~(1 | 4):      # operational error, usage, cancelled
            res.fail("fsck-y=%d" % rc)
        if needs_rebuild(env, base, case.member):
            self.rebuild(case, base, res, log)
        rc, out = env.fsck("-n", "-f", src, log=log)
        if rc and told.latent and told.fsck and may_be_latent(case):
            res.notes.append("latent: fsck -y -f")
            env.fsck("-y", "-f", src, log=log)
            rc, out = env.fsck("-n", "-f", src, log=log)
        elif rc:
            res.fail("fsck-nf=%d" % rc)
            # for the report: would a forced pass have done it?
            env.fsck("-y", "-f", src, log=log)
            rc, _ = env.fsck("-n", "-f", src, log=log)
            res.notes.append("after fsck -y -f: fsck -n -f %d" % rc)
            return
        if rc:
            res.fail("fsck-nf=%d" % rc)

    def rebuild(self, case, base, res, log):
        """The member was left out: put it back as an administrator would,
        at its size, and rebuild onto it."""
        ff, back = self.env.member(base.names[case.member])
        if size_of(back) < IMAGE_BYTES:
            os.truncate(back, IMAGE_BYTES)
            self.env.flush(base.names[case.member], resize=True)
        rc, _ = self.env.fsck("-y", "--rebuild", ff, base.source, log=log)
        res.notes.append("rebuilt")
        if rc & ~1:
            res.fail("rebuild=%d" % rc)


# ---- the property test ------------------------------------------------------

# revert: a range of the member as it was before the base's second phase
# (its writes there lost); the whole stale member is the matrix's
PROPERTY_KINDS = ("zeros", "random", "revert", "eio", "shrink", "trunc0")


def property_case(rng, runner):
    level = rng.choice(sorted(LEVELS))
    member = rng.randrange(LEVELS[level])
    kind = rng.choice(PROPERTY_KINDS)
    case = Case(kind, "range", "offline", level, member)
    base = runner.base(level)
    blocks = IMAGE_BYTES // BS
    start = rng.randrange(blocks)
    ln = min(rng.choice((1, 2, 16, 64, 512, 4096)), blocks - start)
    return case, base, (start * BS, ln * BS, 0)


def property_run(runner, iters, seed, loop="none"):
    print("property test: %d iterations, seed %d" % (iters, seed))
    rng = random.Random(seed)
    results = []
    for i in range(iters):
        runner.env.loop = loop == "all" or (loop == "half" and i % 2)
        case, base, rrange = property_case(rng, runner)
        res = Result(case)
        t0 = time.time()
        base.restore()
        log = runner.case_log(case) + ".%d" % i
        files = base.files.copy()
        apply_fault(runner.env, base, case, rng, rrange)
        ro = "ro,cache_mb=4"
        before = runner.read_all(base, files, log, Result(case), "before", ro)
        # nothing recorded the damage (the mount was read-only): a full pass
        runner.env.fsck("-y", "-f", base.source, log=log)
        if needs_rebuild(runner.env, base, case.member):
            runner.rebuild(case, base, res, log)
        after = runner.read_all(base, files, log, res, "after", ro)
        shrunk = [f for f, s in before.items()
                  if s == "ok" and after.get(f) != "ok"]
        if shrunk:
            res.fail("SHRUNK(%s)" % ",".join(shrunk))
        rc, _ = runner.env.fsck("-n", "-f", base.source, log=log)
        if rc:
            res.fail("fsck-nf=%d" % rc)
        res.secs = time.time() - t0
        res.known = runner.known.reason("property/" + case.id)
        ok_before = sum(1 for s in before.values() if s == "ok")
        where = ("blocks %d+%d" % (rrange[0] // BS, rrange[1] // BS)
                 if case.kind not in WHOLE else "the image")
        print("  %2d %-34s %s%s: %d/%d files ok before, %s  %s (%.1fs)"
              % (i, case.id, where, " (loop)" if runner.env.loop else "",
                 ok_before,
                 len(files.files), "ok" if res.passed else
                 " ".join(res.fails), "known: " + res.known
                 if res.known and not res.passed else "", res.secs),
              flush=True)
        results.append(res)
    return results


# ---- the table --------------------------------------------------------------

def bad_cell(rs, bad):
    """The failures of one cell: "CODE" when every member's case gave it,
    else "CODE(m1,m3)"; codes worst first."""
    by_code = {}
    for r in bad:
        by_code.setdefault(r.cell(), []).append("m%d" % r.case.member)
    return " ".join(code if len(ms) == len(rs) else
                    "%s(%s)" % (code, ",".join(ms))
                    for code, ms in sorted(by_code.items()))


def table(results):
    levels = sorted({r.case.level for r in results})
    lines = []
    for mode in ("offline", "online"):
        rows = {}
        for r in results:
            if r.case.mode != mode:
                continue
            key = (KINDS.index(r.case.kind), r.case.kind, r.case.region)
            rows.setdefault(key, {}).setdefault(r.case.level, []).append(r)
        if not rows:
            continue
        grid = [["kind/region"] + ["raid%d" % lv for lv in levels]]
        for key in sorted(rows, key=lambda k: (k[0], REGIONS.index(k[2])
                                               if k[2] in REGIONS else -1)):
            cells = ["%s/%s" % key[1:]]
            for lv in levels:
                rs = rows[key].get(lv, [])
                bad = [r for r in rs if not r.passed]
                if not rs:
                    cells.append("-")
                elif not bad:
                    c = sorted({r.cell() for r in rs})
                    cells.append("/".join(c) + ("" if len(rs) == 1 else
                                                " x%d" % len(rs)))
                else:
                    cells.append(bad_cell(rs, bad))
            grid.append(cells)
        lines.append("%s:" % mode)
        lines += columns(grid)
    return "\n".join(lines)


def columns(grid):
    """The rows of grid with every column as wide as its widest cell."""
    widths = [max(len(row[i]) for row in grid) + 2
              for i in range(len(grid[0]))]
    return ["  " + "".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
            for row in grid]


def details(results):
    out = []
    for r in results:
        state = "PASS" if r.passed else ("KNOWN" if r.known else "FAIL")
        out.append("%-5s %-36s %5.1fs  %s%s%s" % (
            state, r.case.id, r.secs, " ".join(r.fails) or "-",
            "  [" + ", ".join(r.notes) + "]" if r.notes else "",
            "  known: " + r.known if r.known and not r.passed else ""))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--faultfs", required=True)
    ap.add_argument("--known")
    ap.add_argument("--table")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--sample", action="store_true")
    g.add_argument("--full", action="store_true")
    g.add_argument("--case", nargs="+")
    g.add_argument("--property", type=int)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--loop", choices=("none", "all", "half"),
                    default="none", help="members as loop devices over the "
                    "images: in every case, or in every other one")
    a = ap.parse_args()

    if a.loop != "none" and subprocess.run(
            ["losetup", "-f"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL).returncode:
        print("no free loop device here: the members are files only")
        a.loop = "none"
    env = Env(a.work, a.bin, a.faultfs)
    logdir = os.path.join(a.work, "logs")
    os.makedirs(logdir, exist_ok=True)
    runner = Runner(env, Known(a.known), logdir)
    # a TERM (the test's timeout) unwinds through env.close(): no mount,
    # daemon or faultfs is left behind
    signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(143))
    env.start()
    try:
        if a.property is not None:
            seed = a.seed if a.seed is not None else random.randrange(1 << 30)
            results = property_run(runner, a.property, seed, a.loop)
        else:
            cases = ([Case.parse(c) for c in SAMPLE] if a.sample else
                     list(all_cases()) if a.full else
                     [Case.parse(c) for c in a.case])
            results = []
            for i, c in enumerate(cases):
                env.loop = a.loop == "all" or (a.loop == "half" and i % 2)
                r = runner.run(c)
                results.append(r)
                print(details([r]), flush=True)
                if not r.passed and not r.known:
                    with open(runner.case_log(c)) as f:
                        tail = f.read().splitlines()[-25:]
                    print("      | " + "\n      | ".join(tail), flush=True)
    finally:
        env.close()

    text = "" if a.property is not None else table(results) + "\n\n"
    fixed = [r for r in results if r.passed and r.known]
    failed = [r for r in results if not r.passed and not r.known]
    known = [r for r in results if not r.passed and r.known]
    text += "%d cases: %d passed, %d known failures, %d failed\n" % (
        len(results), len(results) - len(failed) - len(known), len(known),
        len(failed))
    passed_known = "".join("listed in KNOWN_FAULTS but passed: %s\n"
                           % r.case.id for r in fixed)
    print()
    print(text + "".join(passed_known.splitlines(True)[:10]), end="")
    if len(fixed) > 10:
        print("(and %d more listed but passed)" % (len(fixed) - 10))
    # the failures again, last: run.sh shows only the output's tail, and
    # the table above pushed their logs out of it (a sample case failed
    # once in a full run with nothing left to read)
    for r in failed[:2]:
        print(details([r]))
        try:
            with open(runner.case_log(r.case)) as f:
                tail = f.read().splitlines()[-12:]
            print("      | " + "\n      | ".join(tail))
        except (OSError, AttributeError):
            pass
    if a.table:
        with open(a.table, "w") as f:
            f.write(text + passed_known + "\n" + details(results) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
