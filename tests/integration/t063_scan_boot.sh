#!/bin/bash
# Assembly and boot (source/scan.c, DESIGN.md "Finding members by uuid"):
#  - a configuration naming only the array's uuid finds its members and
#    spare among the image files of its scan directory; a member of another array there
#    is left alone; a copy of a member there is an ambiguity that mounts
#    and writes nothing;
#  - SOURCE UUID=... finds the members among the block devices (loop
#    devices this test attaches), for raidfs and fsck.raidfs alike;
#  - degraded_wait=S: a member that appears 1.5 s late is waited for (not
#    degraded); one that never does is gone without after S seconds;
#  - fstab: util-linux fsck -A (FSTAB_FILE) runs fsck.raidfs on a raidfs
#    line with pass 2 and no nofail, and fails on an array it cannot
#    assemble; it skips a nofail line (fsck checks only block devices under
#    nofail) - what README.md says;
#  - mount -a with nofail and the array's members missing exits 0 after
#    one line, as mount(8) does for a missing device; without nofail 32.
. "$(dirname "$0")/lib.sh"
t_setup
t_helper_link
SECONDS=0
FSCK=$RAIDFS_BIN/fsck.raidfs
# random: two runs at once (another worktree) must not see each other's arrays
A=$(cat /proc/sys/kernel/random/uuid)
B=$(cat /proc/sys/kernel/random/uuid)
S=$T/scan
mkdir -p "$S" "$T/away" "$T/empty"
t_images 3 32M
mv "$T"/m?.img "$S/"
truncate -s 32M "$S/s0.img"
t_mkfs 5 64K -U "$A" -s "$S/s0.img" "$S/m0.img" "$S/m1.img" "$S/m2.img"
truncate -s 32M "$S/other0.img" "$S/other1.img"
t_mkfs 1 64K -U "$B" "$S/other0.img" "$S/other1.img"
M=$T/mnt
mkdir -p "$M"

cat >"$T/a.conf" <<CONF
array {
	uuid = "$A"
	scan = { "scan" }     # relative to this file
}
CONF

sums() { xxhsum -H3 "$S"/*.img "$@" 2>/dev/null | sed "s|$T/||"; }
degraded() { grep -q 'DEGRADED' "$T/daemon.log"; }

t_log "(${SECONDS}s) uuid only: the members are found in the scan directory"
t_mount "$T/a.conf" "$M"
echo hello >"$M/f"
t_umount "$M"
grep -q "scan: array $A: 3 of 3 members found in the scan directories, 1 spare$" "$T/daemon.log" \
	|| t_fail "no scan summary: $(cat "$T/daemon.log")"
grep -q "other0.img holds array $B: left alone" "$T/daemon.log" \
	|| t_fail "the other array's member was not left alone"
degraded && t_fail "assembled degraded"

t_log "a copy of a member in the scan directory: ambiguous, nothing written"
cp "$S/m1.img" "$S/copy.img"
before=$(sums)
: >"$T/daemon.log"
rc=0; t_try_mount "$T/a.conf" "$M" || rc=$?
[ $rc -eq 32 ] || t_fail "ambiguous scan: exit $rc, not 32"
grep -q 'both hold member' "$T/daemon.log" || t_fail "no ambiguity message: $(cat "$T/daemon.log")"
t_log "$(grep 'both hold' "$T/daemon.log")"
sleep 1
[ "$(sums)" = "$before" ] || t_fail "a member changed after the refused mount"
mv "$S/copy.img" "$T/copy.img"

t_log "two old copies of a member alike (taken a mount ago): left out, the member used"
t_mount "$T/a.conf" "$M"
echo again >"$M/g"
t_umount "$M"
cp "$T/copy.img" "$S/copy2.img"
mv "$T/copy.img" "$S/copy.img"
copy=$(xxhsum -H3 "$S/copy.img")
: >"$T/daemon.log"
t_mount "$T/a.conf" "$M"
[ "$(cat "$M/g")" = again ] || t_fail "the old copy was read: $(cat "$M/g")"
t_umount "$M"
grep -q "$S/copy.img: left out: an old copy of member 1" "$T/daemon.log" \
	|| t_fail "no old-copy message: $(cat "$T/daemon.log")"
grep -q "3 of 3 members found in the scan directories, 1 spare, and older devices" "$T/daemon.log" \
	|| t_fail "scan summary: $(cat "$T/daemon.log")"
degraded && t_fail "assembled degraded"
[ "$(xxhsum -H3 "$S/copy.img")" = "$copy" ] || t_fail "the old copy was written"
[ "$(xxhsum -H3 "$S/copy2.img" | cut -d' ' -f1)" = "${copy%% *}" ] || t_fail "the second old copy was written"
rm "$S/copy.img" "$S/copy2.img"

t_log "degraded_wait: a member 1.5 s late is waited for"
mv "$S/m2.img" "$T/away/"
: >"$T/daemon.log"
( sleep 1.5; mv "$T/away/m2.img" "$S/" ) &
late=$!
start=$SECONDS
t_mount "$T/a.conf" "$M" -o degraded_wait=20
wait $late
grep -q 'waiting up to 20 s' "$T/daemon.log" || t_fail "did not wait: $(cat "$T/daemon.log")"
degraded && t_fail "assembled degraded although the member came"
[ "$(cat "$M/f")" = hello ] || t_fail "data"
t_umount "$M"
[ $((SECONDS - start)) -lt 15 ] || t_fail "the wait did not end when the member came"

t_log "degraded_wait, members listed: one never comes; degraded after the wait"
mv "$S/m2.img" "$T/away/"
: >"$T/daemon.log"
start=$(date +%s%N)
t_mount "$S/m0.img:$S/m1.img:$S/m2.img" "$M" -o degraded_wait=2,ro
took=$((($(date +%s%N) - start) / 1000000))
[ $took -ge 2000 ] || t_fail "mounted after $took ms, before the 2 s wait"
grep -q 'going on without the others' "$T/daemon.log" || t_fail "no message after the wait"
t_log "$(grep 'going on without' "$T/daemon.log") (mounted after $took ms)"
degraded || t_fail "not degraded with a member missing"
[ "$(cat "$M/f")" = hello ] || t_fail "data, degraded"
t_umount "$M"
mv "$T/away/m2.img" "$S/"

t_log "(${SECONDS}s) UUID=: the members found among the block devices (loop devices)"
for i in 0 1 2; do
	l=$(losetup -f --show "$S/m$i.img") || t_skip "no loop devices"
	T_LOOPS+=("$l")
done
mkdir -p "$T/noscan"
: >"$T/daemon.log"
t_mount "UUID=$A" "$M"
[ "$(cat "$M/f")" = hello ] || t_fail "data via UUID="
findmnt -n -o SOURCE "$M" | grep -qx "UUID=$A" || t_fail "mount source is not UUID=$A"
t_umount "$M"
grep -q "scan: array $A: 3 of 3 members found among the block devices" "$T/daemon.log" \
	|| t_fail "not found among the block devices: $(cat "$T/daemon.log")"
"$FSCK" -n "UUID=$A" >"$T/fsck.out" 2>&1 || t_fail "fsck.raidfs -n UUID=: $(cat "$T/fsck.out")"
grep -q "UUID=$A: clean" "$T/fsck.out" || t_fail "fsck.raidfs UUID=: $(cat "$T/fsck.out")"
for l in "${T_LOOPS[@]}"; do losetup -d "$l"; done
T_LOOPS=()

t_log "(${SECONDS}s) fsck -A runs fsck.raidfs on a pass-2 line; a bad array fails it"
cat >"$T/none.conf" <<CONF
array {
	uuid = "$A"
	scan = { "empty" }
}
CONF
echo "$T/a.conf $M raidfs defaults 0 2" >"$T/fstab"
PATH=$RAIDFS_BIN:$PATH FSTAB_FILE=$T/fstab fsck -A -C -T -a -t raidfs >"$T/fsckA.out" 2>&1 \
	|| t_fail "fsck -A: $(cat "$T/fsckA.out")"
grep -q "$T/a.conf: clean" "$T/fsckA.out" || t_fail "fsck -A did not run fsck.raidfs: $(cat "$T/fsckA.out")"
t_log "fsck -A: $(tail -n 1 "$T/fsckA.out")"
# one dead disk at boot: the boot's fsck warns and goes on (the mount
# then runs degraded, as mdadm assembles degraded); it stopped the boot
t_log "fsck -A, one member's disk gone: a warning, exit 0, nothing written"
mv "$S/m2.img" "$T/away/"
before=$(sums)
rc=0
PATH=$RAIDFS_BIN:$PATH FSTAB_FILE=$T/fstab fsck -A -C -T -a -t raidfs >"$T/fsckA.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || t_fail "fsck -A, degraded: exit $rc: $(cat "$T/fsckA.out")"
grep -q 'WARNING: the array runs degraded' "$T/fsckA.out" || t_fail "fsck -A, degraded: no warning: $(cat "$T/fsckA.out")"
[ "$(sums)" = "$before" ] || t_fail "fsck -A, degraded, wrote to a member"
mv "$T/away/m2.img" "$S/"
echo "$T/none.conf $M raidfs defaults 0 2" >"$T/fstab"
rc=0
PATH=$RAIDFS_BIN:$PATH FSTAB_FILE=$T/fstab fsck -A -C -T -a -t raidfs >"$T/fsckA.out" 2>&1 || rc=$?
[ $rc -ne 0 ] || t_fail "fsck -A passed an array with no members: $(cat "$T/fsckA.out")"
grep -q 'no device holds array' "$T/fsckA.out" || t_fail "fsck -A: $(cat "$T/fsckA.out")"
t_log "fsck -A, no members: exit $rc: $(grep 'no device' "$T/fsckA.out")"
t_log "fsck -A skips a nofail line (as README.md says)"
echo "$T/a.conf $M raidfs defaults,nofail 0 2" >"$T/fstab"
PATH=$RAIDFS_BIN:$PATH FSTAB_FILE=$T/fstab fsck -A -T -V -t raidfs >"$T/fsckA.out" 2>&1 \
	|| t_fail "fsck -A, nofail: $(cat "$T/fsckA.out")"
grep -q 'skipping nonexistent device' "$T/fsckA.out" || t_fail "fsck -A, nofail: $(cat "$T/fsckA.out")"
grep -q 'clean' "$T/fsckA.out" && t_fail "fsck -A checked a nofail line: $(cat "$T/fsckA.out")"

t_log "mount -a: members missing with nofail is no failure, without it is"
echo "$T/none.conf $M raidfs defaults,nofail 0 0" >"$T/fstab"
rc=0; mount -a -T "$T/fstab" >"$T/mount.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || t_fail "mount -a, nofail, no members: exit $rc: $(cat "$T/mount.out")"
grep -q 'not mounted (nofail): no device holds array' "$T/mount.out" \
	|| t_fail "no line said why: $(cat "$T/mount.out")"
t_is_mounted "$M" && t_fail "mounted"
t_log "mount -a, nofail: exit 0: $(cat "$T/mount.out")"
echo "$T/none.conf $M raidfs defaults 0 0" >"$T/fstab"
rc=0; mount -a -T "$T/fstab" >"$T/mount.out" 2>&1 || rc=$?
[ $rc -eq 32 ] || t_fail "mount -a, no nofail, no members: exit $rc, not 32"
t_log "mount -a, nofail: two of three RAID 5 members missing"
echo "$S/m0.img:$T/away/x.img:$T/away/y.img $M raidfs nofail 0 0" >"$T/fstab"
rc=0; mount -a -T "$T/fstab" >"$T/mount.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || t_fail "mount -a, nofail, 2 of 3 missing: exit $rc: $(cat "$T/mount.out")"
grep -q 'not mounted (nofail): degraded: slot [0-9] (member [0-9a-f-]*) missing' "$T/mount.out" || t_fail "no line: $(cat "$T/mount.out")"
t_is_mounted "$M" && t_fail "mounted with 2 of 3 members"
t_log "$(cat "$T/mount.out")"
t_log "done in ${SECONDS}s"
exit 0
