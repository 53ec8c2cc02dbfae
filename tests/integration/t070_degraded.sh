#!/bin/bash
# Degraded operation is invisible to programs: with a member missing (or
# foreign, or behind) every file reads back and writes work, the log says
# the array is degraded and names the member, and degraded=refuse refuses.
# A member named in SOURCE that does not exist, or that can be no member
# (a directory, something else's signature, a tiny file), is refused as a
# possible typo, nothing written, unless degraded=allow is given.
# A member back after an absence catches up (the write-intent record).
. "$(dirname "$0")/lib.sh"
t_setup

fill() {   # fill DIR: files from empty to several stripes, odd sizes
	"$PY" - "$1" <<'PYEOF'
import os, sys, random
d = sys.argv[1]
r = random.Random(7)
os.makedirs(os.path.join(d, "sub"), exist_ok=True)
for i, size in enumerate([0, 1, 4095, 4096, 4097, 65536, 196608 + 17, 3 << 20, 9 << 20]):
    with open(os.path.join(d, "sub" if i % 2 else "", "f%d" % i), "wb") as f:
        f.write(r.randbytes(size))
os.symlink("sub/f1", os.path.join(d, "link"))
PYEOF
}

for level in 5 6; do
	t_log "RAID $level"
	rm -f "$T"/*.img
	t_images 5 512M
	t_mkfs $level 64K "${IMG_LIST[@]}"
	t_mount "$IMGS" "$T/mnt"
	fill "$T/mnt"
	ref=$(t_tree_sum "$T/mnt")
	t_umount "$T/mnt"

	t_log "RAID $level: member 2 missing"
	mv "$T/m2.img" "$T/away2.img"
	# a member named in SOURCE that does not exist may be a typo: refused,
	# nothing written, until degraded=allow says it is gone
	sums=$(cat "$T"/m[0134].img | md5sum)
	rc=0
	T_TYPO_CHECK=1 t_try_mount "$IMGS" "$T/mnt" || rc=$?
	[ $rc -ne 0 ] || t_fail "mounted with a named member that does not exist"
	grep -q "m2.img: No such file or directory: a mistyped path" "$T/daemon.log" ||
		t_fail "no precise error: $(tail -n 3 "$T/daemon.log")"
	[ "$(cat "$T"/m[0134].img | md5sum)" = "$sums" ] || t_fail "the refused mount wrote"
	: >"$T/daemon.log"
	t_mount "$IMGS" "$T/mnt" -o degraded=allow
	grep -q DEGRADED "$T/daemon.log" || t_fail "the log does not say degraded"
	grep -q "m2.img" "$T/daemon.log" || t_fail "the log does not name the missing member"
	[ "$(t_tree_sum "$T/mnt")" = "$ref" ] || t_fail "degraded read differs"
	echo "written degraded" >"$T/mnt/new"
	head -c 5M /dev/urandom >"$T/mnt/new-big"
	cp "$T/mnt/new-big" "$T/new-big.ref"
	ref2=$(t_tree_sum "$T/mnt")
	t_umount "$T/mnt"
	# clean, and not redundant: the last line says both
	grep -q "unmounted, array clean but degraded" "$T/daemon.log" ||
		t_fail "the unmount line does not say degraded: $(tail -n 1 "$T/daemon.log")"

	if [ $level = 6 ]; then
		t_log "RAID 6: members 2 and 4 missing"
		mv "$T/m4.img" "$T/away4.img"
		t_mount "$IMGS" "$T/mnt" -o degraded=allow
		[ "$(t_tree_sum "$T/mnt")" = "$ref2" ] || t_fail "doubly degraded read differs"
		t_umount "$T/mnt"
		mv "$T/away4.img" "$T/m4.img"
	fi

	# (issue 9: it used to stay out, the array degraded, until rebuilt)
	t_log "RAID $level: the old member back is behind, never read stale: it catches up"
	mv "$T/away2.img" "$T/m2.img"
	: >"$T/daemon.log"
	t_mount "$IMGS" "$T/mnt"
	grep -q DEGRADED "$T/daemon.log" || t_fail "a member behind was taken as current"
	grep -q "member 2 (.*m2.img) is back" "$T/daemon.log" || t_fail "no catch-up of m2"
	[ "$(t_tree_sum "$T/mnt")" = "$ref2" ] || t_fail "read with a member behind differs"
	t_umount "$T/mnt"

	t_log "RAID $level: degraded=refuse"
	mv "$T/m2.img" "$T/away2.img"
	rc=0
	t_try_mount "$IMGS" "$T/mnt" -o degraded=refuse || rc=$?
	[ $rc -eq 32 ] || t_fail "degraded=refuse: exit $rc"
	t_is_mounted "$T/mnt" && t_fail "mounted despite degraded=refuse"
	mv "$T/away2.img" "$T/m2.img"
done

t_log "a foreign member: refused as a typo; with degraded=allow, counted as missing"
rm -f "$T"/*.img
t_images 4 512M
t_images 3 512M other
t_mkfs 5 64K "$T/other0.img" "$T/other1.img" "$T/other2.img"
t_images 4 512M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"
fill "$T/mnt"
ref=$(t_tree_sum "$T/mnt")
t_umount "$T/mnt"
# refused_32 SOURCE PATTERN WHAT: the mount exits 32, its log matching
# PATTERN
refused_32() {
	local rc=0
	: >"$T/daemon.log"
	t_try_mount "$1" "$T/mnt" || rc=$?
	[ $rc -eq 32 ] || t_fail "$3: exit $rc"
	grep -q "$2" "$T/daemon.log" ||
		t_fail "no precise error ($3): $(tail -n 2 "$T/daemon.log")"
}
t_sums "$T"/*.img >"$T/sums.before"
refused_32 "$T/m0.img:$T/other1.img:$T/m2.img:$T/m3.img" \
	"other1.img is a member of another array: a mistyped path? Nothing was written" \
	"a member of another array in SOURCE"
# beside every member: it stands for none (the advice was degraded=allow),
# and fsck, which leaves it out too, does not call that list clean (it
# exited 0 on a SOURCE the mount refuses: T2 D2)
refused_32 "$T/m0.img:$T/m1.img:$T/m2.img:$T/m3.img:$T/other1.img" \
	"other1.img is a member of another array, and this array's 4 members are all there without it: a mistyped path? Nothing was written. Take it out of SOURCE" \
	"a member of another array beside every member"
rc=0
"$RAIDFS_BIN/fsck.raidfs" -n -f "$T/m0.img:$T/m1.img:$T/m2.img:$T/m3.img:$T/other1.img" \
	>"$T/fsck.out" 2>&1 || rc=$?
[ $rc -eq 4 ] && grep -q "other1.img is a member of another array, not of this one" "$T/fsck.out" ||
	{ cat "$T/fsck.out"; t_fail "fsck -n with another array's member beside: exit $rc"; }
# a path that exists but can be no member - a directory, a device or
# file holding something else, a file too small - is a typo as well
# (they were counted missing and the array mounted degraded: a tester's
# find); a blank device stays a missing member (a new disk, or a member
# returning zeros)
mkdir -p "$T/adir"
truncate -s 64M "$T/swap.img"
mkswap -q "$T/swap.img" >/dev/null 2>&1 || t_fail "mkswap"
echo x >"$T/tiny"
# data with no signature at all (a tar file, a dump: it mounted degraded,
# T3 D1), beside a blank image, which stays a missing member
head -c 3M /dev/urandom >"$T/dump.img"
truncate -s 64M "$T/dump.img"
t_sums "$T"/*.img >"$T/sums.before"
refused_32 "$T/m0.img:$T/dump.img:$T/m2.img:$T/m3.img" \
	"dump.img holds data (no raidfs superblock, no signature known; .*), not a raidfs member: a mistyped path? Nothing was written" \
	"a file of data in SOURCE"
refused_32 "$T/m0.img:$T/adir:$T/m2.img:$T/m3.img" \
	"adir: Is a directory: a mistyped path? Nothing was written" \
	"a directory in SOURCE"
refused_32 "$T/m0.img:$T/swap.img:$T/m2.img:$T/m3.img" \
	"swap.img holds .*swap.*not a raidfs member: a mistyped path? Nothing was written" \
	"a swap area in SOURCE"
refused_32 "$T/m0.img:$T/tiny:$T/m2.img:$T/m3.img" \
	"tiny is too small to be a member (2 bytes), not a raidfs member: a mistyped path?" \
	"a small file in SOURCE"
# a symbolic link loop (it mounted degraded: a tester's find)
ln -sf "$T/loop.b" "$T/loop.a"
ln -sf "$T/loop.a" "$T/loop.b"
T_TYPO_CHECK=1 refused_32 "$T/m0.img:$T/loop.a:$T/m2.img:$T/m3.img" \
	"loop.a: Too many levels of symbolic links: a mistyped path? Nothing was written" \
	"a symbolic link loop in SOURCE"
t_sums "$T"/*.img >"$T/sums.after"
cmp -s "$T/sums.before" "$T/sums.after" || t_fail "the refused mount wrote"
: >"$T/daemon.log"
t_mount "$T/m0.img:$T/other1.img:$T/m2.img:$T/m3.img" "$T/mnt" -o degraded=allow
grep -q DEGRADED "$T/daemon.log" || t_fail "foreign member: not degraded"
[ "$(t_tree_sum "$T/mnt")" = "$ref" ] || t_fail "read with a foreign member differs"
t_umount "$T/mnt"

# m1 missed writes (the mount above ran without it); with m0 left out
# too the mount is refused, and the refusal names m1 as given but behind
# (it said only "slot 1 ... missing")
t_log "refused: the refusal names a stale member given"
refused_32 "$T/m1.img:$T/m2.img:$T/m3.img" \
	"more than raid5 redundancy can do without.*m1.img was given for slot 1 but missed writes" \
	"two slots short, the refusal naming m1"
exit 0
