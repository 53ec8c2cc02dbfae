#!/bin/bash
# raidfsctl replace (md --replace): on a mounted RAID 5 of four images, slot
# 1 is replaced by a new image while a writer writes; status says
# "replacing" (the copy held back by the speed limit) and never degraded;
# the events name both devices.  Then the old image is zeroed and another
# member fails: every file still reads right (md5), so the new image holds
# real data.  Every refusal of replace, with its exit code, writes nothing.
# A new device that shrinks during the copy (its image truncated) fails:
# slot 2 keeps its device, the event says the new one failed.
. "$(dirname "$0")/lib.sh"
t_setup
. "$TESTS_DIR/ctl_lib.sh"

t_images 4 16M
t_images 1 16M new
t_images 2 16M x
t_mkfs 5 64K "$T/m0.img" "$T/m1.img" "$T/m2.img" "$T/m3.img"
t_mkfs 1 64K "$T/x0.img" "$T/x1.img"
M=$T/mnt
t_mount "$T/m0.img:$T/m1.img:$T/m2.img:$T/m3.img" "$M"
head -c 1M /dev/urandom >"$T/src"
for i in $(seq 4); do cp "$T/src" "$M/a$i" || t_fail "cp a$i"; done
sync -f "$M/a1"

t_log "refusals: usage, not mounted, no such member, too small, in use, foreign"
mkdir -p "$T/plain"
truncate -s 1M "$T/small.img"
new_sum=$(md5sum <"$T/new0.img")
expect_rc 2 "$CTL" replace "$M" 1
expect_rc 3 "$CTL" replace "$T/plain" 1 "$T/new0.img"
expect_rc 1 "$CTL" replace "$M" 7 "$T/new0.img"
grep -q "no such member" "$T/err" || t_fail "no such member: $(cat "$T/err")"
expect_rc 1 "$CTL" replace "$M" 1 "$T/nonexistent.img"
expect_rc 1 "$CTL" replace "$M" 1 "$T/small.img"
grep -q "too small" "$T/err" || t_fail "small device: $(cat "$T/err")"
expect_rc 1 "$CTL" replace "$M" 1 "$T/m2.img"
grep -Eq "in use|already a device" "$T/err" || t_fail "member as new: $(cat "$T/err")"
expect_rc 1 "$CTL" replace "$M" 1 "$T/x0.img"
grep -q "member of another raidfs array" "$T/err" || t_fail "foreign: $(cat "$T/err")"
[ "$(md5sum <"$T/new0.img")" = "$new_sum" ] || t_fail "a refusal wrote to new0.img"

t_log "replace slot 1 by new0.img under a writer: replacing -> clean"
# 2 MiB/s: about 20 s of copy, for the checks of its state and rate below
# (at 4 MiB/s the copy once ended before them, on a loaded machine)
"$CTL" set "$M" rebuild-speed-max=2M >/dev/null || t_fail "set"
( for i in $(seq 8); do cp "$T/src" "$M/w$i" || exit 1; done ) &
writer=$!
"$CTL" replace "$M" "$T/m1.img" "$T/new0.img" | grep -q "replacing slot 1" \
	|| t_fail "replace: $(cat "$T/out")"
wait_state replacing
validate
"$PY" -c '
import json, sys
a = json.load(open(sys.argv[1]))["arrays"][0]
assert a["replace"]["slot"] == 1 and a["replace"]["device"].endswith("new0.img"), a["replace"]
r = [d for d in a["devices"] if d["role"] == "replacement"]
assert r and r[0]["state"] == "replacing" and r[0]["slot"] == 1, a["devices"]
' "$T/status.json" || t_fail "replace in status --json: $(cat "$T/status.json")"
"$CTL" status "$M" | grep -q "replacing: slot 1 by .*new0.img" || t_fail "status text"
# its rate and time left, as a rebuild's (held at 2 MiB/s by the limit)
sleep 0.5
validate
"$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))["arrays"][0]["replace"]
assert r and 1 << 20 <= r["rate_bytes_per_s"] <= 64 << 20, r
assert r["seconds_left"] >= 0, r
' "$T/status.json" || t_fail "the replacement's rate: $(cat "$T/status.json")"
"$CTL" status "$M" | grep -q "replacing: slot 1 .* [0-9.]*[KMG]*i*B/s, [0-9]*:[0-9][0-9]:[0-9][0-9] left" \
	|| t_fail "status shows no replacement rate: $("$CTL" status "$M")"
expect_rc 1 "$CTL" replace "$M" 2 "$T/x1.img"
wait "$writer" || t_fail "the writer failed during the replacement"
"$CTL" set "$M" rebuild-speed-max=0 >/dev/null || t_fail "set"
wait_state clean
grep -qx degraded "$T/states" && t_fail "degraded during the replacement"
"$CTL" status "$M" | grep -Eq "^ +1  active .*new0.img" || t_fail "slot 1: $("$CTL" status "$M")"
"$CTL" events "$M" >"$T/events"
grep -q "ReplaceStarted slot=1 device=$T/new0.img.*replacing $T/m1.img" "$T/events" \
	|| t_fail "no ReplaceStarted: $(cat "$T/events")"
grep -q "ReplaceFinished slot=1 device=$T/new0.img.*took slot 1 from $T/m1.img" "$T/events" \
	|| t_fail "no ReplaceFinished: $(cat "$T/events")"

t_log "the new device shrinks during the copy: it fails, the slot keeps its device"
truncate -s 16M "$T/n2.img"
"$CTL" set "$M" rebuild-speed-max=128K >/dev/null || t_fail "set"
"$CTL" replace "$M" 2 "$T/n2.img" >/dev/null || t_fail "replace 2: $(cat "$T/out")"
wait_state replacing
sleep 0.5                       # its superblocks written, the copy begun
truncate -s 0 "$T/n2.img"      # what was copied so far is gone
"$CTL" set "$M" rebuild-speed-max=0 >/dev/null || t_fail "set"
wait_state clean
"$CTL" status "$M" | grep -Eq "^ +2  active .*/m2.img" || t_fail "slot 2: $("$CTL" status "$M")"
"$CTL" events "$M" >"$T/events"
grep -q "ReplaceFinished slot=2 device=$T/n2.img.*the new device failed" "$T/events" \
	|| t_fail "no failed ReplaceFinished for n2.img: $(cat "$T/events")"
grep -q "ReplaceFinished slot=2.*took slot" "$T/events" && t_fail "a shrunk target took slot 2"

t_log "a replacement cancelled by naming its new device (remove, as mdadm --fail of it)"
truncate -s 16M "$T/n3.img"
"$CTL" set "$M" rebuild-speed-max=128K >/dev/null || t_fail "set"
"$CTL" replace "$M" 2 "$T/n3.img" >/dev/null || t_fail "replace 2: $(cat "$T/out")"
wait_state replacing
"$CTL" remove "$M" "$T/n3.img" >"$T/out" 2>&1 ||
	t_fail "remove of the replacement's device: $(cat "$T/out")"
grep -q "replacement of slot 2 by .*n3.img cancelled" "$T/out" || t_fail "remove said: $(cat "$T/out")"
"$CTL" set "$M" rebuild-speed-max=0 >/dev/null || t_fail "set"
wait_state clean
"$CTL" status "$M" | grep -Eq "^ +2  active .*/m2.img" || t_fail "slot 2: $("$CTL" status "$M")"
"$CTL" status "$M" | grep -q "n3.img" && t_fail "n3.img still held: $("$CTL" status "$M")"
"$CTL" events "$M" >"$T/events"
grep -q "ReplaceFinished slot=2 device=$T/n3.img.*cancel" "$T/events" \
	|| t_fail "no cancelled ReplaceFinished for n3.img: $(cat "$T/events")"
expect_rc 1 "$CTL" remove "$M" "$T/n3.img"

t_log "a missing member cannot be replaced: use add"
"$CTL" fail "$M" 3 >/dev/null || t_fail "fail 3"
expect_rc 1 "$CTL" replace "$M" 3 "$T/x1.img"
grep -q "raidfsctl add" "$T/err" || t_fail "replace of a faulty slot: $(cat "$T/err")"
t_umount "$M"

t_log "old image zeroed, slot 3 failed: every file reads right from new0.img"
truncate -s 0 "$T/m1.img"
truncate -s 16M "$T/m1.img"
t_mount "$T/m0.img:$T/new0.img:$T/m2.img" "$M"
[ "$("$CTL" status "$M" | head -1)" = "$M: degraded" ] || t_fail "not degraded"
for f in a1 a2 a3 a4 w1 w2 w3 w4 w5 w6 w7 w8; do
	cmp -s "$T/src" "$M/$f" || t_fail "$f differs"
done
t_umount "$M"

t_log "a replacement cut short by kill -9: fsck -n tells it, the next mount finishes it"
truncate -s 16M "$T/y.img"
t_mount "$T/x0.img:$T/x1.img" "$M"
dd if="$T/src" of="$M/b1" bs=1M conv=fsync status=none
"$CTL" set "$M" rebuild-speed-max=1M rebuild-speed-min=1M >/dev/null || t_fail "set"
"$CTL" replace "$M" 1 "$T/y.img" >/dev/null || t_fail "replace onto y.img"
sleep 0.5
pid=${T_PID_OF[$M]}
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
unset "T_PID_OF[$M]"
umount "$M" || t_fail "umount of the dead mount"
"$RAIDFS_BIN/fsck.raidfs" -n "$T/x0.img:$T/x1.img:$T/y.img" >"$T/out" 2>&1 || true
grep -q "slot 1: an online replacement onto .*y.img was under way" "$T/out" ||
	{ cat "$T/out"; t_fail "fsck -n did not tell the replacement"; }
# a mount without the target says the replacement is cancelled (it was
# dropped in silence: a tester's find); read-only, it writes nothing
: >"$T/daemon.log"
t_mount "$T/x0.img:$T/x1.img" "$M" -o ro
grep -q "the online replacement of slot 1 .* is cancelled" "$T/daemon.log" ||
	t_fail "no word of the cancelled replacement: $(cat "$T/daemon.log")"
t_umount "$M"
t_mount "$T/x0.img:$T/x1.img:$T/y.img" "$M"
"$CTL" set "$M" rebuild-speed-max=0 rebuild-speed-min=0 >/dev/null || t_fail "set"
wait_state clean
"$CTL" status "$M" | grep -Eq "^ +1  active .*/y.img" || t_fail "slot 1 after the mount: $("$CTL" status "$M")"
cmp -s "$T/src" "$M/b1" || t_fail "b1 differs"
t_umount "$M"
exit 0
