#!/bin/bash
# ENOSPC with many writers, and with space taken by metadata: no byte a
# write(2) accepted is lost.  (1) Twelve processes, their files opened for
# writing while there was room, write 1 MiB calls at once into the last
# 14 MiB: every byte each was told was written is there after a remount,
# and neither fsync nor close reports an error (the space check allowed
# for one call in flight per handle, not twelve: up to 3 MB of accepted
# data came back as zeros or a shorter file).  (2) Extended attributes
# take the space down to the last MiB, then dd writes: it fails in
# write(2) and all it was told it wrote is stored (the near-full state was
# judged only after writes: dd's write(2)s were accepted into the cache
# unchecked and 768 of 800 blocks read back as zeros).  fsck is clean.
. "$(dirname "$0")/lib.sh"
t_setup
FSCK=$RAIDFS_BIN/fsck.raidfs

t_images 4 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"

leave() {   # leave MIB: fills the filesystem up to MIB MiB free
	local avail
	avail=$(stat -f -c %a "$T/mnt")
	dd if=/dev/zero of="$T/mnt/fill$1" bs=1M count=$((avail / 256 - $1)) \
		status=none conv=fsync || t_fail "filling"
}

t_log "twelve writers into the last 14 MiB"
leave 14
"$PY" - "$T/mnt" 12 "$T/res" <<'PYEOF' || t_fail "writers"
import json, os, sys
from multiprocessing import Barrier, Process
mnt, n, res = sys.argv[1], int(sys.argv[2]), sys.argv[3]
bar = Barrier(n)
def worker(i):
    fd = os.open("%s/w%d" % (mnt, i), os.O_WRONLY | os.O_CREAT, 0o644)
    ch = bytes([65 + i])
    done = os.write(fd, ch * 4096)
    bar.wait()
    fails, errs = 0, []
    while fails < 3:
        try:
            done += os.write(fd, ch * (1 << 20))
        except OSError as e:
            fails += 1
            if e.errno != 28:
                errs.append("write: " + str(e))
    for what, f in (("fsync", os.fsync), ("close", os.close)):
        try:
            f(fd)
        except OSError as e:
            errs.append(what + ": " + str(e))
    json.dump({"n": done, "errs": errs}, open("%s.%d" % (res, i), "w"))
ps = [Process(target=worker, args=(i,)) for i in range(n)]
[p.start() for p in ps]
[p.join() for p in ps]
PYEOF

check_writers() {
	"$PY" - "$T/mnt" 12 "$T/res" <<'PYEOF'
import json, sys
mnt, n, res = sys.argv[1], int(sys.argv[2]), sys.argv[3]
bad, total = 0, 0
for i in range(n):
    r = json.load(open("%s.%d" % (res, i)))
    d = open("%s/w%d" % (mnt, i), "rb").read()
    good = d.count(bytes([65 + i]))
    total += r["n"]
    if r["errs"] or len(d) != r["n"] or good != r["n"]:
        bad += 1
        print("w%d: accepted %d, size %d, %d bytes right, %s" %
              (i, r["n"], len(d), good, r["errs"]))
print("%d writers, %d bytes accepted, %d wrong" % (n, total, bad))
sys.exit(1 if bad else 0)
PYEOF
}
check_writers | sed 's/^/    /' || t_fail "a writer's accepted bytes are not all there"
t_umount "$T/mnt"
t_mount "$IMGS" "$T/mnt"
check_writers | sed 's/^/    /' || t_fail "after remount, a writer's accepted bytes are lost"
rm -f "$T/mnt"/w* "$T/mnt"/fill*

t_log "extended attributes take the space, then dd writes"
leave 13
touch "$T/mnt/x"
val=$(head -c 60000 /dev/zero | tr '\0' z)
i=0
while [ "$(stat -f -c %a "$T/mnt")" -gt 256 ]; do
	setfattr -n "user.k$i" -v "$val" "$T/mnt/x" 2>/dev/null || break
	i=$((i + 1))
done
t_log "$i attributes; $(( $(stat -f -c %a "$T/mnt") * 4 )) KiB left"
head -c 8M /dev/urandom >"$T/victim.ref"
rc=0; dd if="$T/victim.ref" of="$T/mnt/victim" bs=64k 2>"$T/dd.err" || rc=$?
[ $rc -ne 0 ] && grep -q "No space left on device" "$T/dd.err" ||
	{ cat "$T/dd.err"; t_fail "dd did not fail with ENOSPC"; }
grep -q "closing output file" "$T/dd.err" && { cat "$T/dd.err"; t_fail "close failed: accepted bytes lost"; }
written=$(sed -n 's/^\([0-9]*\) bytes.*copied.*/\1/p' "$T/dd.err")
sync "$T/mnt/victim" || t_fail "fsync after ENOSPC reports an error"
t_umount "$T/mnt"
t_mount "$IMGS" "$T/mnt"
[ "$(stat -c %s "$T/mnt/victim")" = "$written" ] ||
	t_fail "victim: $(stat -c %s "$T/mnt/victim") bytes, dd wrote $written"
cmp -n "$written" "$T/mnt/victim" "$T/victim.ref" || t_fail "victim does not read back as written"
t_log "victim: $written bytes, all there"
t_umount "$T/mnt"

rc=0; "$FSCK" -n -f "$IMGS" >"$T/fsck.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/fsck.out"; t_fail "fsck -n -f: exit $rc"; }
exit 0
