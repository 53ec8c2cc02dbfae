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

# level n: sides A (slots 0 and, at RAID 10, 2: one copy of each pair)
# and B (the other copies)
for level in 1 10; do
	rm -f "$T"/*.img
	if [ $level = 1 ]; then
		t_images 2 64M
		A=${IMG_LIST[0]} B=${IMG_LIST[1]}
	else
		t_images 4 64M
		A=${IMG_LIST[0]}:${IMG_LIST[2]} B=${IMG_LIST[1]}:${IMG_LIST[3]}
	fi
	t_log "RAID $level: each side mounted on its own and written"
	t_mkfs $level 64K "${IMG_LIST[@]}"
	t_mount "$IMGS" "$T/mnt"
	echo base >"$T/mnt/base"
	t_umount "$T/mnt"
	side "$A" fileA
	side "$B" fileB
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
	t_mount "$B:$A" "$T/mnt"
	[ -e "$T/mnt/fileB" ] || t_fail "the mount has not side B's file"
	t_umount "$T/mnt"
	grep -q "left out: SPLIT BRAIN" "$T/daemon.log" || t_fail "the daemon did not say split brain"
	holds "$A" fileA
done

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
