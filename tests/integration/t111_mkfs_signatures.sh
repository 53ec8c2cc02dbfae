#!/bin/bash
# mkfs.raidfs refuses a member that holds something (a filesystem, a RAID
# or LVM member, a ZFS pool member, a partition table, a raidfs array),
# names what and where, and writes nothing; with -f it erases the old
# signature (blkid finds nothing afterwards) and creates the array.
# Signatures come from the real tools where they run here; md (no md
# driver in this kernel) and ZFS (no Debian main package) get their magic
# bytes written at the documented offsets.
. "$(dirname "$0")/lib.sh"

m_setup

# Writes hex bytes ("fc 4e 2b a9") at a byte offset of a file.
put_bytes() {
	local file=$1 off=$2 hex=$3
	printf "$(printf '\\x%s' $hex)" | dd of="$file" bs=1 seek="$off" conv=notrunc status=none
}

make_ext4() { mkfs.ext4 -q -F -L oldext4 "$1" >/dev/null 2>&1; }
make_xfs() { mkfs.xfs -q -f -L oldxfs "$1" >/dev/null 2>&1; }
make_btrfs() { mkfs.btrfs -q -f -L oldbtrfs "$1" >/dev/null 2>&1; }
make_gpt() { printf 'label: gpt\n,4M\n,4M\n' | sfdisk -q "$1" >/dev/null 2>&1; }
make_dos() { printf 'label: dos\n,4M\n' | sfdisk -q "$1" >/dev/null 2>&1; }
# md 0.90: its superblock sits in the last 64 KiB-aligned 64 KiB of the device.
make_md() {
	local size off
	size=$(stat -c %s "$1")
	off=$(((size & ~0xffff) - 0x10000))
	put_bytes "$1" "$off" "fc 4e 2b a9 00 00 00 00 5a 00 00 00"
}
# ZFS: uberblock magic 0x00bab10c in the uberblock arrays (128 KiB into
# labels 0 and 1), as libblkid's zfs prober looks for them.
make_zfs() {
	local l i
	for l in 0 262144; do
		for i in 0 1 2 3 4 5 6 7; do
			put_bytes "$1" $((l + 131072 + i * 1024)) "0c b1 ba 00 00 00 00 00 88 13 00 00 00 00 00 00"
		done
	done
}
make_lvm() {
	local l
	l=$(losetup -f --show "$1") || return 1
	T_LOOPS+=("$l")
	pvcreate -ff -y -q "$l" </dev/null >/dev/null 2>&1
	local rc=$?
	losetup -d "$l"
	return $rc
}

# kind, tool, size of the image it goes on, what the message must say
cases=(
	"ext4 mkfs.ext4 32M a filesystem: ext4 (label 'oldext4', UUID "
	"xfs mkfs.xfs 320M a filesystem: xfs (label 'oldxfs', UUID "
	"btrfs mkfs.btrfs 128M a filesystem: btrfs (label 'oldbtrfs', UUID "
	"md - 32M a RAID member: linux_raid_member (md"
	"lvm pvcreate 32M a RAID member: LVM2_member (LVM physical volume, UUID "
	"zfs - 64M a filesystem: zfs_member (ZFS pool member"
	"gpt sfdisk 32M a partition table: gpt (UUID "
	"dos sfdisk 32M a partition table: dos"
)
for c in "${cases[@]}"; do
	read -r kind tool size what <<<"$c"
	if [ "$tool" != - ] && ! command -v "$tool" >/dev/null; then
		t_log "$kind: $tool not installed, skipped (scripts/deps.sh installs it)"
		continue
	fi
	rm -f "$T"/*.img
	# only the member that holds something needs the tool's minimum size
	truncate -s 32M "$T/m0.img" "$T/m2.img"
	truncate -s "$size" "$T/m1.img"
	"make_$kind" "$T/m1.img" || t_fail "could not make $kind on m1.img"
	blkid -p "$T/m1.img" >/dev/null 2>&1 || t_fail "blkid sees no $kind signature on the test image"
	t_log "$kind: refused without -f, nothing written"
	m_sums >"$T/before"
	rc=0
	"$MKFS" "$T"/m0.img "$T"/m1.img "$T"/m2.img >"$T/out" 2>"$T/err" || rc=$?
	[ $rc -eq 1 ] || t_fail "$kind: exit $rc without -f"
	grep -qF "$T/m1.img holds $what" "$T/err" || t_fail "$kind: message: $(cat "$T/err")"
	grep -q "refusing to overwrite 1 member: -f" "$T/err" || t_fail "$kind: no refusal line: $(cat "$T/err")"
	grep -q "m0.img\|m2.img" "$T/err" && t_fail "$kind: blank members named: $(cat "$T/err")"
	m_sums | cmp -s - "$T/before" || t_fail "$kind: a member changed although mkfs refused"

	t_log "$kind: -n -f says what it would erase and writes nothing"
	"$MKFS" -n -f "$T"/m0.img "$T"/m1.img "$T"/m2.img >"$T/out" 2>"$T/err" || t_fail "$kind: -n -f: $(cat "$T/err")"
	grep -q "would erase" "$T/out" && grep -qF "$T/m1.img holds $what" "$T/out" \
		|| t_fail "$kind: -n -f output: $(cat "$T/out")"
	m_sums | cmp -s - "$T/before" || t_fail "$kind: -n -f changed a member"

	t_log "$kind: -f erases it and creates the array"
	"$MKFS" -f -L "after-$kind" "$T"/m0.img "$T"/m1.img "$T"/m2.img >"$T/out" 2>"$T/err" \
		|| t_fail "$kind: -f failed: $(cat "$T/err")"
	blkid -p "$T/m1.img" >"$T/blkid" 2>&1 && t_fail "$kind: still there after -f: $(cat "$T/blkid")"
	rc=0
	"$MKFS" "$T"/m0.img "$T"/m1.img "$T"/m2.img >/dev/null 2>"$T/err" || rc=$?
	[ $rc -eq 1 ] && grep -q "m1.img holds member 1 of 3 of the raidfs raid5 array .* (label 'after-$kind')" "$T/err" \
		|| t_fail "$kind: no raidfs array after -f: $(cat "$T/err")"
done

t_log "several members with different things: each one named"
rm -f "$T"/*.img
for i in 0 1 2 3; do truncate -s 32M "$T/m$i.img"; done
make_ext4 "$T/m0.img"
make_md "$T/m2.img"
make_ext4 "$T/m3.img"
make_md "$T/m3.img"   # ext4 at the start and md at the end of one device
m_sums >"$T/before"
rc=0
"$MKFS" -l 6 "$T"/m0.img "$T"/m1.img "$T"/m2.img "$T"/m3.img 2>"$T/err" >/dev/null || rc=$?
[ $rc -eq 1 ] || t_fail "exit $rc"
grep -qF "$T/m0.img holds a filesystem: ext4 (label 'oldext4'" "$T/err" || t_fail "m0: $(cat "$T/err")"
grep -qF "$T/m2.img holds a RAID member: linux_raid_member (md)" "$T/err" || t_fail "m2: $(cat "$T/err")"
[ "$(grep -c "$T/m3.img holds" "$T/err")" -eq 2 ] || t_fail "m3 should show two signatures: $(cat "$T/err")"
grep -q "refusing to overwrite 3 members" "$T/err" || t_fail "count: $(cat "$T/err")"
m_sums | cmp -s - "$T/before" || t_fail "a member changed"
"$MKFS" -q -f -l 6 "$T"/m0.img "$T"/m1.img "$T"/m2.img "$T"/m3.img || t_fail "-f with several"
for i in 0 2 3; do
	blkid -p "$T/m$i.img" >/dev/null 2>&1 && t_fail "m$i still has a signature"
done
t_log "ok"
