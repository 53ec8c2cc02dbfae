#!/bin/bash
# A rebuild onto a new device, interrupted by an unmount, then one mount
# made without that device: when the device comes back it was never in
# sync (past its rebuild's position it holds nothing, its checksum tables
# sealed "never written"), so it is rebuilt again in full - not taken as
# a returning member that a write-intent catch-up of what changed while it
# was away brings in sync.  Then the member beside it fails: every byte
# must still read as written.  (Found by an administrator-mistakes test:
# the catch-up called the slot in sync and 313 MB of 629 read wrong,
# without an I/O error, once another member failed.)
. "$(dirname "$0")/lib.sh"
t_setup
. "$TESTS_DIR/ctl_lib.sh"

t_images 4 48M
t_mkfs 5 64K "${IMG_LIST[@]}"
M=$T/mnt
t_mount "$IMGS" "$M"
head -c 96M /dev/urandom >"$T/big"
cp "$T/big" "$M/big" && sync -f "$M/big" || t_fail "write big"
t_umount "$M"
t_mount "$IMGS" "$M"

t_log "slot 1 failed and removed; a blank device added: a full rebuild, interrupted"
"$CTL" set "$M" rebuild-speed-min=2M rebuild-speed-max=2M >/dev/null || t_fail "set"
"$CTL" fail "$M" 1 >/dev/null || t_fail "fail 1"
"$CTL" remove "$M" 1 >/dev/null || t_fail "remove 1"
truncate -s 48M "$T/x.img"
"$CTL" add "$M" "$T/x.img" >/dev/null || t_fail "add x.img"
wait_state rebuilding
sleep 1
t_umount "$M"

t_log "one mount without it (slot 1 missing), then it is back"
ALL_BUT=$T/m0.img:$T/absent.img:$T/m2.img:$T/m3.img
t_mount "$ALL_BUT" "$M" -o degraded=allow
[ "$(state)" = degraded ] || t_fail "not degraded without x.img: $(state)"
t_umount "$M"
WITH_X=$T/m0.img:$T/x.img:$T/m2.img:$T/m3.img
t_mount "$WITH_X" "$M"
grep -q "x.img: slot 1's rebuild onto it had not finished" "$T/daemon.log" ||
	t_fail "x.img not said to be out of sync: $(tail -n 20 "$T/daemon.log")"
grep -q "x.img) is back" "$T/daemon.log" &&
	t_fail "x.img taken back as a returning member (catch-up)"
"$CTL" set "$M" rebuild-speed-min=0 rebuild-speed-max=0 >/dev/null || t_fail "set"
wait_state clean
"$CTL" events "$M" | grep "RebuildFinished slot=1" | tail -n 1 | grep -q "catch-up" &&
	t_fail "slot 1 only caught up: $("$CTL" events "$M" | grep RebuildFinished)"

t_log "slot 0 fails: slot 1 must hold what it should"
"$CTL" fail "$M" 0 >/dev/null || t_fail "fail 0"
echo 3 >/proc/sys/vm/drop_caches
cmp "$T/big" "$M/big" || t_fail "big differs with slot 0 failed"
t_umount "$M"
t_mount "$T/absent.img:$T/x.img:$T/m2.img:$T/m3.img" "$M" -o ro,degraded=allow
cmp "$T/big" "$M/big" || t_fail "big differs after a remount without slot 0"
t_umount "$M"
exit 0
