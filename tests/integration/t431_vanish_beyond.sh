#!/bin/bash
# A member the array cannot run without goes away for two seconds while
# files are written and fsync'd: a RAID 5 of 3 with member 2 already
# missing loses member 1 (a cable, a controller reset), then gets it back.
# The array is suspended - every request fails, the member is not recorded
# faulty, nothing more is written - and after an unmount it mounts again
# with every file whose fsync returned, fsck -n finds nothing wrong, and a
# written file survives another remount.  Until 2026-12-06 the member was
# recorded faulty on the survivors and every later mount and fsck refused
# the array: beyond the redundancy for good (a tester's report).
. "$(dirname "$0")/lib.sh"
t_setup
. "$TESTS_DIR/ctl_lib.sh"
t_faultfs

for i in 0 1 2; do truncate -s 64M "$T/back/m$i.img"; done
t_mkfs 5 64K "$T/back/m0.img" "$T/back/m1.img" "$T/back/m2.img"
M=$T/mnt
# member 2 is not given: the array runs degraded from the start
SRC=$T/ff/m0.img:$T/ff/m1.img:$T/ff/gone.img
t_mount "$SRC" "$M"
head -c 192K /dev/urandom >"$T/src"
for i in $(seq 8); do
	dd if="$T/src" of="$M/old$i" bs=64K conv=fsync status=none || t_fail "old$i"
done

t_log "a writer fsyncs file after file; member 1 vanishes for 2 s"
: >"$T/acked"
(
	for i in $(seq 400); do
		dd if="$T/src" of="$M/new$i" bs=64K conv=fsync status=none 2>/dev/null || exit 0
		echo "new$i" >>"$T/acked"
	done
) &
wpid=$!
T_PIDS+=("$wpid")
for i in $(seq 100); do [ "$(wc -l <"$T/acked")" -ge 3 ] && break; sleep 0.05; done
echo "m1.img vanish" >"$T/ff/.faultctl"
sleep 2
echo "m1.img clear" >"$T/ff/.faultctl"
wait "$wpid"
n=$(wc -l <"$T/acked")
[ "$n" -ge 3 ] && [ "$n" -lt 400 ] || t_fail "the writer acknowledged $n files"

t_log "suspended, member 1 not faulty ($n files acknowledged)"
"$CTL" status --json "$M" >"$T/status.json" || t_fail "status"
"$PY" -c '
import json, sys
a = json.load(open(sys.argv[1]))["arrays"][0]
assert a["state"] == "suspended", a["state"]
assert a["suspended"]["slot"] == 1, a["suspended"]
assert a["suspended"]["device"].endswith("m1.img"), a["suspended"]
m1 = [d for d in a["devices"] if d["slot"] == 1]
assert m1 and m1[0]["state"] == "active", m1
' "$T/status.json" || t_fail "status: $(cat "$T/status.json")"
"$CTL" status "$M" | grep -q "SUSPENDED: slot 1" || t_fail "status text: $("$CTL" status "$M")"
"$CTL" events "$M" | grep -q "ArraySuspended" || t_fail "no ArraySuspended event: $("$CTL" events "$M")"
grep -q "SUSPENDED" "$T/daemon.log" || t_fail "the log does not say suspended"
# member changes are refused naming the member the array waits for, not
# the device named (it failed with EIO "new.img: Input/output error")
truncate -s 64M "$T/new.img"
refused() {     # refused CMD [ARGS...]: raidfsctl CMD $M ARGS... refused so
	local rc=0
	"$CTL" "$1" "$M" "${@:2}" >"$T/ctl.out" 2>&1 || rc=$?
	[ "$rc" -ne 0 ] || t_fail "raidfsctl $* on a suspended array succeeded"
	grep -q "the array is suspended (slot 1, .*m1.img" "$T/ctl.out" ||
		t_fail "raidfsctl $*: $(cat "$T/ctl.out")"
}
refused add "$T/new.img"
refused replace 2 "$T/new.img"
refused fail 2
refused clear
# a new file cannot be written, and the array is not read any more
if dd if="$T/src" of="$M/after" bs=64K conv=fsync status=none 2>/dev/null; then
	t_fail "a write to a suspended array succeeded"
fi

t_log "unmounted: nothing written; mounted again, every acknowledged file"
pid=${T_PID_OF[$M]}
t_umount_idle "$M" || t_fail "umount"
rc=0
wait "$pid" || rc=$?
[ "$rc" -ne 0 ] || t_fail "the daemon of a suspended array exited 0"
unset "T_PID_OF[$M]"
grep -q "suspended" "$T/daemon.log" || t_fail "the unmount does not say suspended"
t_mount "$SRC" "$M"
for i in $(seq 8); do cmp -s "$T/src" "$M/old$i" || t_fail "old$i differs"; done
while read -r f; do
	cmp -s "$T/src" "$M/$f" || t_fail "$f (fsync returned) differs or is gone"
done <"$T/acked"
"$CTL" status --json "$M" | "$PY" -c '
import json, sys
a = json.load(sys.stdin)["arrays"][0]
assert a["state"] == "degraded", a["state"]
assert a["suspended"] is None, a["suspended"]
' || t_fail "not degraded after the remount: $("$CTL" status "$M")"
dd if="$T/src" of="$M/later" bs=64K conv=fsync status=none || t_fail "write after remount"
t_umount "$M"

t_log "fsck -n: clean; mounted again: the files are there"
rc=0
"$RAIDFS_BIN/fsck.raidfs" -n -f "$SRC" >"$T/fsck.out" 2>&1 || rc=$?
# 4: degraded (member 2 is missing), nothing else
[ "$rc" -eq 4 ] && grep -q " 0 checksum errors, 0 read errors," "$T/fsck.out" &&
	grep -q "reached; 0 problems" "$T/fsck.out" && grep -q "no data lost" "$T/fsck.out" ||
	t_fail "fsck -n (exit $rc): $(cat "$T/fsck.out")"
t_mount "$SRC" "$M"
cmp -s "$T/src" "$M/later" || t_fail "later differs"
while read -r f; do cmp -s "$T/src" "$M/$f" || t_fail "$f differs"; done <"$T/acked"
t_umount "$M"

t_log "a mount while member 1's writes fail: refused (exit 32), said why"
echo "m1.img eio-write 0 1G" >"$T/ff/.faultctl"
rc=0
t_try_mount "$SRC" "$M" || rc=$?
[ "$rc" -eq 32 ] || t_fail "mount with member 1 failing writes: exit $rc, want 32"
grep -q "suspended while it was opened" "$T/daemon.log" ||
	t_fail "the refusal does not say the array was suspended"
echo "m1.img clear" >"$T/ff/.faultctl"
t_mount "$SRC" "$M"
cmp -s "$T/src" "$M/later" || t_fail "later differs after the refused mount"
t_umount "$M"
