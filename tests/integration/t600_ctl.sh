#!/bin/bash
# raidfsctl against a live mount: with a spare given at mkfs, a member
# failed by `raidfsctl fail` while a writer runs is rebuilt onto the spare
# (status: rebuilding -> clean); a second failure with no spare left stays
# degraded until `remove` + `add` of a new device, rebuilt at once; every
# file is intact and the array survives losing another member afterwards
# (and says DegradedArray when mounted so); a former member added back
# catches up on what was written while it was away, and a catch-up
# interrupted by umount resumes from its checkpoint.  A stopped daemon
# makes raidfsctl exit 5, not hang.
# An online scrub finds and repairs bit rot put on a member, is stopped and
# resumed.  The events reach the configured program in order, also past a program
# that hangs (killed at its timeout, I/O unaffected); `events -f` follows;
# status --json validates against docs/raidfsctl-status.schema.json; every
# command's error cases give their documented exit codes.
. "$(dirname "$0")/lib.sh"
t_setup

. "$TESTS_DIR/ctl_lib.sh"

t_images 5 24M
t_mkfs 5 64K -s "$T/m3.img" "$T/m0.img" "$T/m1.img" "$T/m2.img"
# the alert program: one line per event; a TestMessage while $T/hang
# exists hangs
printf '%s\n' '#!/bin/sh' \
	"[ \"\$RAIDFS_EVENT\" = TestMessage ] && [ -e '$T/hang' ] && { rm -f '$T/hang'; exec sleep 60; }" \
	"echo \"\$1 \$RAIDFS_SLOT \$RAIDFS_PROGRESS \$2\" >>'$T/alerts'" >"$T/alert.sh"
chmod +x "$T/alert.sh"
M=$T/mnt
t_mount "$T/m0.img:$T/m1.img:$T/m2.img:$T/m3.img" "$M" \
	-o "program=$T/alert.sh,program_timeout=1"

t_log "status: clean, every member and the spare; JSON validates"
"$CTL" status "$M" >"$T/out" || t_fail "status"
grep -q "^$M: clean" "$T/out" || t_fail "status: $(cat "$T/out")"
grep -q "spare .*m3.img" "$T/out" || t_fail "status shows no spare: $(cat "$T/out")"
"$CTL" status | grep -q "^$M: clean" || t_fail "status without argument misses $M"
"$CTL" status -v "$M" | grep -q "errors seen: no" || t_fail "status -v"
validate
uuid=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["arrays"][0]["uuid"])' "$T/status.json")
"$CTL" status "$uuid" | grep -q "^$M: clean" || t_fail "status by uuid"

t_log "error cases and exit codes"
mkdir -p "$T/plain"
expect_rc 2 "$CTL"
expect_rc 2 "$CTL" frobnicate "$M"
expect_rc 2 "$CTL" fail "$M"
expect_rc 2 "$CTL" add "$M"
expect_rc 2 "$CTL" set "$M" speed=1
expect_rc 3 "$CTL" status "$T/plain"
grep -q "not a mounted raidfs" "$T/err" || t_fail "not mounted: $(cat "$T/err")"
expect_rc 3 "$CTL" fail "$T/plain" 1
# a path that does not exist (LeakSanitizer: the mount table was not freed)
expect_rc 3 "$CTL" status "$T/no-such-dir"
grep -q Sanitizer "$T/err" && t_fail "status of a path that does not exist: $(cat "$T/err")"
expect_rc 3 "$CTL" status 01234567-89ab-cdef-0123-456789abcdef
expect_rc 1 "$CTL" fail "$M" 7
grep -q "no such member" "$T/err" || t_fail "no such member: $(cat "$T/err")"
expect_rc 1 "$CTL" fail "$M" "$T/m4.img"
expect_rc 1 "$CTL" remove "$M" 0
grep -q "in use: fail it first" "$T/err" || t_fail "remove active: $(cat "$T/err")"
expect_rc 1 "$CTL" fail "$M" 3
grep -q "spare" "$T/err" || t_fail "fail a spare: $(cat "$T/err")"
expect_rc 1 "$CTL" add "$M" "$T/nonexistent.img"
expect_rc 1 "$CTL" add "$M" "$T/m1.img"
expect_rc 1 "$CTL" set "$M" rebuild-speed-min=2M rebuild-speed-max=1M
truncate -s 1M "$T/small.img"
expect_rc 1 "$CTL" add "$M" "$T/small.img"
grep -q "too small" "$T/err" || t_fail "small device: $(cat "$T/err")"
# a device on the array's own filesystem (its writes would come back
# through the mount: the daemon hung, unkillable, before it was refused)
truncate -s 24M "$M/self.img"
ln -s "$M/self.img" "$T/self-link.img"
expect_rc 1 timeout 30 "$CTL" add "$M" "$M/self.img"
grep -q "on this array's own filesystem" "$T/err" || t_fail "add onto itself: $(cat "$T/err")"
expect_rc 1 timeout 30 "$CTL" replace "$M" 1 "$T/self-link.img"
grep -q "on this array's own filesystem" "$T/err" || t_fail "replace onto itself: $(cat "$T/err")"
# a loop device over that file: its fsync came back as a FUSE FSYNC to
# the daemon that waited on it, which hung (a tester's find)
if l=$(losetup -f --show "$M/self.img" 2>/dev/null); then
	T_LOOPS+=("$l")
	expect_rc 1 timeout 30 "$CTL" add "$M" "$l"
	grep -q "on this array's own filesystem" "$T/err" || t_fail "add of a loop device over itself: $(cat "$T/err")"
	losetup -d "$l"
	T_LOOPS=()
fi
rm "$M/self.img" "$T/self-link.img"
mkfs.ext4 -q -F "$T/small.img" >/dev/null 2>&1 || t_fail "mkfs.ext4"
truncate -s 24M "$T/small.img"
expect_rc 1 "$CTL" add "$M" "$T/small.img"
grep -q "wipe it first" "$T/err" || t_fail "ext4 device: $(cat "$T/err")"
for cmd in status fail events test-alert; do
	args=("$M")
	[ $cmd = fail ] && args+=(1)
	expect_rc 4 setpriv --reuid=nobody --regid=nogroup --clear-groups "$CTL" $cmd "${args[@]}"
	grep -q "permission denied" "$T/err" || t_fail "$cmd as nobody: $(cat "$T/err")"
done
expect_rc 4 setpriv --reuid=nobody --regid=nogroup --clear-groups "$CTL" status

t_log "scrub online: bit rot on a member found and repaired; stop, resume"
expect_rc 2 "$CTL" scrub frob "$M"
expect_rc 1 "$CTL" scrub stop "$M"
"$PY" -c '
import os, sys
with open(sys.argv[1], "wb") as f:
    f.write(b"".join((b"ROT%013d" % i).ljust(4096, b"x") for i in range(64)))
    f.flush()
    os.fsync(f.fileno())
' "$M/rot"
cp "$M/rot" "$T/rot.ref"
# the last copy of block 5 on the members is in a data region (the
# journal, which also holds it, comes first on every member)
"$PY" -c '
import mmap, re, sys
hits = []
for p in sys.argv[1:]:
    with open(p, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        hits += [(mo.start(), p) for mo in re.finditer(b"ROT0000000000005", m)]
off, p = max(hits)
with open(p, "r+b") as f:
    f.seek(off + 100)
    f.write(b"\xff")
' "$T/m0.img" "$T/m1.img" "$T/m2.img" || t_fail "no copy of the block to damage"
"$CTL" set "$M" rebuild-speed-max=6M >/dev/null || t_fail "set"
"$CTL" scrub start "$M" | grep -q "scrub started" || t_fail "scrub start"
expect_rc 1 "$CTL" scrub start "$M"
[ "$(state)" = scrubbing ] || t_fail "state while scrubbing: $(state)"
sleep 0.3
"$CTL" scrub stop "$M" | grep -q "scrub stopped at stripe" || t_fail "scrub stop"
"$CTL" scrub status "$M" | grep -q "scrub: stopped" || t_fail "scrub status after stop"
"$CTL" set "$M" rebuild-speed-max=0 >/dev/null || t_fail "set"
"$CTL" scrub start "$M" | grep -q "scrub resumed at stripe [1-9]" || t_fail "scrub did not resume"
for i in $(seq 200); do "$CTL" scrub status "$M" | grep -q "^  scrub: finished" && break; sleep 0.1; done
"$CTL" scrub status "$M" | grep -q "^  scrub: finished.* 1 checksum errors, 0 read errors, 1 repaired, 0 unrecoverable" \
	|| t_fail "scrub: $("$CTL" scrub status "$M")"
validate
"$PY" -c '
import json, sys
a = json.load(open(sys.argv[1]))["arrays"][0]
assert sum(d["errors"]["cksum"] for d in a["devices"]) == 1, a["devices"]
assert a["scrub"]["report"]["repaired"] == 1
last = a["scrub"]["last"]
assert last["repaired"] == 1 and last["checksum_errors"] == 1, last
assert last["stripes"] == a["scrub"]["total_stripes"], last
assert 0 < last["started_ns"] <= last["ended_ns"], last
' "$T/status.json" || t_fail "CKSUM counter or JSON report"
"$CTL" status "$M" | grep -q "last scrub: finished .* 1 checksum errors, 0 read errors, 1 repaired, 0 unrecoverable" \
	|| t_fail "status shows no last scrub: $("$CTL" status "$M")"
cmp -s "$T/rot.ref" "$M/rot" || t_fail "the damaged file reads differently"

t_log "fail slot 1 under a writer: the spare is rebuilt (rebuilding -> clean)"
head -c 1M /dev/urandom >"$T/src"
"$CTL" set "$M" rebuild-speed-max=16M >/dev/null || t_fail "set"
( for i in $(seq 24); do cp "$T/src" "$M/w$i" || exit 1; done ) &
writer=$!
sleep 0.2
"$CTL" fail "$M" 1 >/dev/null || t_fail "fail 1"
wait_state rebuilding
validate
tr -d ' \n' <"$T/status.json" | grep -q '"rebuild":{' || t_fail "rebuilding, but no rebuild object"
wait "$writer" || t_fail "the writer failed during the rebuild"
wait_state clean

t_log "fail slot 2 with no spare: degraded; remove, add a new device: rebuilt"
"$CTL" fail "$M" "$T/m2.img" >/dev/null || t_fail "fail m2"
wait_state degraded
validate
sleep 0.3
[ "$(state)" = degraded ] || t_fail "not degraded without a spare"
expect_rc 1 "$CTL" fail "$M" 0
grep -q "cannot run without it" "$T/err" || t_fail "fail beyond redundancy: $(cat "$T/err")"
"$CTL" remove "$M" 2 >/dev/null || t_fail "remove 2"
"$CTL" status "$M" | grep -q " 2  missing" || t_fail "slot 2 not missing after remove"
"$CTL" add "$M" "$T/m4.img" >"$T/out" || t_fail "add m4"
grep -q "m4.img added: rebuilding onto it" "$T/out" || t_fail "add m4: $(cat "$T/out")"
wait_state rebuilding
wait_state clean
"$CTL" status "$M" | grep -q "m4.img" || t_fail "m4 not in the array"

t_log "the events, in order, in the history and at the program"
"$CTL" test-alert "$M" >/dev/null || t_fail "test-alert"
for i in $(seq 100); do grep -q "^TestMessage" "$T/alerts" 2>/dev/null && break; sleep 0.1; done
"$CTL" events "$M" >"$T/events" || t_fail "events"
want="ScrubFinished ChecksumRepaired Fail DegradedArray DeviceRemoved SpareActive RebuildStarted RebuildProgress RebuildFinished \
Fail DegradedArray DeviceRemoved SpareAdded SpareActive RebuildStarted RebuildProgress \
RebuildFinished TestMessage "
# RebuildProgress comes once per 20 % step: folded to one for the comparison
got=$(awk '{sub(/:$/, "", $2); print $2}' "$T/events" | uniq | tr '\n' ' ')
[ "$got" = "$want" ] || t_fail "history: $got"
got=$(awk '{print $1}' "$T/alerts" | uniq | tr '\n' ' ')
[ "$got" = "$want" ] || t_fail "program saw: $got"
[ "$(grep -c '^RebuildProgress' "$T/alerts")" -ge 6 ] || t_fail "fewer than 3 progress steps per rebuild"
grep -q "^Fail 1  $M\$" "$T/alerts" || t_fail "Fail without slot or mount point: $(head -1 "$T/alerts")"
grep -q "^RebuildProgress 2 40 $M\$" "$T/alerts" || t_fail "no RebuildProgress 40 for slot 2"
# every event says what happened (these three said nothing before)
grep -q "^[^ ]* RebuildProgress .*: slot 2: [0-9]* of [0-9]* stripes rebuilt" "$T/events" ||
	t_fail "RebuildProgress without its message: $(grep RebuildProgress "$T/events" | head -1)"
grep -q "^[^ ]* DeviceRemoved .*: taken out of slot 2" "$T/events" ||
	t_fail "DeviceRemoved without its message: $(grep DeviceRemoved "$T/events")"
grep -q "^[^ ]* SpareAdded .*: a spare" "$T/events" ||
	t_fail "SpareAdded without its message: $(grep SpareAdded "$T/events")"

t_log "a hanging program is killed at its timeout; I/O goes on meanwhile"
"$CTL" events -f "$M" >"$T/follow" 2>&1 &
follower=$!
touch "$T/hang"
"$CTL" test-alert "$M" >/dev/null || t_fail "test-alert (hang)"
sleep 0.3
start=$(date +%s%N)
cp "$T/src" "$M/during-hang" && sync -f "$M/during-hang"
[ $(( ($(date +%s%N) - start) / 1000000 )) -lt 1500 ] || t_fail "I/O waited for the alert program"
"$CTL" test-alert "$M" >/dev/null || t_fail "test-alert (after)"
for i in $(seq 100); do [ "$(grep -c '^TestMessage' "$T/alerts")" -ge 2 ] && break; sleep 0.1; done
[ "$(grep -c '^TestMessage' "$T/alerts")" -eq 2 ] || t_fail "the event after a hung program did not arrive"
grep -q "still running after 1 s: killed" "$T/daemon.log" || t_fail "no log of the killed program"
[ "$(grep -c TestMessage "$T/follow")" -ge 3 ] || t_fail "events -f: $(cat "$T/follow")"

t_log "every file intact; clear; unmount (events -f ends with it)"
for i in $(seq 24); do cmp -s "$T/src" "$M/w$i" || t_fail "w$i differs"; done
cmp -s "$T/src" "$M/during-hang" || t_fail "during-hang differs"
"$CTL" clear "$M" >/dev/null || t_fail "clear"
t_umount "$M"
for i in $(seq 100); do t_pid_alive "$follower" || break; sleep 0.1; done
t_pid_alive "$follower" && t_fail "events -f still running after umount"
wait "$follower" || t_fail "events -f failed at umount: $(cat "$T/follow")"
expect_rc 3 "$CTL" status "$M"

t_log "remounted from m3 (the spare) and m4 (added) alone: intact, degraded, told"
: >"$T/alerts"
t_mount "$T/m3.img:$T/m4.img" "$M" -o "program=$T/alert.sh"
for i in $(seq 24); do cmp -s "$T/src" "$M/w$i" || t_fail "w$i differs without m0"; done
[ "$("$CTL" status "$M" | head -1)" = "$M: degraded" ] || t_fail "not degraded without m0"
"$CTL" events "$M" | head -1 | grep -q "DegradedArray: assembled with members missing" \
	|| t_fail "no DegradedArray for a degraded assembly: $("$CTL" events "$M")"
for i in $(seq 100); do [ -s "$T/alerts" ] && break; sleep 0.1; done
[ "$(awk '{print $1}' "$T/alerts")" = DegradedArray ] || t_fail "program saw: $(cat "$T/alerts")"
# the last scrub and the speed limit are kept on the members (m3 was the
# spare then, m4 came later: both were given them)
"$CTL" status "$M" | grep -q "last scrub: finished .* 1 repaired, 0 unrecoverable" \
	|| t_fail "the last scrub was forgotten: $("$CTL" status "$M")"
validate
"$PY" -c '
import json, sys
a = json.load(open(sys.argv[1]))["arrays"][0]
assert a["scrub"]["state"] == "none" and a["scrub"]["last"]["repaired"] == 1, a["scrub"]
assert a["rebuild_speed"]["max_kib_per_s"] == 16384, a["rebuild_speed"]
' "$T/status.json" || t_fail "last scrub or speed limit after remount"
head -c 4M /dev/urandom >"$M/while-m0-away" || t_fail "write while m0 is away"
sync -f "$M/while-m0-away"                      # for m0 to catch up on
cp "$M/while-m0-away" "$T/away.ref"

# (issue 9: m0 is taken back and catches up, no longer rebuilt in full)
t_log "m0 back (MemberReturned), catching up; unmounted mid-way, it resumes"
# 256 KiB/s: about 8 s for the one region (2 MiB) written while m0 was
# away, so that the catch-up is still under way after the remount on a
# loaded machine (at 1 MiB/s it was through before status was asked)
"$CTL" set "$M" rebuild-speed-max=256K >/dev/null || t_fail "set"
"$CTL" add "$M" "$T/m0.img" >/dev/null || t_fail "add m0 back"
wait_state rebuilding
"$CTL" events "$M" | grep -q "MemberReturned .*device=$T/m0.img" || t_fail "no MemberReturned"
sleep 1.5
t_umount "$M"
t_mount "$T/m0.img:$T/m3.img:$T/m4.img" "$M"
# the limit (kept) holds the resumed rebuild: seen at its checkpoint
"$CTL" status --json "$M" >"$T/status.json"
"$PY" -c '
import json, sys
a = json.load(open(sys.argv[1]))["arrays"][0]
assert a["rebuild_speed"]["max_kib_per_s"] == 256, a["rebuild_speed"]
r = a["rebuild"]
assert r and 0 < r["done_stripes"] < r["total_stripes"], r
' "$T/status.json" || t_fail "not resumed from a checkpoint: $(cat "$T/status.json")"
"$CTL" set "$M" rebuild-speed-max=0 >/dev/null || t_fail "set"
wait_state clean
"$CTL" events "$M" >"$T/events"
grep -q "RebuildStarted slot=0 .*: resumed from its checkpoint" "$T/events" \
	|| t_fail "the rebuild did not resume: $(cat "$T/events")"
grep -q "RebuildStarted .*progress=0:" "$T/events" && t_fail "resumed from 0: $(cat "$T/events")"
for i in $(seq 24); do cmp -s "$T/src" "$M/w$i" || t_fail "w$i differs after the resumed rebuild"; done
cmp -s "$T/away.ref" "$M/while-m0-away" || t_fail "the file written while m0 was away differs"
grep -q "RebuildFinished slot=0 .*catch-up: [1-9][0-9]* regions" "$T/events" || \
	"$CTL" events "$M" | grep -q "RebuildFinished slot=0 .*catch-up: [1-9][0-9]* regions" || \
	t_fail "no catch-up counted: $("$CTL" events "$M")"

t_log "a scrub running at unmount goes on at the next mount, from where it was"
# 2 MiB/s: 12 s for the members' 24 MiB, long enough on a loaded machine
"$CTL" set "$M" rebuild-speed-max=2M >/dev/null || t_fail "set"
"$CTL" scrub start "$M" >/dev/null || t_fail "scrub start"
sleep 0.6
"$CTL" scrub status "$M" | grep -q "scrub: running" || t_fail "scrub: $("$CTL" scrub status "$M")"
# its rate and time left, as a rebuild's (held at 2 MiB/s by the limit)
validate
"$PY" -c '
import json, sys
sc = json.load(open(sys.argv[1]))["arrays"][0]["scrub"]
assert sc["state"] == "running", sc
assert 1 << 20 <= sc["rate_bytes_per_s"] <= 64 << 20, sc
assert sc["seconds_left"] > 0, sc
' "$T/status.json" || t_fail "a running scrub's rate: $(cat "$T/status.json")"
"$CTL" status "$M" | grep -q "^  scrub rate: [0-9.]* MiB/s, [0-9]*:[0-9][0-9]:[0-9][0-9] left" \
	|| t_fail "status shows no scrub rate: $("$CTL" status "$M")"
t_umount "$M"
t_mount "$T/m0.img:$T/m3.img:$T/m4.img" "$M"
grep -q "the scrub running at the last unmount: scrub resumed at stripe [1-9]" "$T/daemon.log" \
	|| t_fail "the scrub did not go on: $(grep -i scrub "$T/daemon.log")"
"$CTL" set "$M" rebuild-speed-max=0 >/dev/null || t_fail "set"
for i in $(seq 200); do "$CTL" scrub status "$M" | grep -q "^  scrub: finished" && break; sleep 0.1; done
validate
"$PY" -c '
import json, sys
sc = json.load(open(sys.argv[1]))["arrays"][0]["scrub"]
assert sc["state"] == "finished", sc
# the counts of both mounts: every stripe once
assert sc["report"]["stripes"] == sc["total_stripes"] == sc["last"]["stripes"], sc
assert sc["last"]["repaired"] == 0, sc
' "$T/status.json" || t_fail "the resumed scrub: $(cat "$T/status.json")"
# one stopped by `scrub stop` waits, across a remount, for `scrub start`
"$CTL" set "$M" rebuild-speed-max=2M >/dev/null || t_fail "set"
"$CTL" scrub start "$M" >/dev/null || t_fail "scrub start"
sleep 0.4
"$CTL" scrub stop "$M" >/dev/null || t_fail "scrub stop"
t_umount "$M"
t_mount "$T/m0.img:$T/m3.img:$T/m4.img" "$M"
sleep 0.3
"$CTL" scrub status "$M" | grep -q "^  scrub: stopped, [1-9][0-9]*/" \
	|| t_fail "stopped scrub after remount: $("$CTL" scrub status "$M")"
"$CTL" set "$M" rebuild-speed-max=0 >/dev/null || t_fail "set"
"$CTL" scrub start "$M" | grep -q "scrub resumed at stripe [1-9]" || t_fail "scrub did not resume"
for i in $(seq 200); do "$CTL" scrub status "$M" | grep -q "^  scrub: finished" && break; sleep 0.1; done
"$CTL" scrub status "$M" | grep -q "^  scrub: finished" || t_fail "the resumed scrub did not finish"

t_log "more events than the history keeps: the last 1024 stream out, in order"
uuid=$("$CTL" status --json "$M" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["arrays"][0]["uuid"])')
"$PY" -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
for i in range(1100):
    s.send(json.dumps({"proto": 1, "cmd": "test-alert"}).encode())
    assert json.loads(s.recv(65536))["errno"] == 0
' "/run/raidfs/$uuid.sock" || t_fail "1100 test-alerts over one connection"
# (the events thread names them after the replies: under load it lags,
# 847 of 1100 after 10 s once, at a load of 6 on 2 CPUs)
for i in $(seq 600); do
	"$CTL" events --json "$M" >"$T/events.json" || t_fail "events after 1100 more"
	[ "$(wc -l <"$T/events.json")" -ge 1024 ] && break
	sleep 0.1
done
"$PY" -c '
import json, sys
seqs = [json.loads(l)["seq"] for l in open(sys.argv[1])]
assert len(seqs) == 1024, len(seqs)
assert seqs == list(range(seqs[0], seqs[0] + 1024)), "not in order"
' "$T/events.json" || t_fail "history: $(wc -l <"$T/events.json") events"
t_umount "$M"

# A stopped daemon (or one stuck in I/O) never answers: raidfsctl by
# mount point asked it whom it serves without a limit and hung, with
# every other command naming a mount point (a tester's find)
t_log "the daemon stopped: raidfsctl says it does not answer (exit 5), no hang"
t_mount "$T/m0.img:$T/m3.img:$T/m4.img" "$M"
pid=${T_PID_OF[$M]}
kill -STOP "$pid"
start=$SECONDS
rc=0
timeout 20 "$CTL" status "$M" >"$T/out" 2>"$T/err" || rc=$?
kill -CONT "$pid"
[ "$rc" = 5 ] || t_fail "status of a stopped daemon's mount: exit $rc, $(cat "$T/err")"
[ $((SECONDS - start)) -lt 15 ] || t_fail "status took $((SECONDS - start)) s"
grep -q "did not answer within 2 s" "$T/err" || t_fail "status: $(cat "$T/err")"
"$CTL" status "$M" >"$T/out" || t_fail "status once it goes on: $(cat "$T/out")"
t_umount "$M"

t_log "the daemon killed: raidfsctl and a new mount say the mount is dead"
t_mount "$T/m0.img:$T/m3.img:$T/m4.img" "$M"
pid=${T_PID_OF[$M]}
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
unset "T_PID_OF[$M]"
for args in "status $M" "status $M/" "status $M/sub" "status" "scrub start $M"; do
	expect_rc 5 "$CTL" $args
	grep -q "^raidfsctl: $M: mounted, but the raidfs daemon that served it is gone" "$T/err" ||
		t_fail "raidfsctl $args on a dead mount: $(cat "$T/err")"
done
expect_rc 32 "$RAIDFS" "$T/m0.img:$T/m3.img:$T/m4.img" "$M"
grep -q "unmount it first" "$T/err" || t_fail "mount on a dead mount: $(cat "$T/err")"
umount "$M" || t_fail "umount of the dead mount"
t_mount "$T/m0.img:$T/m3.img:$T/m4.img" "$M"
"$CTL" status "$M" >"$T/out" || t_fail "status after the remount: $(cat "$T/out")"
t_umount "$M"
exit 0
