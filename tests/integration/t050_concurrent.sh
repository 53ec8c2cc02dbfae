#!/bin/bash
# Several processes at once: each writes its own files, all write disjoint
# ranges of one shared file, and all append lines to one O_APPEND log.
# Everything reads back intact, also after a remount.
. "$(dirname "$0")/lib.sh"
t_setup

t_images 4 1G
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"
M=$T/mnt
NPROC=8

t_log "$NPROC writers"
cat >"$T/writer.py" <<'PYEOF'
import os, sys, hashlib, random
m, k, nproc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(k)
# own files, written in odd-sized pieces
for i in range(20):
    data = rnd.randbytes(rnd.randrange(1, 600000))
    path = os.path.join(m, "own", "w%d-%d" % (k, i))
    with open(path, "wb") as f:
        pos = 0
        while pos < len(data):
            n = rnd.randrange(1, 70000)
            f.write(data[pos:pos + n])
            pos += n
    with open(path + ".sha", "w") as f:
        f.write(hashlib.sha256(data).hexdigest())
# the shared file: slice k of every 1 MiB row, unaligned slices
fd = os.open(os.path.join(m, "shared"), os.O_WRONLY)
slice_ = (1 << 20) // nproc
for row in range(16):
    os.pwrite(fd, bytes([k + 1]) * slice_, row * (1 << 20) + k * slice_)
os.close(fd)
# the log: whole lines, each one write(2)
fd = os.open(os.path.join(m, "log"), os.O_WRONLY | os.O_APPEND)
for i in range(500):
    os.write(fd, b"writer %d line %04d %s\n" % (k, i, b"x" * (i % 50)))
os.close(fd)
PYEOF
mkdir "$M/own"
: >"$M/shared"
: >"$M/log"
pids=()
for k in $(seq 0 $((NPROC - 1))); do
	"$PY" "$T/writer.py" "$M" "$k" "$NPROC" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || t_fail "writer $p failed"; done

verify() {
	"$PY" - "$M" "$NPROC" <<'PYEOF'
import os, sys, hashlib, collections
m, nproc = sys.argv[1], int(sys.argv[2])
own = os.path.join(m, "own")
files = [n for n in os.listdir(own) if not n.endswith(".sha")]
assert len(files) == 20 * nproc, "%d own files" % len(files)
for n in files:
    with open(os.path.join(own, n), "rb") as f:
        got = hashlib.sha256(f.read()).hexdigest()
    with open(os.path.join(own, n + ".sha")) as f:
        assert got == f.read(), "content of " + n
with open(os.path.join(m, "shared"), "rb") as f:
    data = f.read()
assert len(data) == 16 << 20, "shared size %d" % len(data)
slice_ = (1 << 20) // nproc
for row in range(16):
    for k in range(nproc):
        off = row * (1 << 20) + k * slice_
        assert data[off:off + slice_] == bytes([k + 1]) * slice_, "shared row %d slice %d" % (row, k)
lines = open(os.path.join(m, "log"), "rb").read().split(b"\n")
assert lines[-1] == b"", "log does not end with a newline"
seen = collections.defaultdict(list)
for l in lines[:-1]:
    w, k, _, i, pad = l.split(b" ") if l.count(b" ") == 4 else (None,) * 5
    assert w == b"writer", "torn line %r" % l[:60]
    assert pad == b"x" * (int(i) % 50), "torn line %r" % l[:60]
    seen[int(k)].append(int(i))
for k in range(nproc):
    assert seen[k] == list(range(500)), "writer %d lines out of order or lost" % k
PYEOF
}
verify || t_fail "after the concurrent writes"
t_umount "$M"
t_mount "$IMGS" "$M"
verify || t_fail "after remount"
t_umount "$M"
exit 0
