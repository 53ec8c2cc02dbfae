#!/bin/bash
# A split brain: each member of a RAID 1 (and each half of a RAID 10)
# mounted degraded on its own and written.  Assembled together again, the
# side the assembly does not take is its other side: left out, said to be
# (SPLIT BRAIN), and never rebuilt or caught up over unless named -
# fsck -y exits 4 and writes nothing to it, the daemon's mount (which
# catches returning members up) leaves it alone, and mounted alone it
# still holds what was written on it.  A member that is merely stale
# (left out while the others went on) is still rebuilt by fsck -y.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

has() { grep -q -- "$1" "$T/out" || { cat "$T/out"; t_fail "no '$1'"; }; }

# side SOURCE NAME: mount SOURCE alone, degraded, and write NAME (fsync'd)
side() {
	t_mount "$1" "$T/mnt" -o degraded=allow
	echo "$2" >"$T/mnt/$2"
	"$PY" -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$T/mnt/$2"
	t_umount "$T/mnt"
}

# holds SOURCE NAME: SOURCE mounted alone (read-only) has file NAME
holds() {
	t_mount "$1" "$T/mnt" -o ro,degraded=allow
	[ "$(cat "$T/mnt/$2" 2>/dev/null)" = "$2" ] || t_fail "$1 lost $2: $(ls "$T/mnt")"
	t_umount "$T/mnt"
}

# sides A and B: at RAID 1 each member; at RAID 10 one copy of each pair
# and the other copies; at RAID 6 of 4 two members each.  At RAID 1 the
# sides' event counters tie; at 10 and 6 side A is mounted twice, so it
# is the newer and side B returns as a former member the write-intent
# record covers (the daemon would catch it up: a mix of both histories)
for level in 1 10 6; do
	rm -f "$T"/*.img
	case $level in
	1)
		t_images 2 64M
		A=${IMG_LIST[0]} B=${IMG_LIST[1]} ;;
	10)
		t_images 4 64M
		A=${IMG_LIST[0]}:${IMG_LIST[2]} B=${IMG_LIST[1]}:${IMG_LIST[3]} ;;
	6)
		t_images 4 64M
		A=${IMG_LIST[0]}:${IMG_LIST[1]} B=${IMG_LIST[2]}:${IMG_LIST[3]} ;;
	esac
	t_log "RAID $level: each side mounted on its own and written"
	t_mkfs $level 64K "${IMG_LIST[@]}"
	t_mount "$IMGS" "$T/mnt"
	echo base >"$T/mnt/base"
	head -c 4M /dev/urandom >"$T/mnt/big"
	t_umount "$T/mnt"
	side "$A" fileA
	[ $level = 1 ] || side "$A" fileA2
	side "$B" fileB
	# side B also overwrites part of a file both sides have
	t_mount "$B" "$T/mnt" -o degraded=allow
	head -c 1M /dev/urandom | dd of="$T/mnt/big" bs=1M seek=2 conv=notrunc,fsync status=none
	sha256sum <"$T/mnt/big" >"$T/big.B"
	t_umount "$T/mnt"
	sha256sum "${IMG_LIST[@]}" >"$T/sums"

	t_log "  fsck -n and -y: the other side named, nothing rebuilt over it"
	f_rc 4 -n "$B:$A"
	has "SPLIT BRAIN"
	has "Not rebuilt over without --rebuild"
	grep -q "no data lost" "$T/out" && { cat "$T/out"; t_fail "'no data lost' beside a split brain"; }
	sha256sum -c --quiet "$T/sums" || t_fail "fsck -n wrote"
	f_rc 4 -y "$B:$A"
	has "SPLIT BRAIN"
	holds "$A" fileA
	holds "$B" fileB

	t_log "  the daemon's mount (catch-up on): the other side left alone"
	: >"$T/daemon.log"
	t_mount "$B:$A" "$T/mnt"
	t_umount "$T/mnt"
	grep -q "left out: SPLIT BRAIN" "$T/daemon.log" || t_fail "the daemon did not say split brain"
	grep -q "catches up" "$T/daemon.log" && t_fail "a side was caught up over the other"
	holds "$A" fileA
	holds "$B" fileB
	t_mount "$B" "$T/mnt" -o ro,degraded=allow
	sha256sum <"$T/mnt/big" | cmp -s - "$T/big.B" || t_fail "side B's big changed"
	t_umount "$T/mnt"
done

t_log "RAID 1: side B replaced the member it ran without; side A is still its other side"
rm -f "$T"/*.img
t_images 2 64M
A=${IMG_LIST[0]} B=${IMG_LIST[1]}
t_mkfs 1 64K "$A" "$B"
truncate -s 64M "$T/e0.img"
side "$A" fileA
t_mount "$B" "$T/mnt" -o degraded=allow
echo fileB >"$T/mnt/fileB"
"$RAIDFS_BIN/raidfsctl" replace "$T/mnt" 1 "$T/e0.img" >/dev/null || t_fail "replace onto e0.img"
for i in $(seq 200); do
	"$RAIDFS_BIN/raidfsctl" status "$T/mnt" | grep -Eq "^ +1  active .*/e0.img" && break
	sleep 0.1
done
"$RAIDFS_BIN/raidfsctl" status "$T/mnt" | grep -Eq "^ +1  active .*/e0.img" || t_fail "e0.img never took slot 1"
t_umount "$T/mnt"
f_rc 4 -n "$A:$T/e0.img"
has "SPLIT BRAIN"
: >"$T/daemon.log"
t_mount "$T/e0.img:$A" "$T/mnt"
t_umount "$T/mnt"
grep -q "left out: SPLIT BRAIN" "$T/daemon.log" || t_fail "side A caught up over (replace)"
holds "$A" fileA

t_log "RAID 1 of 3, one history: a with b, b with c, then a with c: a catches up"
rm -f "$T"/*.img
t_images 3 64M
t_mkfs 1 64K "${IMG_LIST[@]}"
a=${IMG_LIST[0]} b=${IMG_LIST[1]} c=${IMG_LIST[2]}
side "$a:$b" f1
side "$b:$c" f2
: >"$T/daemon.log"
t_mount "$a:$c" "$T/mnt" -o degraded=allow
[ -e "$T/mnt/f1" ] && [ -e "$T/mnt/f2" ] || t_fail "a:c misses f1 or f2"
t_umount "$T/mnt"
grep -q "SPLIT" "$T/daemon.log" && t_fail "one history taken for a split brain"
# c, caught up while b kept the record, took the record's bitmap blocks
# too: alone with a, it still knows what a missed (the record was dropped)
grep -q "(.*$(basename "$a")) is back.*it catches up" "$T/daemon.log" ||
	t_fail "a did not catch up: $(grep -i "left out\|record" "$T/daemon.log")"
holds "$a:$c" f1
holds "$a:$c" f2

# What the rule cannot tell without a history id: c mounted alone after
# b left (c's superblock then calls a and b missing, a's calls c missing)
# looks like a split brain; told so, --rebuild is the way on, nothing lost
t_log "RAID 1 of 3: a with b, b with c, c alone, then a back: told as a possible split, --rebuild fixes it"
rm -f "$T"/*.img
t_images 3 64M
t_mkfs 1 64K "${IMG_LIST[@]}"
side "$a:$b" f1
side "$b:$c" f2
side "$c" f3
f_rc 4 -y "$a:$c"
has "SPLIT BRAIN"
has "if it was only away (stale), --rebuild is the fix"
f_rc "1 5" -y --rebuild "$a" "$a:$c"       # 5: b is still missing
f_rc 4 -n -f "$a:$c"
grep -q "SPLIT\|slot 0: MISSING" "$T/out" && { cat "$T/out"; t_fail "a not back in slot 0"; }
holds "$a:$c" f3

t_log "a stale member (no split) is still rebuilt by fsck -y"
rm -f "$T"/*.img
t_images 2 64M
t_mkfs 1 64K "${IMG_LIST[@]}"
side "${IMG_LIST[0]}" fileA
f_rc 4 -n "$IMGS"
grep -q "SPLIT" "$T/out" && { cat "$T/out"; t_fail "a stale member taken for a split brain"; }
has "former member (left out as stale)"
f_rc 1 -y "$IMGS"
f_rc 0 -n -f "$IMGS"
holds "${IMG_LIST[1]}" fileA
exit 0
