#!/bin/bash
# With the writeback cache the kernel owns a file's mtime and ctime: it
# sends them in a SETATTR when they moved.  A file written right after its
# creation (echo > f) keeps the times the kernel showed across a remount;
# the daemon used to stamp the written-back WRITE's own time on it, a few
# milliseconds later, and the kernel (its times unmoved) sent nothing to
# correct it: 4-8 files of 300 came back with a later mtime and ctime.
. "$(dirname "$0")/lib.sh"
t_setup

t_images 4 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
M=$T/mnt
t_mount "$IMGS" "$M"
for i in $(seq 500); do echo hello >"$M/f$i"; done
stat -c '%n %y %z' "$M"/f* | sort >"$T/before"
t_umount "$M"
t_mount "$IMGS" "$M"
stat -c '%n %y %z' "$M"/f* | sort >"$T/after"
t_umount "$M"
diff "$T/before" "$T/after" >"$T/diff" ||
	t_fail "times changed across a remount: $(grep -c '^>' "$T/diff") of 500 files, e.g. $(sed -n 2p "$T/diff"), now $(grep -m1 '^>' "$T/diff")"
exit 0
