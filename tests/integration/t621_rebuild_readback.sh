#!/bin/bash
# A spare that acknowledges writes and keeps none of them (faultfs
# lose-writes over its data region, where the few files of a mostly empty RAID
# 5 land) is added to a failed slot: its rebuild is read back before the
# slot is said in sync - blocks sampled among those it wrote, with their
# checksum table - and the spare is failed there: the array stays
# degraded, RebuildFinished says why, every file reads.  Before, samples
# spread over the whole device found almost nothing written on a mostly
# empty array and the slot was said in sync (a tester's find, U5 D4); a
# spare that dropped only its table writes was not looked at (D5).  A
# healthy spare, and one that drops its table writes alone, on the same
# array, for contrast: in sync, and failed.  A member failed by the
# unmount's own writes is told at its end ("clean but degraded": it said
# "clean", U5 M3).
. "$(dirname "$0")/lib.sh"
t_setup
. "$TESTS_DIR/ctl_lib.sh"
t_faultfs

for i in 0 1 2 3; do truncate -s 48M "$T/back/m$i.img"; done
t_mkfs 5 16K "$T/back/m0.img" "$T/back/m1.img" "$T/back/m2.img" "$T/back/m3.img"
M=$T/mnt
t_mount "$T/ff/m0.img:$T/ff/m1.img:$T/ff/m2.img:$T/ff/m3.img" "$M"
head -c 6M /dev/urandom >"$T/src"
for i in 1 2 3 4; do cp "$T/src" "$M/f$i"; done
sync -f "$M/f1"

# rebuild_onto SPARE RULE: slot 1 failed (unless it is already) and
# removed, SPARE (faultfs, RULE set for it) added; waits for the rebuild's
# end
rebuild_onto() {
	truncate -s 48M "$T/back/$1"
	[ -z "$2" ] || echo "$1 $2" >"$T/ff/.faultctl"
	if [ "$(state)" = clean ]; then
		"$CTL" fail "$M" 1 >/dev/null || t_fail "fail 1"
	fi
	"$CTL" remove "$M" 1 >/dev/null || t_fail "remove 1"
	"$CTL" add "$M" "$T/ff/$1" >/dev/null || t_fail "add $1: $(cat "$T/out" 2>/dev/null)"
	for _ in $(seq 600); do
		"$CTL" events "$M" | grep -q "RebuildFinished slot=1 device=$T/ff/$1" && break
		sleep 0.1
	done
	"$CTL" events "$M" >"$T/events"
	grep "RebuildFinished slot=1 device=$T/ff/$1" "$T/events" >"$T/finished" ||
		t_fail "no RebuildFinished for $1: $(cat "$T/events")"
	for i in 1 2 3 4; do cmp -s "$T/src" "$M/f$i" || t_fail "f$i differs"; done
}

t_log "a spare that keeps no write to its data region: failed at the read-back"
rebuild_onto s1.img "lose-writes 2M 44M"
grep -q "reached the end, but .* blocks sampled do not read back" "$T/finished" ||
	t_fail "RebuildFinished: $(cat "$T/finished")"
[ "$(state)" = degraded ] || t_fail "state $(state), not degraded"

t_log "a healthy spare: in sync"
rebuild_onto s2.img ""
grep -q "the slot is in sync" "$T/finished" || t_fail "RebuildFinished: $(cat "$T/finished")"
wait_state clean

t_log "a spare that keeps no write of its checksum table: failed"
# the table region, as m0's superblock places it (FORMAT.md: csum_offset
# at byte 128, csum_blocks at 136), the same on every member
read -r off len < <("$PY" -c 'import struct, sys
b = open(sys.argv[1], "rb").read(4096)
print(struct.unpack_from("<Q", b, 128)[0] * 4096, struct.unpack_from("<Q", b, 136)[0] * 4096)' "$T/back/m0.img")
rebuild_onto s3.img "lose-writes $off $len"
grep -q "reached the end, but .* blocks sampled do not read back" "$T/finished" ||
	t_fail "RebuildFinished: $(cat "$T/finished")"
[ "$(state)" = degraded ] || t_fail "state $(state), not degraded"
t_umount "$M"

t_log "a member whose writes fail during the unmount: said degraded at the end"
for i in 0 1 2 3; do truncate -s 16M "$T/back/u$i.img"; done
t_mkfs 5 16K "$T/back/u0.img" "$T/back/u1.img" "$T/back/u2.img" "$T/back/u3.img"
t_mount "$T/ff/u0.img:$T/ff/u1.img:$T/ff/u2.img:$T/ff/u3.img" "$M"
cp "$T/src" "$M/g"
echo "u2.img eio-write 0 1G" >"$T/ff/.faultctl"
: >"$T/daemon.log"
t_umount "$M"
grep -q "unmounted, array clean but degraded" "$T/daemon.log" ||
	{ cat "$T/daemon.log"; t_fail "the unmount did not say degraded"; }
t_log "ok"
