#!/bin/bash
# One member under two names is still one member.  A loop device over a
# member's image file, or a device carrying an active member's or a
# spare's superblock (an alias, or a copy), is never taken as another
# device while the array holds the member: a second mount through the
# loop devices, fsck -y, mkfs -f, raidfsctl add and replace all refuse,
# and the mounted array's files stay intact.  The other way round too:
# mounted through loop devices, the image files behind them are refused.
# (Found by an administrator-mistakes test: each of these was accepted,
# and the double mount lost every file written through the first mount;
# a replace onto a loop over the spare, then one failure, lost 10,702
# blocks of a RAID 5.)
. "$(dirname "$0")/lib.sh"
t_setup
. "$TESTS_DIR/ctl_lib.sh"
losetup -f >/dev/null 2>&1 || t_skip "no loop devices"

t_images 5 40M
t_mkfs 5 64K -s "$T/m4.img" "$T/m0.img" "$T/m1.img" "$T/m2.img" "$T/m3.img"
loops=()
for i in 0 1 2 3 4; do
	l=$(losetup -f --show "$T/m$i.img") || t_fail "losetup m$i.img"
	T_LOOPS+=("$l")
	loops+=("$l")
done
LOOPS=$(IFS=:; echo "${loops[*]:0:4}")
M=$T/mnt
t_mount "$T/m0.img:$T/m1.img:$T/m2.img:$T/m3.img:$T/m4.img" "$M"
head -c 8M /dev/urandom >"$T/f"
cp "$T/f" "$M/f" && sync -f "$M/f" || t_fail "write f"

t_log "mounted through the images: the loop devices over them are refused"
rc=0
t_try_mount "$LOOPS" "$T/mnt2" || rc=$?
[ $rc -ne 0 ] || t_fail "a second mount through loop devices over the members"
grep -q "in use" "$T/daemon.log" || t_fail "the second mount did not say why: $(tail -n 5 "$T/daemon.log")"
for mode in -y -n; do
	rc=0
	"$RAIDFS_BIN/fsck.raidfs" $mode -f "$LOOPS" >"$T/fsck.out" 2>&1 || rc=$?
	[ $rc -ge 8 ] || t_fail "fsck $mode through loop devices exited $rc: $(cat "$T/fsck.out")"
done
truncate -s 40M "$T/x.img"
rc=0
"$RAIDFS_BIN/mkfs.raidfs" -q -f -l 1 "${loops[0]}" "$T/x.img" >"$T/mkfs.out" 2>&1 || rc=$?
[ $rc -ne 0 ] || t_fail "mkfs -f over a loop device of a mounted member"
grep -q "busy\|in use" "$T/mkfs.out" || t_fail "mkfs: $(cat "$T/mkfs.out")"

t_log "raidfsctl add and replace refuse an alias or a copy of a member or the spare"
expect_rc 1 "$CTL" add "$M" "${loops[2]}"
grep -q "in use\|holds the superblock of slot 2" "$T/err" ||
	t_fail "add of a loop over slot 2: $(cat "$T/err")"
expect_rc 1 "$CTL" replace "$M" 1 "${loops[4]}"
grep -q "in use\|holds the superblock of a spare" "$T/err" ||
	t_fail "replace onto a loop over the spare: $(cat "$T/err")"
cp --sparse=always "$T/m2.img" "$T/copy2.img"
expect_rc 1 "$CTL" replace "$M" 1 "$T/copy2.img"
grep -q "holds the superblock of slot 2 of this array" "$T/err" ||
	t_fail "replace onto a copy of slot 2: $(cat "$T/err")"
[ "$(state)" = clean ] || t_fail "not clean: $(state)"
"$CTL" fail "$M" 3 >/dev/null || t_fail "fail 3"
wait_state clean                 # the spare rebuilt into slot 3
echo 3 >/proc/sys/vm/drop_caches
cmp "$T/f" "$M/f" || t_fail "f differs"
t_umount "$M"

t_log "mounted through the loop devices: the images behind them are refused"
SRC2=${loops[0]}:${loops[1]}:${loops[2]}:${loops[4]}
t_mount "$SRC2" "$M"
cmp "$T/f" "$M/f" || t_fail "f differs through the loop devices"
rc=0
"$RAIDFS_BIN/fsck.raidfs" -y -f "$T/m0.img:$T/m1.img:$T/m2.img:$T/m4.img" >"$T/fsck.out" 2>&1 || rc=$?
[ $rc -ge 8 ] || t_fail "fsck -y through the images exited $rc: $(cat "$T/fsck.out")"
t_umount "$M"

# Members given by relative paths (the daemon leaves the directory they
# were given in): raidfsctl names one by its path, absolute or relative
# (no path matched: a tester's find)
t_log "members given by relative paths: named by their paths in raidfsctl"
for l in "${loops[@]}"; do losetup -d "$l"; done
T_LOOPS=()
(cd "$T" && "$RAIDFS_BIN/raidfs" m0.img:m1.img:m2.img:m4.img "$M") >>"$T/daemon.log" 2>&1 ||
	t_fail "mount by relative paths"
T_MOUNTS+=("$M")
"$CTL" status "$M" | grep -q " $T/m1.img\$" || t_fail "status shows no absolute path: $("$CTL" status "$M")"
# a bare name is the caller's file, never one the daemon's working
# directory holds (it was looked up there: T3 D2)
mkdir -p "$T/other"
truncate -s 1M "$T/other/m1.img"
(cd "$T/other" && "$CTL" fail "$M" m1.img) >"$T/out" 2>&1 &&
	t_fail "an unrelated m1.img failed a member"
grep -q "no such member: $T/other/m1.img" "$T/out" ||
	t_fail "fail of an unrelated m1.img: $(cat "$T/out")"
[ "$(state)" = clean ] || t_fail "an unrelated m1.img changed the array"
(cd "$T" && "$CTL" fail "$M" m1.img) >"$T/out" 2>&1 || t_fail "fail m1.img: $(cat "$T/out")"
wait_state degraded
(cd "$T" && "$CTL" fail mnt ./m1.img) >"$T/out" 2>&1 && t_fail "failed twice"
grep -q "slot 1 is not in use" "$T/out" || t_fail "fail ./m1.img: $(cat "$T/out")"
"$CTL" fail "$M" "$T/m2.img" >"$T/out" 2>&1 && t_fail "failed beyond redundancy"
grep -q "cannot run without it" "$T/out" || t_fail "fail by absolute path: $(cat "$T/out")"
pid=$(t_daemon_pid "$M") || t_fail "no daemon"
T_PIDS+=("$pid")
t_umount_idle "$M" || t_fail "umount"
t_wait_gone "$pid"
exit 0
