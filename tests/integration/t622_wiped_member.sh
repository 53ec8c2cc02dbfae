#!/bin/bash
# A member zeroed from its start up to its last two blocks (a wipe that
# stopped short, `dd` run on the wrong disk) still carries superblock
# copies 2 and 3: the array assembles with it.  It is not trusted as
# redundancy until a repairing scrub of the whole array has verified it:
# the daemon starts that scrub itself, status names the member NOT
# VERIFIED meanwhile (and --json's "unverified"), and `raidfsctl fail` of
# another member is refused.  Once the scrub is through, the member is
# trusted, the fail goes through, and every file reads from what the
# wiped member was rebuilt to.  Before, the member stayed "active" in a
# "clean" array, the fail was accepted, and every file was lost (a
# tester's find, T1 #1).  The same for a wipe found while mounted (the
# daemon's superblock check): MemberDamaged, and a scrub.
. "$(dirname "$0")/lib.sh"
t_setup
. "$TESTS_DIR/ctl_lib.sh"

t_images 4 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
M=$T/mnt
t_mount "$IMGS" "$M"
t_pattern_files "$M" 300 300 300 300 300
t_sums "$M"/file* >"$T/sums"
# the scrub it starts at the next mount runs slowly, so it can be seen
"$CTL" set "$M" rebuild-speed-min=1M rebuild-speed-max=1M >/dev/null ||
	t_fail "set speed"
t_umount "$M"

wipe_front() {  # wipe_front IMAGE: zeros but for the last two blocks
	local sz
	sz=$(stat -c %s "$1")
	dd if=/dev/zero of="$1" bs=4096 count=$((sz / 4096 - 2)) conv=notrunc \
		status=none
}
wipe_front "${IMG_LIST[1]}"

t_log "wiped before the mount: not verified, scrubbing, fail refused"
t_mount "$IMGS" "$M"
"$CTL" status "$M" >"$T/st1"
grep -q "NOT VERIFIED: member 1 .*superblock copies 0 1 invalid" "$T/st1" ||
	{ cat "$T/st1"; t_fail "member 1 not said unverified"; }
[ "$(state)" = scrubbing ] || t_fail "no scrub started: $(state)"
validate
"$PY" -c 'import json,sys; u=json.load(open(sys.argv[1]))["arrays"][0]["unverified"]; assert u["slots"] == [1], u' \
	"$T/status.json" || t_fail "status --json: unverified"
expect_rc 1 "$CTL" fail "$M" 0
"$CTL" fail "$M" 0 2>&1 | grep -q "not failed: member 1 .*A repairing scrub of the whole array verifies it" ||
	t_fail "the refusal does not say why"
[ "$(state)" = scrubbing ] || t_fail "the refused fail changed the state: $(state)"

t_log "unmounted during that scrub: still not verified at the next mount"
# (its damaged copies are rewritten at the first write: the state is
# kept on the members, RC_SLOT_UNVERIFIED; it was lost, and a resumed
# scrub let the member be trusted: V1 D1)
t_umount "$M"
t_mount "$IMGS" "$M"
"$CTL" status "$M" >"$T/st2"
grep -q "NOT VERIFIED: member 1 .*found damaged before, and not verified since" "$T/st2" ||
	{ cat "$T/st2"; t_fail "the remount forgot member 1 is not verified"; }
expect_rc 1 "$CTL" fail "$M" 0

t_log "the scrub through: verified, the fail goes through, every file reads"
"$CTL" set "$M" rebuild-speed-max=1G >/dev/null || t_fail "set speed"
"$CTL" scrub start --wait "$M" >/dev/null 2>&1     # joins the running one
for _ in $(seq 200); do
	"$CTL" status "$M" | grep -q "NOT VERIFIED" || break
	sleep 0.1
done
"$CTL" status "$M" | grep -q "NOT VERIFIED" && t_fail "still unverified"
grep -q "member 1: verified by a scrub" "$T/daemon.log" ||
	t_fail "no verified line in the log"
expect_rc 0 "$CTL" fail "$M" 0
echo 3 >/proc/sys/vm/drop_caches
(cd "$M" && t_sums file*) | diff - <(sed "s|$M/||" "$T/sums") >/dev/null ||
	t_fail "files differ after losing member 0"
t_umount "$M"

t_log "wiped while mounted: MemberDamaged, scrub, verified"
t_images 4 64M w
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$M"
t_pattern_files "$M" 300 300 300
sync -f "$M/file0"
wipe_front "${IMG_LIST[2]}"
# the daemon reads every member's superblocks every 10 s
wait_event "MemberDamaged slot=2"
for _ in $(seq 300); do
	"$CTL" status "$M" | grep -q "NOT VERIFIED" || break
	sleep 0.1
done
"$CTL" status "$M" | grep -q "NOT VERIFIED" && t_fail "never verified"
wait_event ScrubFinished 10
expect_rc 0 "$CTL" fail "$M" 0
echo 3 >/proc/sys/vm/drop_caches
"$PY" - "$M" <<'PY' || t_fail "files differ after losing member 0"
import os, sys
for n in range(3):
    with open(os.path.join(sys.argv[1], "file%d" % n), "rb") as f:
        for k in range(300):
            want = (b"F%03dB%06d" % (n, k)).ljust(4096, b".")
            assert f.read(4096) == want, (n, k)
PY
t_umount "$M"
t_log "ok"
