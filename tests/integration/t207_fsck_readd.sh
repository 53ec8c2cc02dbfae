#!/bin/bash
# fsck -y gives a slot that is not active its device back, without
# --rebuild, only where that cannot destroy anything:
#  - a stale member (left out while the array ran degraded and was
#    written) is rebuilt in place; fsck -n reports it and writes nothing;
#  - an old copy of a member (its slot active at the last update) is not
#    written without --rebuild: it may be a backup named by mistake;
#  - a member wiped whole (no superblock copy left, nothing libblkid knows)
#    is rebuilt onto; fsck -n reports it;
#  - a device in SOURCE that holds something else (ext4) is not touched:
#    exit 4, it is named, and it stays bit-for-bit unchanged;
#  - with a spare, the missing slot is rebuilt onto the spare;
#  - with two slots missing and one blank device, -n names it once, as
#    -y uses it once.
# After each, fsck -n -f exits 0 and, with another member removed, every
# file (those written while degraded included) reads back intact.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup
command -v mkfs.ext4 >/dev/null || t_skip "no mkfs.ext4"

t_images 5 64M
M=("${IMG_LIST[@]}")
SPARE=${M[4]}
IMGS="${M[0]}:${M[1]}:${M[2]}:${M[3]}"
t_mkfs 5 64K "${M[0]}" "${M[1]}" "${M[2]}" "${M[3]}"
t_mount "$IMGS" "$T/mnt"
for i in 1 2 3; do head -c $((i * 700000)) /dev/urandom >"$T/mnt/f$i"; done
t_umount "$T/mnt"

has() { grep -q -- "$1" "$T/out" || { cat "$T/out"; t_fail "no '$1'"; }; }

t_log "stale: member 2 left out while the array is written degraded"
mv "${M[2]}" "$T/m2.away"
t_mount "$IMGS" "$T/mnt"
head -c 1500000 /dev/urandom >"$T/mnt/written-degraded"
rm "$T/mnt/f1"
t_tree_sum "$T/mnt" >"$T/tree.before"
t_umount "$T/mnt"
mv "$T/m2.away" "${M[2]}"
sha256sum "${M[@]}" >"$T/sums"
f_rc 4 -n "$IMGS"
has "left out: stale"
has "slot 2 is missing; ${M[2]} is its former member (left out as stale): fsck -y rebuilds it in full"
sha256sum -c --quiet "$T/sums" || t_fail "fsck -n changed an image"
f_rc 1 -y "$IMGS"
has "rebuilding slot 2 onto ${M[2]}"
has "rebuild finished"
f_redundant "$IMGS" "${M[0]}"

# An old copy of a member in its place (its slot was active at the last
# update): maybe a backup named by mistake, so -y does not rebuild over it
# (it did: a tester's find); --rebuild names it when it is the member
t_log "an old copy of member 2 put back: kept as it is; rebuilt with --rebuild"
cp "${M[2]}" "$T/m2.old"
t_mount "$IMGS" "$T/mnt"
head -c 700000 /dev/urandom >"$T/mnt/written-after-copy"
t_tree_sum "$T/mnt" >"$T/tree.before"
t_umount "$T/mnt"
cp "$T/m2.old" "${M[2]}"
sha256sum "${M[2]}" >"$T/sums"
f_rc 4 -n "$IMGS"
has "slot 2: ${M[2]} is its former member, left out as stale (an old copy of it, or a disk that lost writes): not rebuilt over without --rebuild"
# twice: the first -y records slot 2 missing (the array runs without
# it), and the copy is still no device that left it
for i in 1 2; do
	f_rc "4 5" -y "$IMGS"
	has "not rebuilt over without --rebuild ${M[2]}"
	grep -q "rebuilding slot" "$T/out" && { cat "$T/out"; t_fail "fsck -y rebuilt over the old copy"; }
	sha256sum -c --quiet "$T/sums" || t_fail "fsck -y changed the old copy"
done
f_rc 1 -y --rebuild "${M[2]}" "$IMGS"
grep -q "cannot open it" "$T/out" && { cat "$T/out"; t_fail "fsck -y could not open the old copy"; }
has "rebuild finished"
f_redundant "$IMGS" "${M[0]}"

t_log "wiped: member 1 zeroed whole (no superblock copy left)"
dd if=/dev/zero of="${M[1]}" bs=1M count=64 conv=notrunc status=none
blkid -p "${M[1]}" >/dev/null 2>&1 && t_fail "blkid finds something on zeros"
sha256sum "${M[@]}" >"$T/sums"
f_rc 4 -n "$IMGS"
has "${M[1]}: not a raidfs member"
has "slot 1 is missing; ${M[1]} holds nothing: fsck -y rebuilds it onto it"
sha256sum -c --quiet "$T/sums" || t_fail "fsck -n changed an image"
f_rc 1 -y "$IMGS"
has "rebuilding slot 1 onto ${M[1]}"
f_redundant "$IMGS" "${M[3]}"

t_log "something else in its place: member 3 replaced by an ext4 image"
mv "${M[3]}" "$T/m3.away"
truncate -s 64M "${M[3]}"
mkfs.ext4 -q -F -L precious "${M[3]}"
sha256sum "${M[3]}" >"$T/sums"
f_rc 4 -y "$IMGS"
has "${M[3]} holds a filesystem: ext4 (label 'precious'"
has "not used without --rebuild"
has "DEGRADED"
grep -q "rebuilding slot" "$T/out" && t_fail "fsck -y rebuilt onto the ext4 image"
sha256sum -c --quiet "$T/sums" || t_fail "fsck -y changed the ext4 image"
rm "${M[3]}"
mv "$T/m3.away" "${M[3]}"
# that fsck -y had nothing to repair and wrote nothing (it used to
# rewrite every superblock, slot 3 missing, and member 3 was stale):
# with member 3 back the array is whole and clean
f_rc 0 -y "$IMGS"
grep -q "rebuilding slot" "$T/out" && { cat "$T/out"; t_fail "member 3 was made stale"; }
f_rc 0 -n -f "$IMGS"

t_log "a spare: member 0 lost, rebuilt onto the spare"
# the spare joins through a fresh array with one (mkfs -s)
t_mkfs 5 64K -s "$SPARE" "${M[0]}" "${M[1]}" "${M[2]}" "${M[3]}"
WITH_SPARE="$IMGS:$SPARE"
t_mount "$WITH_SPARE" "$T/mnt"
for i in 1 2 3; do head -c $((i * 700000)) /dev/urandom >"$T/mnt/g$i"; done
t_tree_sum "$T/mnt" >"$T/tree.before"
t_umount "$T/mnt"
rm "${M[0]}"
f_rc 4 -n "$WITH_SPARE"
has "slot 0 is missing: fsck -y rebuilds it onto a spare"
# a dead disk is left out of the list (its path there, not existing, is
# taken for a typo: t221)
f_rc 1 -y "${M[1]}:${M[2]}:${M[3]}:$SPARE"
has "rebuilding slot 0 onto a spare"
f_redundant "$WITH_SPARE" "${M[1]}"

t_log "two slots missing, one blank device: -n names it for one slot only, as -y does"
truncate -s 64M "${M[0]}"
t_mkfs 6 64K "${M[@]}"
ALL="${M[0]}:${M[1]}:${M[2]}:${M[3]}:${M[4]}"
t_mount "$ALL" "$T/mnt"
head -c 2000000 /dev/urandom >"$T/mnt/h"
t_umount "$T/mnt"
dd if=/dev/zero of="${M[1]}" bs=1M count=64 conv=notrunc status=none
mv "${M[3]}" "$T/m3.gone"
f_rc 4 -n "$ALL"
[ "$(grep -c "${M[1]} holds nothing" "$T/out")" -eq 1 ] ||
	{ cat "$T/out"; t_fail "fsck -n names ${M[1]} for more than one slot"; }
f_rc "1 5" -y "${M[0]}:${M[1]}:${M[2]}:${M[4]}"
[ "$(grep -c "rebuilding slot . onto ${M[1]}" "$T/out")" -eq 1 ] ||
	{ cat "$T/out"; t_fail "fsck -y did not rebuild once onto ${M[1]}"; }
