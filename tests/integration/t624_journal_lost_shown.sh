#!/bin/bash
# A RAID 1 whose slot 1 is being rebuilt onto a spare; the one member in
# sync, m0, drops every write for a few seconds (faultfs lose-writes)
# while files are created and fsync'd.  The daemon finds it out at a
# checkpoint and suspends the array.  Remounted with m0 whole again, the
# journal's last transactions lack m0's records and the rebuilding slot
# is not counted on: replay cannot replay them.  What they wrote is lost -
# not fixed (the spare's own records may hold it), but it is said: status
# shows JOURNAL LOST, and status --json its first transaction.  Before,
# only the daemon's log said so, and status showed a rebuilding array
# with no damage (a tester's find).
. "$(dirname "$0")/lib.sh"
t_setup
. "$TESTS_DIR/ctl_lib.sh"
t_faultfs

for n in m0 m1 s0; do truncate -s 96M "$T/back/$n.img"; done
t_mkfs 1 64K -s "$T/back/s0.img" "$T/back/m0.img" "$T/back/m1.img"
M=$T/mnt
SRC=$T/ff/m0.img:$T/ff/m1.img:$T/ff/s0.img
t_mount "$SRC" "$M" -o degraded=allow
for i in $(seq 20); do head -c 2M /dev/urandom >"$M/base$i"; done
sync -f "$M/base1"
"$CTL" set "$M" rebuild-speed-max=4M >/dev/null || t_fail "set"
"$CTL" fail "$M" 1 >/dev/null || t_fail "fail 1"
wait_state rebuilding

t_log "m0 drops its writes while files are written and fsync'd"
( for i in $(seq 300); do
	head -c 100K /dev/urandom >"$M/new$i" && sync -f "$M/new$i" || exit 0
	sleep 0.02
  done ) &
wp=$!
sleep 1
# all but its superblocks (blocks 0, 1 and the last two): a member whose
# superblocks fell behind is left out as stale, another story
echo "m0.img lose-writes 8k $((96 * 1048576 - 16384))" >"$T/ff/.faultctl"
for i in $(seq 150); do [ "$(state)" = suspended ] && break; sleep 0.1; done
echo "m0.img clear lose-writes" >"$T/ff/.faultctl"
wait "$wp"
[ "$(state)" = suspended ] || t_fail "not suspended: $("$CTL" status "$M")"
"$CTL" status "$M" | grep -q "^  JOURNAL LOST:" && t_fail "journal lost before the remount"
# the daemon of a suspended array exits non-zero at its unmount
t_umount_idle "$M" || t_fail "umount"
wait "${T_PID_OF[$M]}" || true
unset "T_PID_OF[$M]"

t_log "remounted with m0 whole: the loss is in status and status --json"
t_mount "$SRC" "$M" -o degraded=allow
grep -q "were committed (a later batch follows) but lack records" "$T/daemon.log" \
	|| t_skip "replay lost nothing this time (m0 dropped no record of a committed batch)"
"$CTL" status "$M" >"$T/status"
grep -q "^  JOURNAL LOST: transactions from [0-9]* on were committed" "$T/status" \
	|| t_fail "status says nothing of the loss: $(cat "$T/status")"
validate
"$CTL" status --json "$M" | "$PY" -c '
import json, sys
a = json.load(sys.stdin)["arrays"][0]
assert a["journal_lost"]["from_transaction"] > 0, a["journal_lost"]
' || t_fail "status --json: no journal_lost"
t_umount "$M"
exit 0
