#!/usr/bin/env python3
"""bench/test_report.py: the report's arithmetic on a made-up results table
(python3 bench/test_report.py; no root, no mounts, a second or so).

Three rounds of raidfs-5, the ceiling and btrfs-raid5; the report must give
medians with min-max, raidfs's ratio to the ceiling in bold, a peer's ratio
to raidfs at its level in brackets, put degraded and scrub rows in their
own sections, and list skipped targets and failed jobs.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

ROWS = [  # round target job metric value unit
    (1, "raidfs-5", "fio-seqwrite", "MiB/s", 400), (2, "raidfs-5", "fio-seqwrite", "MiB/s", 500),
    (3, "raidfs-5", "fio-seqwrite", "MiB/s", 450),
    (1, "ceiling", "fio-seqwrite", "MiB/s", 1000), (2, "ceiling", "fio-seqwrite", "MiB/s", 900),
    (3, "ceiling", "fio-seqwrite", "MiB/s", 1100),
    (1, "btrfs-raid5", "fio-seqwrite", "MiB/s", 225), (2, "btrfs-raid5", "fio-seqwrite", "MiB/s", 225),
    (3, "btrfs-raid5", "fio-seqwrite", "MiB/s", 900),
    (1, "raidfs-5", "fio-seqread-degraded", "MiB/s", 300),
    (1, "raidfs-5", "scrub-90%", "seconds", 2.5),
]


def run_report(tmp):
    results = os.path.join(tmp, "results.tsv")
    with open(results, "w") as f:
        for r in ROWS:
            f.write("\t".join(str(x) for x in r[:4]) + "\t%s\t%s\n" % (r[4], r[3]))
    with open(os.path.join(tmp, "skipped"), "w") as f:
        f.write("zfs-raidz1\tzfs-fuse not installed\n")
    with open(os.path.join(tmp, "cpustat"), "w") as f:     # 100 ticks, 25 stolen
        f.write("cpu  1000 0 500 8000 0 0 0 500 0 0\n"
                "cpu  1030 0 510 8035 0 0 0 525 0 0\n")
    with open(os.path.join(tmp, "failed"), "w") as f:
        f.write("2\tbtrfs-raid5\tdbench\tfailed\n")
    out = os.path.join(tmp, "B.md")
    env = dict(os.environ, PATH="/nonexistent")  # no gnuplot: plots are skipped, not fatal
    subprocess.run([sys.executable, os.path.join(HERE, "report.py"), "--results", results,
                    "--run", tmp, "--out", out, "--start", "now", "--rounds", "3",
                    "--store", "tmpfs"], check=True, env=env, capture_output=True)
    return open(out).read()


def expect(text, needle):
    if needle not in text:
        print("test_report: missing %r" % needle)
        return 1
    return 0


def main():
    with tempfile.TemporaryDirectory() as tmp:
        md = run_report(tmp)
    fails = 0
    fails += expect(md, "450 (400-500) **0.45x**")       # median 450 / ceiling 1000
    fails += expect(md, "1000 (900-1100) [2.22x]")       # the ceiling against raidfs-5
    fails += expect(md, "225 (225-900) [0.50x]")         # btrfs raid5 against raidfs-5
    fails += expect(md, "## Issue 10's table: RAID 5 of 5 members (4+1)\n\n"
                    "| job | metric | ceiling | raidfs-5 | btrfs-raid5 |")
    fails += expect(md, "## Degraded: one member failed")
    fails += expect(md, "| fio-seqread-degraded | MiB/s | 300 |")
    fails += expect(md, "| scrub-90% | s | 2.50 |")
    fails += expect(md, "- zfs-raidz1: zfs-fuse not installed")
    fails += expect(md, "- round 2, btrfs-raid5: dbench")
    fails += expect(md, "CPU steal over the run: 25 %")
    print("test_report: %s" % ("FAILED" if fails else "ok"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
