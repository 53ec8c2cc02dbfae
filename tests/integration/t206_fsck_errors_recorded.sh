#!/bin/bash
# Errors seen while the array was in use are recorded on the members (the
# ERRORS flag), and fsck's clean fast path is then not taken, as e2fsck
# does for a filesystem in its error state: a block corrupted behind the
# array's back and read (and repaired) through a mount, then plain fsck -n
# does the full check (images unchanged), plain fsck -p does it too and,
# leaving nothing uncorrected, clears the record, after which plain fsck -n
# takes the fast path again.  The same with fsck -y.  A pass that leaves
# errors uncorrected keeps the record: plain fsck -n checks in full again.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

f_pattern_array 5 30 120 8

full() { grep -q "^Phase 2: Redundancy (parity" "$1" && ! grep -q "skipped" "$1"; }
fast() { grep -q "Redundancy: skipped, every member is clean" "$1"; }

# fsck_plain MODE WANT: plain fsck (no -f) in MODE, exit WANT, output in $T/out
fsck_plain() { f_rc "$2" "$1" "$IMGS"; }

# cleared_by MODE: plain fsck MODE checks in full and clears the record;
# plain fsck -n then takes the fast path
cleared_by() {
	fsck_plain "$1" 0
	full "$T/out" || { cat "$T/out"; t_fail "fsck $1 took the fast path after errors"; }
	grep -q "the error record on the members is cleared" "$T/out" ||
		{ cat "$T/out"; t_fail "fsck $1 did not clear the record"; }
	fsck_plain -n 0
	fast "$T/out" || { cat "$T/out"; t_fail "no fast path after fsck $1 cleared the record"; }
}

# file1_block IMAGE...: "IMAGE OFFSET PARITY-IMAGE" for the first block of
# file1 found on one of IMAGE... that is not its row's parity block
file1_block() {
	local p o par
	while read -r p o; do
		par=$(f_parity_of "$o" "${IMG_LIST[@]}")
		[ "$par" = "$p" ] || { echo "$p $o $par"; return 0; }
	done < <("$PY" "$TESTS_DIR/fsck_locate.py" data:1 "$@")
}

# a data block of file1 on member 1 corrupted, then read through a mount
errors_while_mounted() {
	local img off other
	read -r img off other < <(file1_block "${IMG_LIST[1]}")
	[ -n "$off" ] || t_fail "no block of file1 on member 1"
	printf 'CORRUPTCORRUPT!!' | dd of="$img" bs=1 seek=$((off + 100)) conv=notrunc status=none
	t_mount "$IMGS" "$T/mnt"
	t_tree_sum "$T/mnt" >"$T/tree.now"
	t_umount "$T/mnt"
	diff "$T/tree.before" "$T/tree.now" || t_fail "a file read back wrong"
}

t_log "clean: the fast path"
fsck_plain -n 0
fast "$T/out" || { cat "$T/out"; t_fail "no fast path on a clean array"; }

t_log "a checksum error repaired while mounted: plain fsck -n checks in full"
errors_while_mounted
sha256sum "${IMG_LIST[@]}" >"$T/sums"
fsck_plain -n 0
full "$T/out" || { cat "$T/out"; t_fail "fsck -n took the fast path after errors"; }
grep -q "errors were recorded while the array was in use" "$T/out" || { cat "$T/out"; t_fail "the record is not reported"; }
grep -q "$(basename "${IMG_LIST[1]}"): recorded on it: 0 read errors, 1 checksum errors" "$T/out" ||
	{ cat "$T/out"; t_fail "member 1's count is not reported"; }
sha256sum -c --quiet "$T/sums" || t_fail "fsck -n changed an image"
fsck_plain -n 0
full "$T/out" || t_fail "the second fsck -n took the fast path: -n cleared the record"

t_log "plain fsck -p checks in full and clears the record"
cleared_by -p

t_log "again, cleared by plain fsck -y"
errors_while_mounted
cleared_by -y

t_log "errors left uncorrected keep the record"
read -r img off other < <(file1_block "${IMG_LIST[@]}")
[ -n "$other" ] || t_fail "no block of file1 found"
for i in "$img" "$other"; do
	printf 'CORRUPTCORRUPT!!' | dd of="$i" bs=1 seek=$((off + 100)) conv=notrunc status=none
done
f_rc 4 -y -f "$IMGS"
grep -q "error record on the members is cleared" "$T/out" && t_fail "-y cleared the record with errors left"
fsck_plain -n 4
full "$T/out" || { cat "$T/out"; t_fail "fsck -n took the fast path with errors left"; }
