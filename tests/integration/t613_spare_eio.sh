#!/bin/bash
# Issue 9's first test, with the fault backend: a RAID 5 with a spare on
# faultfs; while three processes write files and two read back files
# written before, every read and write of member 1 starts failing with EIO
# (a disk that died under load). The daemon takes it out (Fail), the spare
# takes over automatically (SpareActive) and is rebuilt: status moves
# degraded -> rebuilding -> clean, the events come in that order in the
# history and at the alert program, no reader ever sees a wrong byte or
# an error, every writer finishes, and every file is intact - also after
# a remount without the dead member, which shows the spare holds real data.
. "$(dirname "$0")/lib.sh"
t_setup
. "$TESTS_DIR/ctl_lib.sh"
t_faultfs

for i in 0 1 2 3 4; do truncate -s 32M "$T/back/m$i.img"; done
t_mkfs 5 64K -s "$T/back/m4.img" "$T/back/m0.img" "$T/back/m1.img" \
	"$T/back/m2.img" "$T/back/m3.img"
printf '%s\n' '#!/bin/sh' "echo \"\$RAIDFS_EVENT \$RAIDFS_SLOT\" >>'$T/alerts'" >"$T/alert.sh"
chmod +x "$T/alert.sh"
M=$T/mnt
SRC=$T/ff/m0.img:$T/ff/m1.img:$T/ff/m2.img:$T/ff/m3.img:$T/ff/m4.img
t_mount "$SRC" "$M" -o "program=$T/alert.sh"
head -c 256K /dev/urandom >"$T/src"
for i in $(seq 16); do cp "$T/src" "$M/old$i"; done
sync -f "$M/old1"
"$CTL" set "$M" rebuild-speed-max=8M >/dev/null || t_fail "set"
[ "$(state)" = clean ] || t_fail "not clean at the start: $(state)"

t_log "3 writers and 2 readers; member 1 fails every read and write"
pids=()
for w in 1 2 3; do
	( for i in $(seq 12); do cp "$T/src" "$M/new$w-$i" || exit 1; done ) &
	pids+=($!)
done
for r in 1 2; do
	( for k in 1 2 3; do
		for i in $(seq 16); do
			cmp -s "$T/src" "$M/old$i" || { echo "reader $r: old$i"; exit 1; }
		done
	  done ) &
	pids+=($!)
done
sleep 0.3
echo "m1.img eio-read 0 1G" >"$T/ff/.faultctl"
echo "m1.img eio-write 0 1G" >"$T/ff/.faultctl"
for p in "${pids[@]}"; do wait "$p" || t_fail "a reader or writer failed (pid $p)"; done
sync -f "$M/old1"                 # a write to every member: m1's fails
wait_state rebuilding
validate
wait_state clean
grep -qx degraded "$T/states" || "$CTL" events "$M" | grep -q "DegradedArray" \
	|| t_fail "never degraded: $(cat "$T/states")"
"$CTL" status "$M" | grep -q "m4.img" || t_fail "the spare is not in the array: $("$CTL" status "$M")"
"$CTL" status --json "$M" >"$T/status.json"
"$PY" -c '
import json, sys
a = json.load(open(sys.argv[1]))["arrays"][0]
assert a["state"] == "clean", a["state"]
slot1 = [d for d in a["devices"] if d["slot"] == 1 and d["role"] == "member"]
assert slot1 and slot1[0]["device"].endswith("m4.img"), slot1
' "$T/status.json" || t_fail "slot 1 is not the former spare: $(cat "$T/status.json")"

t_log "the events, in order, in the history and at the program"
"$CTL" events "$M" >"$T/events" || t_fail "events"
want="Fail DegradedArray DeviceRemoved SpareActive RebuildStarted RebuildProgress RebuildFinished "
got=$(awk '{sub(/:$/, "", $2); print $2}' "$T/events" | uniq | tr '\n' ' ')
[ "$got" = "$want" ] || t_fail "history: $got ($(cat "$T/events"))"
for i in $(seq 100); do grep -q "^RebuildFinished" "$T/alerts" 2>/dev/null && break; sleep 0.1; done
got=$(awk '{print $1}' "$T/alerts" | uniq | tr '\n' ' ')
[ "$got" = "$want" ] || t_fail "program saw: $got"
grep -q "^Fail 1\$" "$T/alerts" || t_fail "Fail does not name slot 1: $(cat "$T/alerts")"
grep -q "member 1 .*m1.img" "$T/daemon.log" || t_fail "the log does not name m1"

t_log "every file intact, also without member 1 after a remount"
for i in $(seq 16); do cmp -s "$T/src" "$M/old$i" || t_fail "old$i differs"; done
for w in 1 2 3; do for i in $(seq 12); do
	cmp -s "$T/src" "$M/new$w-$i" || t_fail "new$w-$i differs"
done; done
t_umount "$M"
echo "m1.img clear" >"$T/ff/.faultctl"
t_mount "$T/ff/m0.img:$T/ff/m2.img:$T/ff/m3.img:$T/ff/m4.img" "$M" -o ro
[ "$(state)" = clean ] || t_fail "the array without m1 is $(state)"
for i in $(seq 16); do cmp -s "$T/src" "$M/old$i" || t_fail "old$i differs after the remount"; done
for w in 1 2 3; do for i in $(seq 12); do
	cmp -s "$T/src" "$M/new$w-$i" || t_fail "new$w-$i differs after the remount"
done; done
t_umount "$M"

t_log "a device that fails a write while rebuilt onto is faulty, not rebuilding for good"
t_mount "$T/ff/m0.img:$T/ff/m2.img:$T/ff/m3.img:$T/ff/m4.img" "$M"
"$CTL" fail "$M" 2 >/dev/null || t_fail "fail 2"
"$CTL" remove "$M" 2 >/dev/null || t_fail "remove 2"
truncate -s 32M "$T/back/new.img"
echo "new.img eio-write 12M 1M" >"$T/ff/.faultctl"
"$CTL" add "$M" "$T/ff/new.img" >/dev/null || t_fail "add new.img"
for i in $(seq 100); do
	"$CTL" events "$M" | grep -q "Fail slot=2 device=$T/ff/new.img" && break
	sleep 0.1
done
"$CTL" events "$M" | grep -q "Fail slot=2 device=$T/ff/new.img" ||
	t_fail "no Fail for new.img: $("$CTL" events "$M" | tail -n 5)"
sleep 0.5
[ "$(state)" = degraded ] || t_fail "not degraded after the failed rebuild: $(state)"
for i in $(seq 16); do cmp -s "$T/src" "$M/old$i" || t_fail "old$i differs"; done
t_umount "$M"

exit 0
