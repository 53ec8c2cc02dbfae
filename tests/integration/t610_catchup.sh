#!/bin/bash
# A returning member catches up on only what changed (issue 9, the
# write-intent record): a RAID 5 of 4 images, member 3 missing at one mount
# while a short burst is written, all four at the next: only the regions
# written meanwhile are resynchronised (counted in the log and the
# RebuildFinished event: > 0, far below the member), and afterwards the
# array survives losing a different member with every file intact.  Then
# `raidfsctl add` of a former member while mounted (member 1, missing at
# that mount) catches up the same way.  A member failed and removed by
# request stays out at later mounts until added again.
. "$(dirname "$0")/lib.sh"
t_setup

CTL=$RAIDFS_BIN/raidfsctl
[ -x "$CTL" ] || t_fail "no $CTL"
M=$T/mnt

sums() { (cd "$M" && find . -type f -print0 | sort -z | xargs -0 -r md5sum); }

wait_clean() {  # until status says clean (20 s at most)
	local i
	for i in $(seq 400); do
		[ "$("$CTL" status "$M" | head -1)" = "$M: clean" ] && return 0
		sleep 0.05
	done
	t_fail "never clean: $("$CTL" status "$M")"
}

# check_catchup SLOT: the catch-up of SLOT in the log and in the events
# resynced some regions, and fewer than a quarter of them all
check_catchup() {
	local line n total
	line=$(grep "slot $1: catch-up: " "$T/daemon.log" | tail -1)
	[ -n "$line" ] || t_fail "no catch-up of slot $1: $(cat "$T/daemon.log")"
	n=$(sed -n 's/.*catch-up: \([0-9]*\) regions.*/\1/p' <<<"$line")
	total=$(sed -n 's/.* of \([0-9]*\) regions.*/\1/p' <<<"$line")
	t_log "slot $1: $n of $total regions resynced"
	[ "$n" -gt 0 ] && [ $((n * 4)) -lt "$total" ] || t_fail "catch-up: $line"
	"$CTL" events "$M" | grep -q "RebuildFinished slot=$1 .*in sync; catch-up: $n regions" \
		|| t_fail "no catch-up in the events: $("$CTL" events "$M")"
}

t_images 4 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$M"
for i in 1 2; do head -c $((i * 1500000)) /dev/urandom >"$M/f$i"; done
t_umount "$M"

t_log "member 3 away while a burst is written"
t_mount "$T/m0.img:$T/m1.img:$T/m2.img" "$M"
head -c 300000 /dev/urandom >"$M/burst"
dd if=/dev/urandom of="$M/f2" bs=64K count=2 seek=5 conv=notrunc status=none
sums >"$T/sums"
t_umount "$M"

t_log "member 3 back: only the regions written meanwhile are resynced"
: >"$T/daemon.log"
t_mount "$IMGS" "$M"
wait_clean
grep -q "member 3 (.*m3.img) is back" "$T/daemon.log" || t_fail "m3 not taken back"
check_catchup 3
t_umount "$M"

t_log "member 1 lost instead: every file intact; then added back while mounted"
t_mount "$T/m0.img:$T/m2.img:$T/m3.img" "$M"
sums | cmp -s - "$T/sums" || t_fail "files differ without m1"
head -c 200000 /dev/urandom >"$M/burst2"
sums >"$T/sums"
: >"$T/daemon.log"
"$CTL" add "$M" "$T/m1.img" >"$T/out" || t_fail "add m1: $(cat "$T/out")"
grep -q "slot 1's former member: catching up" "$T/out" || t_fail "add: $(cat "$T/out")"
wait_clean
check_catchup 1
"$CTL" events "$M" | grep -q "MemberReturned slot=1 device=$T/m1.img" \
	|| t_fail "no MemberReturned: $("$CTL" events "$M")"
t_umount "$M"

t_log "member 0 lost: every file intact (m1 and m3 hold real data)"
t_mount "$T/m1.img:$T/m2.img:$T/m3.img" "$M"
sums | cmp -s - "$T/sums" || t_fail "files differ without m0"
t_umount "$M"

# md's --fail, --remove: the device comes back only with --re-add; it
# used to be caught up at the next mount as if it had only been away
t_log "member 2 failed and removed by request stays out at the next mount; add takes it back"
t_mount "$IMGS" "$M"
wait_clean
"$CTL" fail "$M" 2 >/dev/null || t_fail "fail 2"
"$CTL" remove "$M" 2 >/dev/null || t_fail "remove 2"
head -c 200000 /dev/urandom >"$M/burst3"
sums >"$T/sums"
t_umount "$M"
: >"$T/daemon.log"
t_mount "$IMGS" "$M"
grep -q "m2.img: left out: slot 2's member, removed by an administrator" "$T/daemon.log" ||
	t_fail "m2 not left out: $(grep -i 'm2.img' "$T/daemon.log")"
[ "$("$CTL" status "$M" | head -1)" = "$M: degraded" ] || t_fail "not degraded: $("$CTL" status "$M")"
t_umount "$M"
t_mount "$IMGS" "$M"
grep -q "member 2 (.*m2.img) is back" "$T/daemon.log" && t_fail "m2 taken back at a later mount"
"$CTL" add "$M" "$T/m2.img" >"$T/out" || t_fail "add m2: $(cat "$T/out")"
grep -q "slot 2's former member: catching up" "$T/out" || t_fail "add m2: $(cat "$T/out")"
wait_clean
sums | cmp -s - "$T/sums" || t_fail "files differ after m2 came back"
t_umount "$M"
exit 0
