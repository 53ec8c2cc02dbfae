#!/usr/bin/env python3
"""bench/report.py: the benchmark suite's report (bench/run.sh calls it).

Reads the run's results table (round, target, job, metric, value, unit:
one line per measurement), writes docs/BENCHMARKS.md: the machine, the
settings, then per section a table of medians with min-max over the rounds
and each target's ratio to raidfs, and PNG plots (gnuplot) beside it in
bench/ under the report's folder.  Pure text in, text and PNGs out.
"""
import argparse
import collections
import os
import statistics
import subprocess

# Sections of the report: (title, job prefixes).  A job's rows go to the
# first section whose prefix it starts with.
SECTIONS = [
    ("Issue 10's jobs (fio psync, metadata, fsx, dbench)",
     ["fio-seqwrite", "fio-seqread", "fio-randread", "fio-randwrite",
      "meta-", "links-", "fsx", "dbench"]),
    ("Degraded: one member failed", []),
    ("Scrub and rebuild, 10 % and 90 % full", ["scrub-", "rebuild-"]),
    ("The seeds' bonnie++ table", ["bonnie-"]),
    ("The seeds' program: a file written with fsync before close, random seeks + reads, "
     "read back",
     ["seeks-"]),
    ("The seeds' cached / uncached table", ["cache-"]),
]
ORDER = ["raidfs-0", "raidfs-1", "raidfs-5", "raidfs-6", "raidfs-10", "raidfsloop-5", "ceiling", "ceiling-xattr",
         "zfs-raidz1", "zfs-raidz2", "btrfs-raid5", "btrfs-raid6", "backing"]
# Peers are compared with raidfs at the same redundancy.
REFERENCE = {"zfs-raidz1": "raidfs-5", "btrfs-raid5": "raidfs-5",
             "zfs-raidz2": "raidfs-6", "btrfs-raid6": "raidfs-6",
             "ceiling": "raidfs-5", "ceiling-xattr": "raidfs-5", "backing": "raidfs-5"}
# Issue 10's own table: these rows, these columns, in this order.
HEADLINE_ROWS = [("fio-seqwrite", "MiB/s"), ("fio-seqread", "MiB/s"), ("fio-randread1", "IOPS"),
                 ("fio-randread4", "IOPS"), ("fio-randwrite", "IOPS"), ("meta-create", "files/s"),
                 ("meta-stat", "files/s"), ("meta-delete", "files/s"), ("fio-seqwrite", "cpu/GiB"),
                 ("fsx", "seconds"), ("dbench", "MB/s")]
HEADLINE_COLS = ["ceiling", "ceiling-xattr", "raidfs-5", "raidfsloop-5", "btrfs-raid5", "zfs-raidz1"]
LABELS = {"cpu/GiB": "CPU s/GiB", "cpu/op": "CPU us/op", "cpu": "CPU s",
          "cpu%": "CPU %", "seconds": "s"}


def section_of(job):
    if job.endswith("-degraded"):
        return 1
    for i, (_, prefixes) in enumerate(SECTIONS):
        if any(job.startswith(p) for p in prefixes):
            return i
    return 0


def load(path):
    """{(job, metric): {target: [values]}}, units, rows in first-seen order."""
    values = collections.defaultdict(lambda: collections.defaultdict(list))
    units, rows = {}, []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 6:
                continue
            _, target, job, metric, value, unit = parts
            try:
                v = float(value)
            except ValueError:
                continue
            if (job, metric) not in units:
                rows.append((job, metric))
            units[(job, metric)] = unit
            values[(job, metric)][target].append(v)
    return values, units, rows


def fmt(v):
    if v >= 10000:
        return "%.1fk" % (v / 1000)
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def cell(vals):
    m = statistics.median(vals)
    if len(vals) == 1:
        return fmt(m)
    return "%s (%s-%s)" % (fmt(m), fmt(min(vals)), fmt(max(vals)))


def ratio(values, row, target):
    ref = REFERENCE.get(target)
    a, b = values[row].get(target), values[row].get(ref)
    if not a or not b or statistics.median(b) == 0:
        return ""
    return "%.2fx" % (statistics.median(a) / statistics.median(b))


def ceiling_ratio(values, row, target):
    a, b = values[row].get(target), values[row].get("ceiling")
    if not a or not b or statistics.median(b) == 0:
        return ""
    return " **%.2fx**" % (statistics.median(a) / statistics.median(b))


def table(values, units, rows, targets):
    out = ["| job | metric | " + " | ".join(targets) + " |",
           "|---|---|" + "---|" * len(targets)]
    for row in rows:
        cells = []
        for t in targets:
            vals = values[row].get(t)
            if not vals:
                cells.append("")
            elif t.startswith(("raidfs-", "raidfsloop-")):
                cells.append(cell(vals) + ceiling_ratio(values, row, t))
            else:
                r = ratio(values, row, t)
                cells.append(cell(vals) + (" [%s]" % r if r else ""))
        job, metric = row
        out.append("| %s | %s | %s |" % (job, LABELS.get(metric, metric), " | ".join(cells)))
    return out


def plot(values, outdir, name, title, ylabel, rows, targets, log=False):
    """A clustered bar chart of the medians of ROWS by target; PNG path."""
    targets = [t for t in targets if any(values[r].get(t) for r in rows)]
    if not targets:
        return None
    dat = os.path.join(outdir, name + ".dat")
    with open(dat, "w") as f:
        f.write("target " + " ".join(j for j, _ in rows) + "\n")
        for t in targets:
            f.write(t + " " + " ".join(
                "%g" % statistics.median(values[r][t]) if values[r].get(t) else "-"
                for r in rows) + "\n")
    png = os.path.join(outdir, name + ".png")
    script = f"""set terminal pngcairo size 1000,480 font ',10'
set output '{png}'
set title '{title}'
set ylabel '{ylabel}'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set datafile missing '-'
set key outside top
set xtics rotate by -30
set grid ytics
{"set logscale y" if log else "set yrange [0:*]"}
plot for [i=2:{len(rows) + 1}] '{dat}' using i:xtic(1) title columnheader(i)
"""
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True,
                       stderr=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError) as e:
        print("report: no plot %s: %s" % (name, e))
        return None
    finally:
        os.unlink(dat)
    return png


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, text=True, capture_output=True).stdout.strip()
    except OSError:
        return ""


def machine():
    lscpu = sh("lscpu | grep -E '^(Model name|CPU\\(s\\)|Thread|Core|Socket|CPU max MHz|L2|L3)'")
    pkgs = sh("dpkg-query -W -f='${Package} ${Version}\\n' fio zfs-fuse btrfs-progs "
              "bonnie++ dbench libfuse3-3 gnuplot-nox 2>/dev/null")
    return ["```", lscpu,
            "memory: " + sh("free -h | awk '/^Mem:/ { print $2 }'"),
            "kernel: " + sh("uname -srvm"),
            "debian: " + sh("cat /etc/debian_version"),
            "raidfs: " + sh("git -C '%s' log -1 --format='%%h %%cd' --date=short" %
                            os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
            pkgs, "```"]


def lines_of(path):
    try:
        with open(path) as f:
            return [l.rstrip("\n") for l in f if l.strip()]
    except OSError:
        return []


def settings(args):
    keys = ["BENCH_SIZE_MB", "BENCH_RUNTIME", "BENCH_FILES", "BENCH_FSX_OPS",
            "BENCH_DBENCH_S", "BENCH_BONNIE_MB", "BENCH_SEEK_MB", "BENCH_SEEKS",
            "BENCH_CACHE_MB", "BENCH_CAP_MB", "BENCH_QUICK"]
    return ", ".join("%s=%s" % (k, os.environ[k]) for k in keys if k in os.environ)


def steal_share(path):
    """CPU time the hypervisor gave to others (steal) as a share of all the
    machine's CPU time between the first and the last /proc/stat "cpu" line
    in path (run.sh writes one at the start and one at the end); None
    without two lines."""
    rows = [[int(x) for x in line.split()[1:9]] for line in lines_of(path)
            if line.startswith("cpu ")]
    if len(rows) < 2:
        return None
    delta = [b - a for a, b in zip(rows[0], rows[-1])]
    return 100.0 * delta[7] / sum(delta) if sum(delta) > 0 else None


def header(args):
    load_avg = [float(x) for x in lines_of(os.path.join(args.run, "load"))]
    steal = steal_share(os.path.join(args.run, "cpustat"))
    out = ["# Benchmarks", "",
           "Made by `make bench` (bench/run.sh; how it works and how to read it: the end",
           "of this file).  Run of %s: %s round(s), targets in alternating rounds, every other one backwards," % (
               args.start, args.rounds),
           "members on %s.  Settings: %s." % (args.store, settings(args)), ""]
    if args.note:
        out += ["**Note:** " + args.note, ""]
    if load_avg:
        out += ["Load average (1 min) at each target's start: min %.1f, median %.1f, max %.1f "
                "(the machine has %s CPUs)." % (min(load_avg), statistics.median(load_avg),
                                                max(load_avg), os.cpu_count()), ""]
    if steal is not None:
        out += ["CPU steal over the run: %.0f %% of the machine's CPU time went to other guests "
                "of its host (a virtual machine's noise: every target of a round pays it alike)."
                % steal, ""]
    out += ["## Machine", ""] + machine() + [""]
    skipped = lines_of(os.path.join(args.run, "skipped"))
    failed = lines_of(os.path.join(args.run, "failed"))
    if skipped:
        out += ["Skipped targets:", ""] + ["- %s: %s" % tuple(
            (s.split("\t", 1) + [""])[:2]) for s in skipped] + [""]
    if failed:
        out += ["Failed jobs (no value in their cells for that round):", ""] + [
            "- round %s, %s: %s" % tuple(f.split("\t")[:3]) for f in failed] + [""]
    return out


HOW = """## How to read this

Each cell is the median over the rounds, with the lowest and highest value
in parentheses.  In a raidfs column, **bold** is raidfs's ratio to the FUSE
passthrough ceiling in the same run; in a peer's column, [brackets] hold
the peer's ratio to raidfs at the same redundancy (raidz1 and btrfs raid5
against raidfs-5, raidz2 and btrfs raid6 against raidfs-6, the ceiling and
the backing store against raidfs-5).  raidfsloop-5 is raidfs-5 with loop
devices over its image files as members (the block-device path, members
opened O_DIRECT), as btrfs's targets have.  ceiling-xattr is the same
passthrough serving extended attributes, as raidfs does: the kernel then
asks for security.capability before every write(2), a round trip the plain
ceiling answers once for all with ENOSYS (raidfs negotiates killpriv_v2,
which the passthrough cannot, and is asked once per file).  For MiB/s, IOPS and files/s higher
is better; for CPU (s per GiB, us per operation, %, s) and seconds lower
is.  An empty cell: no value that round (the job failed, was skipped, or
bonnie++ found the phase too fast to time, its "+++++").

CPU is the measured program's (fio, bench_meta, ...) user + system time,
plus the growth over the job of the target's daemons' (raidfs, the
passthrough, zfs-fuse) and of the kernel's threads' (btrfs, the loop
devices and writeback work there).  The kernel threads are counted machine
wide, so other work on the machine adds to every target alike.  bonnie++'s
%CPU is its own, as bonnie++ reports it (a FUSE daemon's CPU is not in it).

## How

`make bench` (as root) runs bench/run.sh, `make bench BENCH_QUICK=1` a
smoke run of a few minutes; `make bench-deps` installs the peers and tools.
`bench/run.sh --help` lists the settings (sizes, rounds, targets, jobs,
members on disk with BENCH_STORE_DIR, every member a disk of N MiB/s with
BENCH_DISK_MIBPS=N: the rebuild and scrub rates against a member's read).
The suite is small scripts with
one job each: bench/targets/*.sh set up and tear down one kind of target
(check, up, down, degrade, scrub, rebuild), bench/jobs/*.sh run one
workload each on the mounted target, bench/report.py writes this file.
Each round sets every target up afresh, runs every job, fails one member
and runs the reads again, tears it down, then sets up a smaller copy for
scrub and rebuild at 10 % and 90 % full.  Scrub and rebuild run online
everywhere: raidfs's scrub is raidfsctl scrub start, its rebuild member 1
failed, removed and a blank image added (raidfsctl fail, remove, add), each
timed to its end with the daemon's CPU (before 2026-12-04 they were offline,
fsck.raidfs -y -f and fsck.raidfs -y -f --rebuild, whose rebuild time held a
full check of the array as well).
The raw measurements are in BENCHMARKS.tsv beside this file.
A change is measured against what it changed with bench/speed.sh: the
target raidfsref-LEVEL is raidfs-LEVEL run by another build
(BENCH_REF_BIN), in the same alternating rounds, beside the ceiling and
the backing store, on the jobs of issue 10's goals for the filesystem and
the FUSE layer (seqwrite and its CPU per GiB, with the suite's 1 GiB
file, randwrite, meta, links, fsx, dbench) and on 4 KiB random O_DIRECT
writes (randwrite-direct); it prints each goal's medians and their ratios
to the ceiling.
"""


def main():
    ap = argparse.ArgumentParser()
    for a in ("results", "run", "out", "start", "rounds", "store", "note"):
        ap.add_argument("--" + a, default="")
    args = ap.parse_args()
    values, units, rows = load(args.results)
    present = {t for r in values.values() for t in r}
    targets = [t for t in ORDER if t in present] + sorted(present - set(ORDER))
    plotdir = os.path.join(os.path.dirname(os.path.abspath(args.out)), "bench")
    os.makedirs(plotdir, exist_ok=True)
    out = header(args)
    hrows = [r for r in HEADLINE_ROWS if r in units]
    hcols = [t for t in HEADLINE_COLS if any(values[r].get(t) for r in hrows)]
    if hrows and hcols:
        out += ["## Issue 10's table: RAID 5 of 5 members (4+1)", ""] + \
            table(values, units, hrows, hcols) + [""]
    for i, (title, _) in enumerate(SECTIONS):
        srows = [r for r in rows if section_of(r[0]) == i]
        if not srows:
            continue
        cols = [t for t in targets if any(values[r].get(t) for r in srows)]
        out += ["## " + title, ""] + table(values, units, srows, cols) + [""]
    plots = [
        ("throughput", "Sequential throughput (fio, 1 MiB)", "MiB/s",
         [("fio-seqwrite", "MiB/s"), ("fio-seqread", "MiB/s")]),
        ("cpu", "CPU seconds per GiB", "CPU s / GiB",
         [("fio-seqwrite", "cpu/GiB"), ("fio-seqread", "cpu/GiB")]),
        ("iops", "4 KiB random I/O (log scale)", "IOPS",
         [("fio-randread1", "IOPS"), ("fio-randread4", "IOPS"), ("fio-randwrite", "IOPS"),
          ("fio-randwrite-direct", "IOPS")]),
    ]
    made = []
    for name, title, ylabel, prow in plots:
        png = plot(values, plotdir, name, title, ylabel, prow, targets, log=name == "iops")
        if png:
            made.append("![%s](bench/%s)" % (title, os.path.basename(png)))
    if made:
        out += ["## Plots", ""] + made + [""]
    out += [HOW]
    with open(args.out, "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
