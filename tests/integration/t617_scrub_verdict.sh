#!/bin/bash
# A scrub that leaves stripes without working redundancy is not a clean
# scrub: a RAID 1 member whose data region and table are put back from
# an older copy (a lost write that kept its own checksums: both copies
# verify, and disagree) gives parity mismatches the scrub cannot repair.
# `raidfsctl scrub start --wait` exits 1 (the monthly timer's service
# fails, as for lost data), and status's last-scrub line counts them.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/ctl_lib.sh"
t_setup

t_images 2 64M
t_mkfs 1 64K "${IMG_LIST[@]}"
M=$T/mnt
t_mount "$IMGS" "$M"
head -c 1M /dev/urandom >"$T/v1"
dd if="$T/v1" of="$M/f" bs=1M conv=fsync status=none
t_umount "$M"
cp "${IMG_LIST[1]}" "$T/snap.img"
t_mount "$IMGS" "$M"
head -c 1M /dev/urandom | dd of="$M/f" bs=1M conv=notrunc,fsync status=none
t_umount "$M"
# m1's journal, table and data as they were (its superblocks as now)
"$PY" - "${IMG_LIST[1]}" "$T/snap.img" <<'PY'
import os, sys
dst, src = sys.argv[1], sys.argv[2]
size = os.path.getsize(dst)
with open(dst, "r+b") as d, open(src, "rb") as s:
    s.seek(8 * 4096); d.seek(8 * 4096)
    d.write(s.read(size - 10 * 4096))
PY

t_mount "$IMGS" "$M"
expect_rc 1 "$CTL" scrub start --wait "$M"
"$CTL" status "$M" >"$T/status"
grep -q "last scrub: finished .* [1-9][0-9]* parity mismatches" "$T/status" ||
	{ cat "$T/status"; t_fail "the last scrub's mismatches not shown"; }
t_umount "$M"

# Every block repaired, but a member faulted while the scrub ran (too many
# checksum errors: 1 MiB of zeros on it): the array is degraded, not
# whole, and --wait exits 1 (it exited 0)
t_log "a member faulted during the scrub: --wait exits 1"
t_images 3 64M r
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$M"
head -c 8M /dev/urandom >"$M/g"
sync -f "$M/g"
t_umount "$M"
"$PY" - "$T/r1.img" "$TESTS_DIR" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import rcformat
m = rcformat.Member.read(sys.argv[1])
used = m.used_blocks()
assert len(used) >= 256, len(used)
with open(sys.argv[1], "r+b") as f:
    for b in used[:256]:                 # 1 MiB of written blocks: zeros
        f.seek(b * 4096)
        f.write(bytes(4096))
PY
t_mount "$IMGS" "$M"
expect_rc 1 "$CTL" scrub start --wait "$M"
grep -q "a member was faulted while the scrub ran" "$T/out" || t_fail "scrub --wait: $(cat "$T/out")"
[ "$(state)" = degraded ] || t_fail "not degraded: $(state)"
t_umount "$M"
exit 0
