#!/bin/bash
# A power cut under the whole stack: the members are files of faultfs with
# a disk's volatile write cache (tests/tools/faultfs.c "volatile"), so what
# raidfs wrote since a member's last flush is lost at the cut - each such
# 4 KiB block kept or not, as a cache writes in any order - where a kill -9
# loses nothing the daemon had handed to the kernel.  The daemon is killed
# after the cut; the array is then mounted from the images themselves,
# every other round with one member left out (a crash and the loss of a
# member, which the journal must cover), and every file whose fsync, and
# its directory's, returned must be there whole, every file written before
# the workload intact, and fsck -n -f clean.  Crash tests below the daemon
# (test_crash, test_fs_crash) cut raidcore's or fs's own writes; this one
# cuts what FUSE, fs and raidcore wrote together.
. "$(dirname "$0")/lib.sh"
t_setup
t_faultfs

N=4
ROUNDS=${RAIDFS_POWERCUT_ROUNDS:-4}
for i in $(seq 0 $((N - 1))); do truncate -s 96M "$T/back/m$i.img"; done
BACK=$T/back/m0.img:$T/back/m1.img:$T/back/m2.img:$T/back/m3.img
FF=$T/ff/m0.img:$T/ff/m1.img:$T/ff/m2.img:$T/ff/m3.img
t_mkfs 5 64K "$T/back/m0.img" "$T/back/m1.img" "$T/back/m2.img" "$T/back/m3.img"
M=$T/mnt

# Files written, fsync'd and renamed into place; a line in ACKED once the
# file's and its directory's fsync returned.  Every file says what it is
# (round, number, size) and is filled by a pattern of its number.
cat >"$T/work.py" <<'PY'
import os, sys
mnt, acked, rnd = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = os.path.join(mnt, "w")
os.makedirs(d, exist_ok=True)
log = open(acked, "a", buffering=1)
dfd = os.open(d, os.O_RDONLY)
k = 0
while True:
    k += 1
    size = (k * 7919 % 48 + 1) * 4096 - (k % 3) * 1000
    body = (b"%d:%d:%d:" % (rnd, k, size)).ljust(64, b".")
    body += bytes([k % 251]) * (size - 64)
    name = "f%d" % (k % 40)
    if k % 17 == 0:       # now and then a larger file: full stripes
        size = 2 << 20
        body = (b"%d:%d:%d:" % (rnd, k, size)).ljust(64, b".") + \
               bytes([k % 251]) * (size - 64)
    tmp = os.path.join(d, ".tmp.%s" % name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, body)
    os.fsync(fd)
    os.close(fd)
    os.rename(tmp, os.path.join(d, name))
    os.fsync(dfd)
    log.write("%s %d %d %d\n" % (name, rnd, k, size))
PY

# Each name holds the last version acknowledged, or a later one (its rename
# was under way at the cut), whole.
cat >"$T/check.py" <<'PY'
import os, sys
mnt, acked = sys.argv[1], sys.argv[2]
last = {}
for line in open(acked):
    p = line.split()
    if len(p) == 4:
        last[p[0]] = (int(p[1]), int(p[2]))
bad = 0
for name, (rnd, k) in sorted(last.items()):
    try:
        data = open(os.path.join(mnt, "w", name), "rb").read()
    except OSError as e:
        print("%s: %s (acknowledged round %d file %d)" % (name, e, rnd, k))
        bad += 1
        continue
    hdr = data[:64].split(b":")
    try:
        r, n, size = int(hdr[0]), int(hdr[1]), int(hdr[2])
    except (ValueError, IndexError):
        print("%s: no header: %r" % (name, data[:64]))
        bad += 1
        continue
    whole = len(data) == size and data[64:] == bytes([n % 251]) * (size - 64)
    if (r, n) < (rnd, k) or not whole:
        print("%s: round %d file %d (%s), acknowledged round %d file %d"
              % (name, r, n, "whole" if whole else "NOT whole", rnd, k))
        bad += 1
print("%d names checked, %d bad" % (len(last), bad))
sys.exit(1 if bad else 0)
PY

t_mount "$FF" "$M"
head -c 3M /dev/urandom >"$T/old"
for i in 1 2 3; do cp "$T/old" "$M/old$i"; done
t_umount "$M"
: >"$T/acked"

for round in $(seq 1 "$ROUNDS"); do
	for i in $(seq 0 $((N - 1))); do
		echo "m$i.img clear" >"$T/ff/.faultctl"
		echo "m$i.img volatile" >"$T/ff/.faultctl"
	done
	t_mount "$FF" "$M"
	"$PY" "$T/work.py" "$M" "$T/acked" "$round" 2>/dev/null &
	wpid=$!
	sleep "$(( (round % 3) + 1 )).$((round * 3 % 10))"
	keep=$(( (round * 37) % 101 ))
	t_log "round $round: power cut, $keep % of each member's unflushed blocks kept"
	echo "* powercut $keep $round" >"$T/ff/.faultctl"
	t_crash_daemon "$M" "$wpid"
	grep 'power cut' "$T/faultfs.log" | tail -1 | sed 's/^/  /'
	n=$(wc -l <"$T/acked")
	[ "$n" -gt 0 ] || t_fail "round $round: nothing was acknowledged"

	src=$BACK
	if [ $((round % 2)) -eq 0 ]; then
		gone=$((round / 2 % N))
		src=${BACK/m$gone.img/gone$gone.img}
		t_log "round $round: member $gone left out as well"
	fi
	t_mount "$src" "$M"
	"$PY" "$T/check.py" "$M" "$T/acked" || t_fail "round $round: fsync'd files lost ($n acknowledged in all)"
	for i in 1 2 3; do
		cmp -s "$T/old" "$M/old$i" || t_fail "round $round: old$i changed"
	done
	t_umount "$M"
	# degraded, fsck exits 4 (the missing member is an error it leaves);
	# nothing else may be wrong
	rc=0
	"$RAIDFS_BIN/fsck.raidfs" -n -f "$src" >"$T/fsck.out" 2>&1 || rc=$?
	if [ "$src" = "$BACK" ]; then
		[ $rc -eq 0 ] || { cat "$T/fsck.out"; t_fail "round $round: fsck -n -f exited $rc"; }
	else
		[ $rc -eq 4 ] && grep -q ' 0 checksum errors, 0 read errors, 0 blocks without a valid checksum entry, 0 parity mismatches' "$T/fsck.out" &&
			grep -q ' 0 problems$' "$T/fsck.out" && grep -q 'no data lost' "$T/fsck.out" ||
			{ cat "$T/fsck.out"; t_fail "round $round: fsck -n -f, degraded, exited $rc"; }
	fi
	if [ "$src" != "$BACK" ]; then
		# the member comes back: a full fsck -y --rebuild would take
		# long; the next mount takes it back through the write-intent
		# record, and a scrub would find what it missed
		"$RAIDFS_BIN/fsck.raidfs" -y -f "$BACK" >"$T/fsck.out" 2>&1 ||
			[ $? -le 1 ] || { cat "$T/fsck.out"; t_fail "round $round: fsck -y with the member back"; }
	fi
done
t_log "$(wc -l <"$T/acked") files acknowledged over $ROUNDS power cuts, every one found"
