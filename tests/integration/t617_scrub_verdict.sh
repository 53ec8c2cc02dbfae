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
exit 0
