#!/bin/bash
# A write that cannot be placed costs that write only: a degraded RAID 5
# of 4 (one member missing) whose row holding file1's block 5 lost that
# block to damage on its member, the missing member holding data in the
# same row.  Overwriting the block (dd conv=notrunc,fsync) fails with EIO
# at the fsync - no parity can be made for it - and nothing else does:
# the mount stays writable, a new file written after it is durable, the
# other files read intact, the unmount is clean and the array mounts
# again.  Before, the row's stripe stayed dirty and failed every later
# commit: the filesystem went read-only, the unmount failed and what the
# cache held was lost.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

t_images 4 24M
t_mkfs 5 64K "${IMG_LIST[@]}"
M=$T/mnt
t_mount "$IMGS" "$M"
t_pattern_files "$M" 40 40 40
mkdir -p "$T/ref"
t_pattern_files "$T/ref" 40 40 40
t_umount "$M"

read -r img off < <(t_locate_block 1 5 "${IMG_LIST[@]}")
[ -n "$off" ] || t_fail "file1's block 5 is on no member"
par=$(f_parity_of "$off" "${IMG_LIST[@]}")
[ "$par" != "$img" ] || t_fail "the block is its row's parity"
gone=
for m in "${IMG_LIST[@]}"; do
	[ "$m" != "$img" ] && [ "$m" != "$par" ] && { gone=$m; break; }
done
t_log "file1's block 5 damaged on $(basename "$img"); $(basename "$gone") missing"
f_damage "$img" "$off"
mv "$gone" "$gone.away"
t_mount "$IMGS" "$M"
dd if="$M/file1" of=/dev/null bs=4096 skip=5 count=1 2>/dev/null \
	&& t_fail "file1's lost block read"

t_log "the write over it fails at its fsync, and only it"
head -c 4096 /dev/urandom >"$T/blk"
dd if="$T/blk" of="$M/file1" bs=4096 seek=5 count=1 conv=notrunc,fsync \
	2>"$T/dd.err" && t_fail "the fsync of a write that was dropped succeeded"
grep -q "Input/output error" "$T/dd.err" || t_fail "dd: $(cat "$T/dd.err")"
head -c 1M /dev/urandom >"$T/new"
dd if="$T/new" of="$M/new" bs=64K conv=fsync 2>/dev/null \
	|| t_fail "a new file after it: $(tail -3 "$T/daemon.log")"
mkdir "$M/dir" || t_fail "mkdir after it"
grep -q "the write cannot be placed" "$T/daemon.log" \
	|| t_fail "no log line: $(tail -5 "$T/daemon.log")"
for f in file0 file2; do
	cmp -s "$T/ref/$f" "$M/$f" || t_fail "$f differs"
done
t_umount "$M"

t_log "remounted: what was written after it is there"
t_mount "$IMGS" "$M"
cmp -s "$T/new" "$M/new" || t_fail "new differs after the remount"
[ -d "$M/dir" ] || t_fail "dir gone after the remount"
for f in file0 file2; do
	cmp -s "$T/ref/$f" "$M/$f" || t_fail "$f differs after the remount"
done
cmp -s -n 20480 "$T/ref/file1" "$M/file1" || t_fail "file1 differs before the lost block"
t_umount "$M"
t_log "ok"
