#!/bin/bash
# kill -9 after fsync'd writes that free journaled blocks and reuse them
# for new file data: a partial-stripe overwrite (journaled), a truncate
# that frees those blocks, a new file whose data lands there (a direct
# stripe), all fsync'd, then kill -9 before any checkpoint.  After the
# next mount every file reads back exactly and fsck -n finds nothing
# (replay put the older journaled copies over the new data, which then
# failed their checksums: I/O errors on both RAID 10 copies), at RAID 10
# of 4, RAID 5 of 3 and RAID 0 of 2.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

M=$T/mnt
for cfg in 10:4 5:3 0:2; do
	IFS=: read -r level n <<<"$cfg"
	t_log "RAID $level of $n: overwrite, truncate, reuse, fsync, kill -9"
	rm -f "$T"/*.img
	t_images "$n" 100M
	t_mkfs "$level" 64K "${IMG_LIST[@]}"
	t_mount "$IMGS" "$M"
	pid=${T_PID_OF[$M]}
	"$PY" - "$M" <<'PYEOF' || t_fail "RAID $level: the workload failed"
import os, sys
m = sys.argv[1]
for i in range(8):
    f = os.open(m + "/F%d" % i, os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(f, b"f" * 70000); os.fsync(f)
    os.pwrite(f, b"OLD!" * 75000, 898210); os.fsync(f)
    os.ftruncate(f, 500000); os.fsync(f); os.close(f)
    g = os.open(m + "/G%d" % i, os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(g, b"NEW!" * 50000); os.fsync(g); os.close(g)
d = os.open(m, os.O_RDONLY); os.fsync(d); os.close(d)
PYEOF
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	RAIDFS_UMOUNT_WAIT=10 t_umount_idle "$M" 2>/dev/null || umount -l "$M"
	rc=0; "$FSCK" -n "$IMGS" >"$T/out" 2>&1 || rc=$?
	[ $rc -eq 0 ] || { cat "$T/out"; t_fail "RAID $level: fsck -n exit $rc after the crash, want 0"; }
	t_mount "$IMGS" "$M"
	"$PY" - "$M" <<'PYEOF' || t_fail "RAID $level: fsync'd data lost or wrong"
import os, sys
m, bad = sys.argv[1], []
for i in range(8):
    want = b"f" * 70000 + b"\0" * (500000 - 70000)
    try:
        if open(m + "/F%d" % i, "rb").read() != want:
            bad.append("F%d wrong" % i)
    except OSError as e:
        bad.append("F%d: %s" % (i, e))
    try:
        if open(m + "/G%d" % i, "rb").read() != b"NEW!" * 50000:
            bad.append("G%d wrong" % i)
    except OSError as e:
        bad.append("G%d: %s" % (i, e))
if bad:
    print(bad)
    sys.exit(1)
PYEOF
	t_umount "$M"
done
exit 0
