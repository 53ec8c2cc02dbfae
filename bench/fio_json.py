#!/usr/bin/env python3
"""bench/fio_json.py FILE: for jobs/fio.sh and jobs/cache.sh, of fio's JSON
output (one group: --group_reporting) prints "BYTES IOS IOPS SECONDS",
reads and writes together, SECONDS the longer of their run times (fio's
own, its start-up left out)."""
import json
import sys

job = json.load(open(sys.argv[1]))["jobs"][0]
dirs = [job[d] for d in ("read", "write")]
print(sum(d["io_bytes"] for d in dirs), sum(d["total_ios"] for d in dirs),
      sum(d["iops"] for d in dirs), max(d["runtime"] for d in dirs) / 1000.0)
