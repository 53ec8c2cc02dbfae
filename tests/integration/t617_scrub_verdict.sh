#!/bin/bash
# A scrub that leaves stripes without working redundancy is not a clean
# scrub: a RAID 1 member whose data region and table are put back from
# an older copy (a lost write that kept its own checksums: both copies
# verify, and disagree) gives parity mismatches the scrub cannot repair.
# `raidfsctl scrub start --wait` exits 1 (the monthly timer's service
# fails, as for lost data), and status's last-scrub line counts them.
# Damage a scrub repairs for good leaves the member in; a member that
# goes on lying is faulted, and --wait says so.
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

# 1 MiB of a member's written blocks zeroed on its media: the scrub
# rewrites them, they read back as written, and the member stays (its
# errors were corrected: before, each block counted towards its fault,
# and the scrub that repaired them all left the array degraded).
t_log "1 MiB zeroed on a member's media: repaired, the member stays, --wait exits 0"
# zero_used IMAGE: zeroes 1 MiB of its written blocks; prints each run
# of them as "OFFSET LENGTH" in bytes
zero_used() {
	"$PY" - "$1" "$TESTS_DIR" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import rcformat
m = rcformat.Member.read(sys.argv[1])
used = sorted(m.used_blocks())
assert len(used) >= 256, len(used)
runs = []
with open(sys.argv[1], "r+b") as f:
    for b in used[:256]:
        f.seek(b * 4096)
        f.write(bytes(4096))
        if runs and runs[-1][0] + runs[-1][1] == b:
            runs[-1][1] += 1
        else:
            runs.append([b, 1])
for b, n in runs:
    print(b * 4096, n * 4096)
PY
}
t_images 3 64M r
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$M"
head -c 8M /dev/urandom >"$M/g"
sync -f "$M/g"
cp "$M/g" "$T/g.ref"
t_umount "$M"
zero_used "$T/r1.img" >/dev/null
t_mount "$IMGS" "$M"
expect_rc 0 "$CTL" scrub start --wait "$M"
[ "$(state)" = clean ] || t_fail "not clean after the repairs: $(state)"
cmp -s "$T/g.ref" "$M/g" || t_fail "g differs"
t_umount "$M"

# A member that goes on returning zeros over 1 MiB of its written blocks
# (faultfs zero-read: the media keeps what is written, reads do not show
# it): its repairs never read back.  zero_liar LEVEL N [RULE [OPTIONS]]:
# an array of N such images with z1 lying (RULE over the runs, default
# zero-read), mounted on $M (with OPTIONS), g written (g.ref).
t_faultfs
zero_liar() {
	local level=$1 n=$2 rule=${3:-zero-read} i src=
	for i in $(seq 0 $((n - 1))); do
		rm -f "$T/back/z$i.img"
		truncate -s 64M "$T/back/z$i.img"
		src=$src${src:+:}$T/ff/z$i.img
	done
	echo "z1.img clear" >"$T/ff/.faultctl"
	t_mkfs "$level" 64K $(for i in $(seq 0 $((n - 1))); do echo "$T/back/z$i.img"; done)
	ZSRC=$src
	t_mount "$ZSRC" "$M"
	head -c 8M /dev/urandom >"$M/g"
	sync -f "$M/g"
	cp "$M/g" "$T/g.ref"
	t_umount "$M"
	cp "$T/back/z1.img" "$T/z1.copy"
	zero_used "$T/z1.copy" | while read -r off len; do
		echo "z1.img $rule $off $len"
	done >"$T/rules"
	rm -f "$T/z1.copy"
	while read -r r; do echo "$r" >"$T/ff/.faultctl"; done <"$T/rules"
	t_mount "$ZSRC" "$M" ${4:+-o "$4"}
}

# RAID 6 of 4: the liar is faulted (at its first repair that does not
# read back: the mount's own reads may meet it first), every block is
# repaired, the array is degraded, not whole, and --wait exits 1 (it
# exited 0)
t_log "a member faulted during the scrub: --wait exits 1"
zero_liar 6 4
expect_rc 1 "$CTL" scrub start --wait "$M"
grep -q "a member was faulted while the scrub ran\|is degraded: not whole" "$T/out" \
	|| t_fail "scrub --wait: $(cat "$T/out")"
[ "$(state)" = degraded ] || t_fail "not degraded: $(state)"
cmp -s "$T/g.ref" "$M/g" || t_fail "g differs (degraded)"
t_umount "$M"

# RAID 5 of 3 with the zero-read liar: a repaired block that reads back
# other than written is a member that does not keep what is written (a
# member that drops its writes, tables included, would be read after a
# remount, its old blocks verifying against its old tables): faulted at
# once, though the array has no redundancy left without it
t_log "a member that reads back other than written: faulted at RAID 5 too"
zero_liar 5 3
expect_rc 1 "$CTL" scrub start --wait "$M"
[ "$(state)" = degraded ] || t_fail "not faulted: $(state)"
cmp -s "$T/g.ref" "$M/g" || t_fail "g differs (RAID 5 liar)"
t_umount "$M"

# RAID 5 of 3, its z1 unreadable over 1 MiB even after the rewrite (a
# bad range the disk cannot remap): without it the array would have no
# redundancy left, and read errors show again after any remount, so it
# stays (its other blocks are the redundancy of every other row); the
# stripes where its repairs do not hold are not whole: --wait exits 1
t_log "unreadable after its rewrite: kept, --wait exits 1, the member stays"
zero_liar 5 3 eio-read
expect_rc 1 "$CTL" scrub start --wait "$M"
[ "$(state)" = clean ] || t_fail "not kept: $(state)"
grep -q "kept, as without it" "$T/daemon.log" || t_fail "no 'kept' line in the log"
"$CTL" scrub status "$M" | grep -q "[1-9][0-9]* parity mismatches" \
	|| t_fail "scrub: $("$CTL" scrub status "$M")"
# its rewrites did not hold: none of them counts as repaired
"$CTL" scrub status "$M" | grep -q " 0 repaired" \
	|| t_fail "rewrites that did not hold counted as repaired: $("$CTL" scrub status "$M")"
cmp -s "$T/g.ref" "$M/g" || t_fail "g differs (kept member)"
t_umount "$M"

# the same mounted read-only: the scrub repairs nothing, and the errors it
# found leave those stripes with less redundancy: --wait exits 1 (it
# exited 0, "0 repaired")
t_log "read-only: errors found and not repaired, --wait exits 1"
zero_liar 5 3 eio-read ro
expect_rc 1 "$CTL" scrub start --wait "$M"
cmp -s "$T/g.ref" "$M/g" || t_fail "g differs (read-only)"
t_umount "$M"

# A member faulted while the scrub ran, and a spare rebuilt into its slot
# before the scrub ended: the array is whole again, but the scrub lost a
# member on its way: --wait exits 1 (it exited 0, the array clean at its
# start and at its end).  The scrub is paced slow, stopped once the member
# is faulted, and resumed when the spare is in.
t_log "a member faulted during the scrub, a spare in its place: exits 1"
for i in 0 1 2 3 4; do rm -f "$T/s$i.img"; truncate -s 64M "$T/s$i.img"; done
t_mkfs 5 64K "$T/s0.img" "$T/s1.img" "$T/s2.img" "$T/s3.img"
t_mount "$T/s0.img:$T/s1.img:$T/s2.img:$T/s3.img" "$M"
head -c 16M /dev/urandom >"$M/h"
sync -f "$M/h"
expect_rc 0 "$CTL" add "$M" "$T/s4.img"
expect_rc 0 "$CTL" set "$M" rebuild-speed-max=1M
expect_rc 0 "$CTL" scrub start "$M"
sleep 0.3
expect_rc 0 "$CTL" fail "$M" 1
sleep 0.3
expect_rc 0 "$CTL" scrub stop "$M"
expect_rc 0 "$CTL" set "$M" rebuild-speed-max=0
wait_state clean
expect_rc 1 "$CTL" scrub start --wait "$M"
grep -q "1 member(s) faulted while the scrub ran" "$T/out" ||
	t_fail "scrub --wait: $(cat "$T/out")"
"$CTL" status --json "$M" | "$PY" -c 'import json, sys
sc = json.load(sys.stdin)["arrays"][0]["scrub"]
assert sc["members_faulted"] == 1, sc' || t_fail "status: members_faulted"
expect_rc 0 "$CTL" scrub start --wait "$M"
t_umount "$M"
exit 0
