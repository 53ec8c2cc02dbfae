#!/bin/bash
# mkfs.raidfs -n prints the plan and writes nothing; members of unequal
# size report what is left unused; -C writes a configuration file that
# raidfs mounts (with spares, odd characters in paths) and that a second
# mkfs -f replaces atomically; partitions of a loop device work as members.
. "$(dirname "$0")/lib.sh"

m_setup
cd "$T"

t_log "-n: the plan, and not a byte written"
truncate -s 64M m0.img m2.img
truncate -s 80M m1.img
truncate -s 100M s0.img
mkfs.ext4 -q -F m2.img
m_sums >before
"$MKFS" -n -f -l 5 -c 128K -L plan -s s0.img -C plan.conf m0.img m1.img m2.img >out 2>err \
	|| t_fail "-n: $(cat err)"
m_sums | cmp -s - before || t_fail "-n changed an image"
[ -e plan.conf ] && t_fail "-n wrote the configuration file"
ls ./*.mkfs.* 2>/dev/null && t_fail "-n left a temporary file"
grep -q "dry run (-n): nothing has been written" out || t_fail "no dry-run heading: $(cat out)"
grep -q "would erase" out && grep -qF "m2.img holds a filesystem: ext4" out || t_fail "-n -f: erase not announced"
grep -q "level     raid5, 3 members, 1 spare$" out || t_fail "level: $(cat out)"
grep -q "chunk     128 KiB" out || t_fail "chunk: $(cat out)"
grep -q "label     'plan'" out || t_fail "label: $(cat out)"
grep -qE "^  members +0 +m0.img  64 MiB$" out || t_fail "member 0: $(cat out)"
grep -qE "^ +1 +m1.img  80 MiB  \(16 MiB unused: the smallest decides\)$" out || t_fail "member 1 unused: $(cat out)"
grep -qE "^ +spare +s0.img  100 MiB  \(36 MiB unused: the smallest decides\)$" out || t_fail "spare unused: $(cat out)"
grep -qE "capacity  1[0-9][0-9](\.[0-9]+)? MiB \([0-9]+ blocks of 4 KiB\)" out || t_fail "capacity: $(cat out)"
grep -qF "fstab     $T/plan.conf /mnt/point raidfs defaults,nofail 0 0" out || t_fail "fstab: $(cat out)"
uuid=$(awk '$1 == "uuid" { print $2 }' out)
[ -n "$uuid" ] || t_fail "no uuid in the plan"

t_log "-n without -f refuses exactly as the real run would"
rc=0
"$MKFS" -n m0.img m1.img m2.img >out 2>err || rc=$?
[ $rc -eq 1 ] && grep -qF "m2.img holds a filesystem: ext4" err || t_fail "-n without -f: $rc $(cat err)"
m_sums | cmp -s - before || t_fail "-n changed an image"

t_log "-C: the configuration file names the uuid, members and spares"
"$MKFS" -f -l 5 -c 128K -L conf -U "$uuid" -s s0.img -C plan.conf m0.img m1.img m2.img >out 2>err \
	|| t_fail "mkfs -C: $(cat err)"
[ -f plan.conf ] || t_fail "no configuration file"
ls ./*.mkfs.* 2>/dev/null && t_fail "temporary file left behind"
grep -q "uuid = \"$uuid\"" plan.conf || t_fail "uuid not in the file: $(cat plan.conf)"
grep -qF "'$T/m0.img'," plan.conf && grep -qF "'$T/m2.img'" plan.conf || t_fail "members: $(cat plan.conf)"
grep -A2 "spares" plan.conf | grep -qF "'$T/s0.img'" || t_fail "spares: $(cat plan.conf)"
grep -qF "config    $T/plan.conf" out || t_fail "config not reported: $(cat out)"
grep -qF "fstab     $T/plan.conf /mnt/point raidfs defaults,nofail 0 0" out || t_fail "fstab line: $(cat out)"
[ "$(stat -c %a plan.conf)" = 644 ] || t_fail "config mode $(stat -c %a plan.conf)"

t_log "-C again with -f replaces the file (a new uuid in it)"
"$MKFS" -q -f -l 4 -C plan.conf m0.img m1.img m2.img || t_fail "second -C"
grep -q "uuid = \"$uuid\"" plan.conf && t_fail "configuration file not replaced"
grep -q "spares = " plan.conf && t_fail "old spares kept"
grep -q "raid4" plan.conf || t_fail "new level not in the comment"

t_log "odd characters in paths: quoted in the file, escaped in fstab"
truncate -s 32M "o 1.img" "o'2.img" 'o\3.img'
"$MKFS" -f -C "my conf.conf" "o 1.img" "o'2.img" 'o\3.img' >out 2>err || t_fail "odd paths: $(cat err)"
grep -qF "'$T/o 1.img'" "my conf.conf" && grep -qF "'$T/o\\'2.img'" "my conf.conf" \
	&& grep -qF "'$T/o\\\\3.img'" "my conf.conf" || t_fail "quoting: $(cat "my conf.conf")"
grep -qF "fstab     $T/my\\040conf.conf /mnt/point" out || t_fail "fstab escape: $(grep fstab out)"
truncate -s 32M a:b.img
"$MKFS" -n -f m0.img a:b.img m1.img >out || t_fail "-n with ':'"
grep -q "fstab     (a member path holds ':'" out || t_fail "':' in a path not explained: $(grep fstab out)"

t_log "partitions of a loop device as members"
truncate -s 80M disk.img
printf 'label: gpt\n,32M\n,32M\n' | sfdisk -q disk.img >/dev/null 2>&1 || t_fail "sfdisk"
L=$(losetup -P -f --show disk.img) || t_fail "losetup -P"
T_LOOPS+=("$L")
for i in $(seq 20); do [ -b "${L}p2" ] && break; sleep 0.05; done
# A kernel without the GPT parser creates no partitions: add them by hand.
[ -b "${L}p2" ] || partx -a "$L" 2>/dev/null
for i in $(seq 20); do [ -b "${L}p2" ] && break; sleep 0.05; done
[ -b "${L}p1" ] && [ -b "${L}p2" ] || t_fail "no partition devices for $L"
rc=0
"$MKFS" "$L" m0.img m1.img >/dev/null 2>err || rc=$?
[ $rc -eq 1 ] && grep -qF "$L holds a partition table: gpt" err || t_fail "whole disk with a table: $(cat err)"
truncate -s 32M pm.img
"$MKFS" -f -l 5 -C part.conf "${L}p1" "${L}p2" pm.img >out 2>err || t_fail "partitions: $(cat err)"
grep -qE "^  members +0 +${L}p1  32 MiB$" out || t_fail "partition member line: $(cat out)"
rc=0
"$MKFS" "${L}p2" m0.img s0.img >/dev/null 2>err || rc=$?
[ $rc -eq 1 ] && grep -qF "${L}p2 holds member 1 of 3 of the raidfs raid5" err || t_fail "partition array: $(cat err)"

if m_can_mount; then
	t_log "raidfs mounts the configuration file, with a spare, and the member list"
	"$MKFS" -q -f -l 5 -s s0.img -C plan.conf m0.img m1.img m2.img || t_fail "mkfs for mount"
	t_mount "$T/plan.conf" "$T/mnt"
	head -c 2M /dev/urandom >ref
	cp ref mnt/f
	t_umount "$T/mnt"
	t_mount "$T/m0.img:$T/m1.img:$T/m2.img:$T/s0.img" "$T/mnt"
	cmp ref mnt/f || t_fail "file differs through the member list"
	t_umount "$T/mnt"
	t_mount "$T/my conf.conf" "$T/mnt2"
	t_umount "$T/mnt2"
	t_mount "$T/part.conf" "$T/mnt3"
	cp ref mnt3/f
	t_umount "$T/mnt3"
	t_mount "${L}p1:${L}p2:$T/pm.img" "$T/mnt3"
	cmp ref mnt3/f || t_fail "file differs on the partition array"
	t_umount "$T/mnt3"
else
	t_log "no raidfs daemon built: mount checks skipped"
fi
t_log "ok"
