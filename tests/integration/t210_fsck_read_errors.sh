#!/bin/bash
# Pending sectors: blocks of one member that fail to read until they are
# written (faultfs eio-pending, as a disk reallocates a pending sector when
# it is rewritten), at RAID 5, 6 and 10.  fsck -n -f reports the read
# errors on that member and writes nothing; fsck -y -f rewrites each one
# from its reconstruction, which verifies against the block's checksum (as
# md does on a read error), and counts exactly it as repaired on the
# member; the next fsck -n -f then finds nothing, and every file reads back
# intact, also without another member.  (RAID 10 rewrote and counted the
# whole chunk of each bad sector.)  Skips where faultfs has no eio-pending.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

t_faultfs
truncate -s 4096 "$T/back/probe"
echo "probe eio-pending 0 4096" >"$T/ff/.faultctl" 2>/dev/null ||
	t_skip "this faultfs has no eio-pending rule"
echo "probe clear" >"$T/ff/.faultctl"
rm "$T/back/probe"
FF=$T/ff/m0.img:$T/ff/m1.img:$T/ff/m2.img:$T/ff/m3.img
BACK=$T/back/m0.img:$T/back/m1.img:$T/back/m2.img:$T/back/m3.img

# bad_blocks LEVEL: three offsets of file1's blocks on member 1 (at RAID 5
# not the row's parity, which may look like one)
bad_blocks() {
	local p o n=0
	while read -r p o; do
		[ "$1" = 5 ] && [ "$(f_parity_of "$o" "${IMG_LIST[@]}")" = "$p" ] && continue
		echo "$o"
		n=$((n + 1))
		[ $n -lt 3 ] || break
	done < <("$PY" "$TESTS_DIR/fsck_locate.py" data:1 "${IMG_LIST[1]}")
}

check_level() {
	local level=$1 offs o sums
	t_log "RAID $level"
	f_pattern_array "$level" 30 120 8
	mapfile -t offs < <(bad_blocks "$level")
	[ ${#offs[@]} -eq 3 ] || t_fail "file1 has no three blocks on member 1"
	mv "${IMG_LIST[@]}" "$T/back/"
	for o in "${offs[@]}"; do
		echo "m1.img eio-pending $o 4096" >"$T/ff/.faultctl"
	done

	t_log "fsck -n -f: the read errors are reported, nothing is written"
	sums=$(md5sum "$T"/back/*.img)
	f_rc 4 -n -f "$FF"
	# (the member's count also has the failed read of the run they are in)
	grep -q " 3 read errors, .* 0 repaired, .* 0 unrecoverable" "$T/out" &&
		grep -q "slot 1 ([^)]*m1.img): [1-9][0-9]* read errors" "$T/out" ||
		{ cat "$T/out"; t_fail "-n -f did not report 3 read errors on slot 1"; }
	[ "$(md5sum "$T"/back/*.img)" = "$sums" ] || t_fail "fsck -n wrote"

	t_log "fsck -y -f: each block rewritten from its verified reconstruction"
	f_rc 1 -y -f "$FF"
	grep -q " 3 read errors, .* 3 repaired, .* 0 unrecoverable" "$T/out" &&
		grep -q "slot 1 ([^)]*m1.img): [1-9][0-9]* read errors, 0 checksum errors, 0 write errors, 3 blocks repaired" "$T/out" ||
		{ cat "$T/out"; t_fail "-y -f did not repair exactly the 3 blocks on slot 1"; }

	t_log "fsck -n -f: the sectors read again and verify"
	f_rc 0 -n -f "$FF"
	grep -q "[1-9][0-9]* read error" "$T/out" && { cat "$T/out"; t_fail "read errors found again"; }

	echo "m1.img clear" >"$T/ff/.faultctl"
	f_redundant "$BACK" "$T/back/m2.img"
	rm -f "$T"/back/*.img
}

for level in 5 6 10; do
	check_level "$level"
done

# A member that fails the repair writes (its sectors unreadable and
# unwritable): faulted during fsck -y, which leaves the array degraded:
# exit 4, the error record kept (it said "errors corrected", exit 1: a
# tester's find)
t_log "RAID 5, member 1 fails its repair writes: fsck -y exits 4"
f_pattern_array 5 30 120 8
mapfile -t offs < <(bad_blocks 5)
mv "${IMG_LIST[@]}" "$T/back/"
for o in "${offs[@]}"; do
	echo "m1.img eio-read $o 4096" >"$T/ff/.faultctl"
	echo "m1.img eio-write $o 4096" >"$T/ff/.faultctl"
done
f_rc "4 5" -y -f "$FF"
grep -q "the array is degraded at the end of the check" "$T/out" ||
	{ cat "$T/out"; t_fail "fsck -y did not say the array is left degraded"; }
echo "m1.img clear" >"$T/ff/.faultctl"
f_rc 4 -n "$FF"
