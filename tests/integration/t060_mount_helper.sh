#!/bin/bash
# mount(8) and fstab, as a user would: mount -t raidfs, mount -T FSTAB with
# a configuration file as SOURCE, the options fstab lines carry, umount.
# /sbin/mount.raidfs is linked to the build under test (t_helper_link);
# t062 tests the installed layout instead.
. "$(dirname "$0")/lib.sh"
t_setup
t_helper_link
OURS=$RAIDFS_BIN/mount.raidfs

t_images 4 512M
t_mkfs 5 64K "${IMG_LIST[@]}"
M=$T/mnt
mkdir "$M"
T_MOUNTS+=("$M")

wait_umounted() {   # umount returns before the daemon has flushed
	local pid=$1
	t_umount_idle "$M" || t_fail "umount $M"
	t_wait_gone "$pid" || t_fail "daemon $pid did not exit after umount"
}

t_log "mount -t raidfs MEMBERS DIR: silent on success, as mount(8)'s helpers"
mount -t raidfs "$IMGS" "$M" 2>"$T/quiet.err" || t_fail "mount -t raidfs"
cat "$T/quiet.err" >>"$T/daemon.log"
[ -s "$T/quiet.err" ] && t_fail "the helper printed on success: $(cat "$T/quiet.err")"
t_is_mounted "$M" || t_fail "not mounted"
pid=$(t_daemon_pid "$M") || t_fail "no daemon"
T_PIDS+=("$pid")
echo via-mount >"$M/f"

t_log "mount -o remount,ro and remount,rw (xfstests generic/294): no second assembly"
# mount(8) runs the helper of the type the mount table shows, fuse.raidfs
mount -o remount,ro "$M" 2>>"$T/daemon.log" || t_fail "mount -o remount,ro: $(tail -n 3 "$T/daemon.log")"
grep " $M " /proc/mounts | grep -q ' ro,' || t_fail "remount,ro not applied"
t_expect_fail sh -c "echo x >'$M/g'"
[ "$(cat "$M/f")" = via-mount ] || t_fail "data after remount,ro"
"$OURS" "$IMGS" "$M" -o remount,rw 2>>"$T/daemon.log" || t_fail "mount.raidfs -o remount,rw"
grep " $M " /proc/mounts | grep -q ' rw,' || t_fail "remount,rw not applied"
echo y >"$M/g" || t_fail "a write after remount,rw"
[ "$(t_daemon_pid "$M")" = "$pid" ] || t_fail "another daemon after the remounts"
mkdir -p "$T/notmnt"
rc=0
"$RAIDFS_BIN/raidfs" "$IMGS" "$T/notmnt" -o remount,ro 2>>"$T/daemon.log" || rc=$?
[ $rc -eq 32 ] || t_fail "remount of a directory that is not mounted exited $rc"
t_is_mounted "$T/notmnt" && t_fail "remount of a directory that is not mounted mounted it"
rm "$M/g"
wait_umounted "$pid"

t_log "mount -t raidfs with the options fstab lines carry"
mount -t raidfs -o ro,noatime,nodev,nosuid,nofail,_netdev,noauto,x-systemd.automount,x-systemd.device-timeout=5,comment=x \
	"$IMGS" "$M" 2>>"$T/daemon.log" || t_fail "mount with fstab options"
grep " $M " /proc/mounts | grep -q ' ro,' || t_fail "ro not applied"
grep " $M " /proc/mounts | grep -q 'noatime' || t_fail "noatime not applied"
[ "$(cat "$M/f")" = via-mount ] || t_fail "data"
pid=$(t_daemon_pid "$M") || t_fail "no daemon"
T_PIDS+=("$pid")
wait_umounted "$pid"

t_log "a garbage value is refused, and nothing is mounted"
t_expect_fail mount -t raidfs -o degraded=maybe "$IMGS" "$M"
t_is_mounted "$M" && t_fail "mounted with degraded=maybe"

t_log "the helper's -f (fake) mounts nothing"
"$OURS" "$IMGS" "$M" -f -o rw 2>/dev/null || t_fail "mount.raidfs -f"
t_is_mounted "$M" && t_fail "mount.raidfs -f mounted"
# it says "would mount" only for what it could read, and names a member
# path that is not there (it said "would mount", then the syntax error;
# and nothing of a missing member: a tester's find)
printf 'array {\n  members = { "a" "b" }\n}\n' >"$T/syntax.conf"
rc=0
"$OURS" "$T/syntax.conf" "$M" -f >"$T/fake.out" 2>&1 || rc=$?
[ $rc -ne 0 ] || t_fail "mount.raidfs -f of a file with a syntax error: exit 0"
grep -q "would mount" "$T/fake.out" && t_fail "-f: $(cat "$T/fake.out")"
# a path that is not there: refused as a typo, as the mount would (-f
# said "would mount" and exited 0: a tester's find); with degraded=allow
# it would run degraded
rc=0
"$OURS" "$T/m0.img:$T/m1.img:$T/nosuch.img" "$M" -f >"$T/fake.out" 2>&1 || rc=$?
[ $rc -eq 32 ] || t_fail "mount.raidfs -f with a mistyped member: exit $rc"
grep -q "would mount" "$T/fake.out" && t_fail "-f: $(cat "$T/fake.out")"
grep -q "member $T/nosuch.img: No such file or directory: a mistyped path? the mount would be refused" "$T/fake.out" \
	|| t_fail "-f does not name the missing member: $(cat "$T/fake.out")"
"$OURS" "$T/m0.img:$T/m1.img:$T/nosuch.img" "$M" -f -o degraded=allow >"$T/fake.out" 2>&1 \
	|| t_fail "mount.raidfs -f with a member missing, degraded=allow"
grep -q "would mount" "$T/fake.out" || t_fail "-f: $(cat "$T/fake.out")"
grep -q "member $T/nosuch.img: No such file or directory: the mount would run without it" "$T/fake.out" \
	|| t_fail "-f, degraded=allow: $(cat "$T/fake.out")"
t_is_mounted "$M" && t_fail "mount.raidfs -f mounted"

t_log "fstab: configuration file as SOURCE, mount -T FILE DIR"
cat >"$T/data.conf" <<CONF
# array for the fstab test
array {
	members = { $(printf '"%s", ' "${IMG_LIST[@]}" | sed 's/, $//') }
}
options {
	cache_mb = 64
}
CONF
cat >"$T/fstab" <<FSTAB
# a private fstab
$T/data.conf $M raidfs defaults,nofail,x-systemd.automount,_netdev 0 0
FSTAB
mount -T "$T/fstab" "$M" 2>>"$T/daemon.log" || t_fail "mount -T fstab"
t_is_mounted "$M" || t_fail "fstab mount"
grep -q "^$T/data.conf $M fuse.raidfs " /proc/mounts || t_fail "source shown is not the config file"
[ "$(cat "$M/f")" = via-mount ] || t_fail "data via fstab"
echo via-fstab >"$M/g"
pid=$(t_daemon_pid "$M") || t_fail "no daemon"
T_PIDS+=("$pid")
wait_umounted "$pid"

t_log "fstab: noauto lines are left alone by mount -a, mounted by name"
cat >"$T/fstab2" <<FSTAB
$T/data.conf $M raidfs noauto,ro 0 0
FSTAB
mount -a -T "$T/fstab2" 2>>"$T/daemon.log" || t_fail "mount -a"
t_is_mounted "$M" && t_fail "mount -a mounted a noauto line"
mount -T "$T/fstab2" "$M" 2>>"$T/daemon.log" || t_fail "mount noauto line by name"
grep " $M " /proc/mounts | grep -q ' ro,' || t_fail "ro from fstab"
[ "$(cat "$M/g")" = via-fstab ] || t_fail "data after fstab remount"
pid=$(t_daemon_pid "$M") || t_fail "no daemon"
T_PIDS+=("$pid")
wait_umounted "$pid"

# A configuration file naming the array by uuid (as mkfs -C writes it),
# every member absent (external disks unplugged): with nofail, not
# mounted and exit 0, as with one member there (it exited 32: a tester's
# find); without nofail, 32
t_log "nofail: every member of a uuid configuration absent: exit 0"
uuid=$("$PY" - "${IMG_LIST[0]}" <<'PY'
import sys, uuid
with open(sys.argv[1], "rb") as f:
    sb = f.read(4096)
print(uuid.UUID(bytes=sb[40:56]))
PY
)
cat >"$T/gone.conf" <<CONF
array {
	uuid = "$uuid"
	members = { "$T/gone/m0.img", "$T/gone/m1.img", "$T/gone/m2.img" }
}
CONF
rc=0
"$RAIDFS_BIN/mount.raidfs" "$T/gone.conf" "$M" -o defaults,nofail >"$T/out" 2>&1 || rc=$?
[ "$rc" = 0 ] || t_fail "nofail, every member absent: exit $rc: $(cat "$T/out")"
grep -q "not mounted (nofail)" "$T/out" || t_fail "nofail: $(cat "$T/out")"
t_is_mounted "$M" && t_fail "mounted with no member"
rc=0
"$RAIDFS_BIN/mount.raidfs" "$T/gone.conf" "$M" -o defaults >"$T/out" 2>&1 || rc=$?
[ "$rc" = 32 ] || t_fail "no nofail, every member absent: exit $rc"
exit 0
