#!/bin/bash
# fsck --rebuild TARGET checks TARGET before it writes anything: a member of
# another raidfs array, an ext4 filesystem, a device too small for the
# array's members, a device in use, an active member of this very array are
# each refused with exit 8 and a message naming what was found, as is one
# holding data that no signature names (read whole: samples miss it), and
# without --rebuild such a device in SOURCE is not taken; every
# image (TARGET's included) is bit-for-bit unchanged, also a few seconds
# later.  With -f the ext4 image is taken: its signature is erased, the
# rebuild runs, and the array is then fully redundant.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup
command -v mkfs.ext4 >/dev/null || t_skip "no mkfs.ext4"

t_images 4 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"
for i in 1 2 3; do head -c $((i * 900000)) /dev/urandom >"$T/mnt/f$i"; done
t_tree_sum "$T/mnt" >"$T/tree.before"
t_umount "$T/mnt"
M=("${IMG_LIST[@]}")
rm "${M[2]}"
OTHERS="${M[0]}:${M[1]}:${M[3]}"

# what the refused runs may not change
t_images 3 64M o
t_mkfs 5 64K "$T/o0.img" "$T/o1.img" "$T/o2.img"
truncate -s 64M "$T/ext4.img"
mkfs.ext4 -q -F -L precious "$T/ext4.img"
truncate -s 32M "$T/small.img"
truncate -s 64M "$T/busy.img"
head -c 64M /dev/urandom >"$T/data.img"
# data only where the samples of a "blank" device did not look: zeros in
# its first and last MiB and in 62 blocks spread between
truncate -s 64M "$T/hidden.img"
head -c 1245184 /dev/urandom | dd of="$T/hidden.img" bs=4096 seek=400 conv=notrunc status=none
sums() { (cd "$T" && sha256sum -- *.img); }
sums >"$T/sums"

# refused TARGET SOURCE PATTERN...: exit 8, every pattern in the output
refused() {
	local target=$1 src=$2 rc p
	shift 2
	rc=0; "$FSCK" -y --rebuild "$target" "$src" >"$T/out" 2>&1 || rc=$?
	[ $rc -eq 8 ] || { cat "$T/out"; t_fail "--rebuild $(basename "$target"): exit $rc, want 8"; }
	for p in "$@"; do
		grep -q -- "$p" "$T/out" || { cat "$T/out"; t_fail "--rebuild $(basename "$target"): no '$p'"; }
	done
	grep -q "rebuilding slot" "$T/out" && t_fail "--rebuild $(basename "$target"): a rebuild began"
	sums | diff - "$T/sums" >/dev/null || t_fail "--rebuild $(basename "$target"): an image changed"
	t_log "$(basename "$target"): refused"
}

t_log "a member of another raidfs array, named in SOURCE in place of the lost one"
refused "$T/o0.img" "${M[0]}:${M[1]}:$T/o0.img:${M[3]}" \
	"member 0 of 3 of the raidfs raid5 array" "refusing to overwrite"
t_log "an ext4 filesystem, not in SOURCE"
refused "$T/ext4.img" "$OTHERS" "a filesystem: ext4 (label 'precious'" "-f overwrites"
t_log "too small for the array's members"
refused "$T/small.img" "$OTHERS" "smaller than the" "too small"
t_log "in use by another program (an exclusive lock held)"
exec 8<"$T/busy.img"
flock -x 8
refused "$T/busy.img" "$OTHERS" "in use"
exec 8<&-
t_log "an active member of this array"
refused "${M[1]}" "$OTHERS" "slot 1 of this array, active"
# --rebuild named it: plain data was overwritten without -f (a tester's
# find); the device is read whole before anything is written
t_log "data with no signature, between the places a blank device is sampled"
refused "$T/hidden.img" "$OTHERS" "holds data (byte 1638400 is not zero)" "-f overwrites it"

# A typo in SOURCE naming a file of someone's data (no raidfs member, no
# signature libblkid knows) in place of the lost member: fsck -y counted
# it as holding nothing and rebuilt over it, and it rewrote the other
# members' superblocks (the slot missing, a write-intent record) on a
# clean array that needed nothing (a tester's find).  Now the file is
# not taken without --rebuild, and nothing at all is written.
t_log "a file of data in SOURCE in place of the lost member: not taken, nothing written"
sums >"$T/sums"
rc=0; "$FSCK" -y "${M[0]}:${M[1]}:$T/data.img:${M[3]}" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 4 ] || { cat "$T/out"; t_fail "fsck -y with data.img in SOURCE: exit $rc, want 4"; }
grep -q "data.img holds data (no raidfs member, no signature known): not used without --rebuild" "$T/out" ||
	{ cat "$T/out"; t_fail "fsck -y: data.img not refused by name"; }
grep -q "rebuilding slot" "$T/out" && t_fail "fsck -y rebuilt onto data.img"
sums | diff - "$T/sums" >/dev/null || t_fail "fsck -y with data.img in SOURCE wrote"
# the same with data where a blank device is not sampled: taken for
# blank, rebuilt over (a tester's find); now read whole first
rc=0; "$FSCK" -y "${M[0]}:${M[1]}:$T/hidden.img:${M[3]}" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 4 ] || { cat "$T/out"; t_fail "fsck -y with hidden.img in SOURCE: exit $rc, want 4"; }
grep -q "hidden.img holds data (no raidfs member, no signature known): not used without --rebuild .* -f (byte 1638400 is not zero)" "$T/out" ||
	{ cat "$T/out"; t_fail "fsck -y: hidden.img not refused by name"; }
sums | diff - "$T/sums" >/dev/null || t_fail "fsck -y with hidden.img in SOURCE wrote"
sleep 3
sums | diff - "$T/sums" >/dev/null || t_fail "an image changed after the refusals"

# An active member named while another member is an old copy (phase 1
# finds damage it would mend by -y's first write): refused as above, and
# exit 8 alone - it said 9, "errors corrected", with nothing written (a
# tester's find, x1).
t_log "an active member named, an old copy of another member in SOURCE: exit 8"
t_images 4 64M s
t_mkfs 5 64K "$T"/s?.img
S="$T/s0.img:$T/s1.img:$T/s2.img:$T/s3.img"
t_mount "$S" "$T/mnt"
echo one >"$T/mnt/a"
t_umount "$T/mnt"
cp --sparse=always "$T/s1.img" "$T/s1.old"
t_mount "$S" "$T/mnt"
echo two >"$T/mnt/b"
t_umount "$T/mnt"
mv "$T/s1.old" "$T/s1.img"
sums >"$T/sums"
refused "$T/s2.img" "$S" "slot 2 of this array, active"

t_log "-f: the ext4 image is erased and rebuilt onto"
f_rc 1 -y -f --rebuild "$T/ext4.img" "$OTHERS"
grep -q "ext4.*-f, overwriting it" "$T/out" || { cat "$T/out"; t_fail "-f does not say what it overwrites"; }
grep -q "rebuild finished" "$T/out" || { cat "$T/out"; t_fail "no rebuild"; }
blkid -p "$T/ext4.img" 2>/dev/null | grep -q ext4 && t_fail "the ext4 signature is still there"
t_log "fully redundant: every file reads with member 0 removed"
f_redundant "${M[0]}:${M[1]}:$T/ext4.img:${M[3]}" "${M[0]}"
