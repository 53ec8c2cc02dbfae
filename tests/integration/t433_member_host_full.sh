#!/bin/bash
# A member whose own filesystem fills is faulted with the reason named: a
# RAID 5 of 4 whose member 0 is a sparse image on a small tmpfs.  A write
# larger than that tmpfs has room for goes through (degraded), and the
# log and the Fail event say "No space left on device" and what to do, not
# just "write failed" - an administrator would otherwise replace a good
# disk (a tester's report).
. "$(dirname "$0")/lib.sh"
t_setup

H=$T/host
mkdir -p "$H"
mount -t tmpfs -o size=24M tmpfs "$H" || t_skip "cannot mount a tmpfs"
T_MOUNTS+=("$H")
truncate -s 48M "$H/m0.img"
truncate -s 48M "$T/m1.img" "$T/m2.img" "$T/m3.img"
t_mkfs 5 64K "$H/m0.img" "$T/m1.img" "$T/m2.img" "$T/m3.img"
M=$T/mnt
t_mount "$H/m0.img:$T/m1.img:$T/m2.img:$T/m3.img" "$M"

t_log "96 MiB written: member 0's tmpfs fills"
head -c 96M /dev/urandom >"$T/ref"
dd if="$T/ref" of="$M/f" bs=1M conv=fsync 2>"$T/dd.err" \
	|| t_fail "the write failed: $(cat "$T/dd.err")"
grep "member 0 .* is faulty: .*No space left on device (a file on a full filesystem?" \
	"$T/daemon.log" >/dev/null || t_fail "no reason: $(grep -i faulty "$T/daemon.log")"
"$RAIDFS_BIN/raidfsctl" events "$M" >"$T/events" || t_fail "events"
grep -q "^.*Fail slot=0.*No space left on device" "$T/events" \
	|| t_fail "events: $(cat "$T/events")"
cmp -s "$T/ref" "$M/f" || t_fail "the file differs"
t_umount "$M"
umount "$H" || t_fail "umount $H"
t_log "ok"
