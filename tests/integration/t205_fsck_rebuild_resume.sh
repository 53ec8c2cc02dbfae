#!/bin/bash
# An offline rebuild killed halfway resumes offline.  fsck -y --rebuild
# TARGET is killed with SIGKILL once TARGET's superblock records some
# stripes rebuilt; the same command run again resumes from that checkpoint
# (it says so, at a stripe past 0) instead of failing "busy" or starting
# over - with TARGET outside SOURCE, named in SOURCE in place of the lost
# member, and by a plain fsck -y.  The array is then fully redundant: with another member
# removed, every file reads back intact.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

t_images 4 256M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"
for i in 0 1 2 3 4 5; do head -c 60M /dev/urandom >"$T/mnt/f$i"; done
t_tree_sum "$T/mnt" >"$T/tree.before"
t_umount "$T/mnt"
M=("${IMG_LIST[@]}")
rm "${M[2]}"
NEW=$T/new2.img
truncate -s 256M "$NEW"
OUTSIDE="${M[0]}:${M[1]}:${M[3]}"
INSIDE="${M[0]}:${M[1]}:$NEW:${M[3]}"

# slot 2's state and rebuild_pos in NEW's superblock (copy 0)
slot2() {
	"$PY" - "$NEW" <<'PY'
import struct, sys
with open(sys.argv[1], "rb") as f:
    sb = f.read(4096)
if sb[:8] != b"RAIDFSMB":
    print("none 0"); sys.exit()
state, pos = struct.unpack_from("<I", sb, 512 + 32 * 2 + 16)[0], \
    struct.unpack_from("<Q", sb, 512 + 32 * 2 + 24)[0]
print(state, pos)
PY
}

# killed FROM FSCK-ARGS...: runs fsck, SIGKILLs it once NEW's superblock
# says rebuilding with rebuild_pos > FROM; prints that position
killed() {
	local from=$1 pid
	shift
	"$FSCK" "$@" >"$T/out.killed" 2>&1 &
	pid=$!
	"$PY" - "$NEW" "$pid" "$from" <<'PY' || { cat "$T/out.killed" >&2; t_fail "the rebuild was not caught in progress"; }
import os, signal, struct, sys, time
path, pid, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
deadline = time.time() + 120
while time.time() < deadline:
    with open(path, "rb") as f:
        sb = f.read(4096)
    if sb[:8] == b"RAIDFSMB":
        state, pos = struct.unpack_from("<IIQ", sb, 512 + 32 * 2 + 16)[::2]
        if state == 0:
            sys.exit("the rebuild finished before it could be killed")
        if state == 3 and pos > start:
            os.kill(pid, signal.SIGKILL)
            print(pos)
            sys.exit(0)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        sys.exit("fsck ended before it could be killed")
    time.sleep(0.002)
sys.exit("timed out")
PY
	wait "$pid" 2>/dev/null || true
}

# resumed SRC AT: the rebuild runs again and says it resumes past AT - 1
resumed_at() {
	grep -o "resuming the rebuild of slot 2 onto .* at stripe [0-9]*" "$1" | awk '{ print $NF }'
}

t_log "killed with TARGET outside SOURCE"
pos1=$(killed 0 -y --rebuild "$NEW" "$OUTSIDE")
read -r state pos < <(slot2)
[ "$state" = 3 ] && [ "$pos" -ge "$pos1" ] || t_fail "after the kill: slot 2 state $state pos $pos"
t_log "  killed at stripe $pos (state rebuilding)"

# fsck -n says what fsck -y will do: resume (not "missing", not --rebuild)
f_rc 4 -n "$INSIDE"
grep -q "slot 2 (member [0-9a-f-]*) rebuilding onto $NEW" "$T/out" &&
	grep -q "fsck -y resumes it" "$T/out" &&
	grep -q "DEGRADED.*fsck -y rebuilds it as phase 1 says" "$T/out" &&
	! grep -q "missing\|with --rebuild" "$T/out" ||
	{ cat "$T/out"; t_fail "fsck -n mid-rebuild: not 'fsck -y resumes it'"; }
# the target named in SOURCE is the rebuild's, not a stale former member
# (it was said "left out as stale", and fsck -y's resumed rebuild exited
# 5: T4 D1)
grep -q "left out as stale" "$T/out" &&
	{ cat "$T/out"; t_fail "fsck -n calls the rebuild's target stale"; }

t_log "the same command resumes; killed again, TARGET now in SOURCE"
pos2=$(killed "$pos" -y --rebuild "$NEW" "$INSIDE")
at=$(resumed_at "$T/out.killed")
[ -n "$at" ] && [ "$at" -ge "$pos" ] && [ "$at" -gt 0 ] ||
	{ cat "$T/out.killed"; t_fail "the second run did not resume (at '$at', checkpoint $pos)"; }
grep -q "busy" "$T/out.killed" && { cat "$T/out.killed"; t_fail "busy"; }
t_log "  resumed at stripe $at, killed at $pos2"

t_log "plain fsck -y (no --rebuild) resumes it too; killed again"
read -r state pos < <(slot2)
pos3=$(killed "$pos" -y "$INSIDE")
at=$(resumed_at "$T/out.killed")
[ -n "$at" ] && [ "$at" -ge "$pos" ] ||
	{ cat "$T/out.killed"; t_fail "plain fsck -y did not resume (at '$at', checkpoint $pos)"; }
grep -q "left out as stale" "$T/out.killed" &&
	{ cat "$T/out.killed"; t_fail "fsck -y calls the rebuild's target stale"; }
t_log "  resumed at stripe $at, killed at $pos3"

t_log "the same command (TARGET outside SOURCE) resumes and finishes"
read -r state pos < <(slot2)
f_rc 1 -y --rebuild "$NEW" "$OUTSIDE"
at=$(resumed_at "$T/out")
[ -n "$at" ] && [ "$at" -ge "$pos" ] && [ "$at" -gt 0 ] ||
	{ cat "$T/out"; t_fail "the third run did not resume (at '$at', checkpoint $pos)"; }
grep -q "rebuild finished" "$T/out" || { cat "$T/out"; t_fail "no rebuild report"; }
t_log "  resumed at stripe $at, finished"
read -r state pos < <(slot2)
[ "$state" = 0 ] || t_fail "slot 2 is not active after the rebuild (state $state)"
t_log "fully redundant: every file reads with member 0 removed"
f_redundant "$INSIDE" "${M[0]}"
