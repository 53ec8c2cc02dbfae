#!/bin/bash
# kill -9 of the daemon in the middle of a workload that fsyncs: after the
# next mount (journal replay, no full check) everything fsync'd is there
# byte for byte, the whole tree reads without errors and stays usable.
. "$(dirname "$0")/lib.sh"
t_setup

t_images 4 1G
t_mkfs 5 64K "${IMG_LIST[@]}"
M=$T/mnt

cat >"$T/work.py" <<'PYEOF'
import os, sys, random, hashlib
m, log, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = random.Random(seed)
d = os.path.join(m, "round%d" % seed)
os.makedirs(d, exist_ok=True)
logf = open(log, "a")
i = 0
while True:
    i += 1
    name = os.path.join(d, "f%05d" % i)
    data = r.randbytes(r.choice([100, 4096, 5000, 70000, 300000, 1 << 20]))
    fd = os.open(name + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, data)
    synced = r.random() < 0.5
    if synced:
        os.fsync(fd)
    os.close(fd)
    os.rename(name + ".tmp", name)
    if synced:
        dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        os.fsync(dfd)
        os.close(dfd)
        # only now is the file promised: record it outside the mount
        logf.write("%s %s\n" % (name, hashlib.sha256(data).hexdigest()))
        logf.flush()
        os.fsync(logf.fileno())
    if i % 7 == 0:      # some overwrites in place, fsync'd or not
        victim = os.path.join(d, "f%05d" % r.randrange(1, i + 1))
        if os.path.exists(victim):
            with open(victim, "r+b") as f:
                f.write(b"unsynced overwrite")
PYEOF

for round in 1 2 3; do
	t_log "round $round: workload, then kill -9"
	t_mount "$IMGS" "$M"
	"$PY" "$T/work.py" "$M" "$T/synced.$round" "$round" 2>/dev/null &
	wpid=$!
	sleep $((2 + round))
	t_crash_daemon "$M" "$wpid"
	n=$(wc -l <"$T/synced.$round")
	[ "$n" -gt 0 ] || t_fail "round $round: nothing was fsync'd before the kill"

	t_log "round $round: mount again, check $n fsync'd files (and all earlier rounds)"
	: >"$T/daemon.log"
	t_mount "$IMGS" "$M"
	cat "$T"/synced.* >"$T/promised"
	"$PY" - "$T/promised" "$M" <<'PYEOF' || t_fail "round $round: fsync'd data lost"
import sys, hashlib, os
promised = {}
for line in open(sys.argv[1]):
    path, sha = line.split()
    promised[path] = sha    # a later fsync of the same name wins
bad = [p for p, sha in promised.items()
       if not os.path.exists(p) or hashlib.sha256(open(p, "rb").read()).hexdigest() != sha]
# an fsync'd file may have been overwritten after its fsync (unsynced
# overwrites of random victims): those are allowed to differ
for p in list(bad):
    if os.path.exists(p) and b"unsynced overwrite" in open(p, "rb").read(32):
        bad.remove(p)
if bad:
    print("lost or wrong: %d of %d, e.g. %s" % (len(bad), len(promised), bad[:3]))
    sys.exit(1)
PYEOF
	t_log "round $round: the whole tree reads, and the filesystem is usable"
	find "$M" -type f -exec cat {} + >/dev/null || t_fail "reading the tree after the crash"
	mkdir "$M/after$round" && echo ok >"$M/after$round/f" && rm -r "$M/after$round" \
		|| t_fail "the filesystem is not usable after the crash"
	t_umount "$M"
done
exit 0
