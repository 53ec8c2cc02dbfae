#!/bin/bash
# Damage to any one member, over any of its regions, is repaired in place
# and fsck converges.  For each case, on one member (a different one each
# time): fsck -n -f leaves every image bit-for-bit unchanged; fsck -y -f
# exits 0 or 1; a second fsck -n -f exits 0; every file reads back intact.
# Cases: random bytes and zeros over superblock copies at either end, the
# first MiB, the journal, the checksum table, the data region, the second
# half of the member, the whole member (random: no copy left, and data
# that may be someone's - a mistyped path looks the same - so -y exits 4
# naming it and --rebuild is the way; zeros: rebuilt onto, as it holds
# nothing); then a truncated image (left out and never written,
# exit 4 every time, files intact) that, extended again, is rebuilt in
# place; a damaged table found without -f (the fast path must not say
# clean: fsck -p repairs it).  RAID 5 takes every case; RAID 6, 10 and 1 a few (the fault
# matrix, t400, covers every level and region while mounted too).  At the end of
# each level another member is removed: every file reads through the
# repaired ones.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup
DAMAGE="$PY $TESTS_DIR/member_damage.py"

intact() {
	t_mount "$IMGS" "$T/mnt" -o ro
	t_tree_sum "$T/mnt" >"$T/tree.after"
	t_umount "$T/mnt"
	diff "$T/tree.before" "$T/tree.after" >/dev/null || t_fail "$CASE: files differ ($1)"
}

# converge [MEMBER]: -n unchanged, -y 0/1 (MEMBER: holding random data
# and no superblock, it is not taken without --rebuild: exit 4, then
# --rebuild MEMBER 1), -n -f 0, files intact
converge() {
	sha256sum "${IMG_LIST[@]}" >"$T/sums"
	f_rc "0 4" -n -f "$IMGS"
	sha256sum -c --quiet "$T/sums" || t_fail "$CASE: fsck -n changed an image"
	if [ -n "${1:-}" ]; then
		f_rc 4 -y -f "$IMGS"
		grep -q "$1 holds data (no raidfs member, no signature known): not used without --rebuild" "$T/out" ||
			{ cat "$T/out"; t_fail "$CASE: not refused by name"; }
		sha256sum -c --quiet "$T/sums" || t_fail "$CASE: fsck -y changed an image"
		f_rc 1 -y -f --rebuild "$1" "$IMGS"
	else
		f_rc "0 1" -y -f "$IMGS"
	fi
	f_rc 0 -n -f "$IMGS"
	intact "after fsck -y"
}

level_setup() {
	t_images 4 32M
	t_mkfs "$1" 64K "${IMG_LIST[@]}"
	t_mount "$IMGS" "$T/mnt"
	mkdir "$T/mnt/d"
	for i in 1 2 3 4 5 6; do head -c $((i * 500000)) /dev/urandom >"$T/mnt/d/f$i"; done
	seq 1 20000 >"$T/mnt/small"
	t_tree_sum "$T/mnt" >"$T/tree.before"
	t_umount "$T/mnt"
}

# cases LEVEL KIND:REGION...: each on the next member
cases() {
	local level=$1 k=0 c m
	shift
	level_setup "$level"
	for c in "$@"; do
		m=$((k % 4)); k=$((k + 1))
		CASE="RAID $level, member $m: $($DAMAGE "${c%%:*}" "${c#*:}" "${IMG_LIST[$m]}" "$k")"
		t_log "$CASE"
		if [ "$c" = random:whole ]; then converge "${IMG_LIST[$m]}"; else converge; fi
	done
}

# without MEMBER: clean, and every file reads with MEMBER gone
without() { f_redundant "$IMGS" "${IMG_LIST[$1]}"; }

cases 5 random:sb-start zero:sb-end zero:first-mib random:journal \
	zero:tables zero:data-all random:tail-half random:whole
without 1

# Without -f: the clean flags say nothing of a table damaged since, but
# opening the array meets it; the fast path must not report "clean".
CASE="RAID 5, member 1, no -f: $($DAMAGE zero tables "${IMG_LIST[1]}" 9)"
t_log "$CASE"
f_rc 4 -n "$IMGS"
grep -q "damage found while opening the array: a full check follows" "$T/out" ||
	{ cat "$T/out"; t_fail "$CASE: fsck -n took the fast path"; }
f_rc 1 -p "$IMGS"
grep -q "entries re-derived" "$T/out" || { cat "$T/out"; t_fail "$CASE: fsck -p did not re-derive"; }
f_rc 0 -n -f "$IMGS"
intact "after fsck -p"

CASE="RAID 5, member 2 truncated to 16 MiB"
t_log "$CASE"
truncate -s 16M "${IMG_LIST[2]}"
sha256sum "${IMG_LIST[2]}" >"$T/sums"
f_rc 4 -n -f "$IMGS"
grep -q "smaller than the .* its own layout needs.*left out" "$T/out" || { cat "$T/out"; t_fail "$CASE: not reported"; }
f_rc 4 -y -f "$IMGS"
f_rc 4 -n -f "$IMGS"
sha256sum -c --quiet "$T/sums" || t_fail "$CASE: the truncated image was written"
intact "degraded"
CASE="RAID 5, member 2 extended to 32 MiB again"
t_log "$CASE"
truncate -s 32M "${IMG_LIST[2]}"
f_rc 1 -y -f "$IMGS"
grep -q "rebuilding slot 2 onto ${IMG_LIST[2]}" "$T/out" || { cat "$T/out"; t_fail "$CASE: not rebuilt in place"; }
without 3

# After a crash, one member's journal ring garbled: the assembly rebuilds
# its columns of the replayed rows from the others, in memory.  fsck -n
# and -y both exited 0, "clean" (a tester's find): -n must say the damage
# is left (4), -y that it corrected it (1); then clean, files intact.
CASE="RAID 5, member 2's journal ring garbled after a crash"
t_log "$CASE"
t_mount "$IMGS" "$T/mnt"
for i in 1 2 3 4; do head -c 300000 /dev/urandom >"$T/mnt/d/crash$i"; done
"$PY" -c 'import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY); os.fsync(fd); os.close(fd)' "$T/mnt/d"/crash* "$T/mnt/d"
t_tree_sum "$T/mnt" >"$T/tree.before"
pid=${T_PID_OF[$T/mnt]}
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
RAIDFS_UMOUNT_WAIT=10 t_umount_idle "$T/mnt" 2>/dev/null || umount -l "$T/mnt"
$DAMAGE random journal "${IMG_LIST[2]}" 77 >/dev/null
sha256sum "${IMG_LIST[@]}" >"$T/sums"
f_rc 4 -n "$IMGS"
grep -q "journal records missing or damaged" "$T/out" || { cat "$T/out"; t_fail "$CASE: not told"; }
sha256sum -c --quiet "$T/sums" || t_fail "$CASE: fsck -n changed an image"
f_rc 1 -y "$IMGS"
f_rc 0 -n -f "$IMGS"
intact "after fsck -y"

cases 6 zero:first-mib random:tables
without 0
cases 10 random:sb-start random:tail-half
without 2
cases 1 random:tables
without 3
