#!/bin/bash
# An offline rebuild is not held back by the rebuild speed limit an
# administrator set for the mounted array (raidfsctl set, kept on the
# members): fsck.raidfs serves nobody else.  With 1 KiB/s kept, fsck -y
# --rebuild of a member holding 24 MiB took hours; it must end within a
# minute, the array redundant after it, and the limit still on the
# members for the next mount (a tester's note: 1 MiB/s made a 128 MiB
# rebuild take two minutes).
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

t_images 3 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
M=$T/mnt
t_mount "$IMGS" "$M"
for i in 0 1 2; do head -c 8M /dev/urandom >"$M/f$i"; done
"$RAIDFS_BIN/raidfsctl" set "$M" rebuild-speed-min=1K rebuild-speed-max=1K >/dev/null \
	|| t_fail "raidfsctl set"
t_tree_sum "$M" >"$T/tree.before"
t_umount "$M"
IMG=("${IMG_LIST[@]}")
rm "${IMG[1]}"
NEW=$T/new1.img
truncate -s 64M "$NEW"

t_log "fsck -y --rebuild with 1 KiB/s kept on the members"
rc=0
timeout 60 "$RAIDFS_BIN/fsck.raidfs" -y --rebuild "$NEW" "${IMG[0]}:$NEW:${IMG[2]}" \
	>"$T/fsck.out" 2>&1 || rc=$?
[ $rc -ne 124 ] || t_fail "the rebuild was still running after 60 s: $(tail -3 "$T/fsck.out")"
[ $rc -le 1 ] || t_fail "fsck -y --rebuild exited $rc: $(tail -5 "$T/fsck.out")"

t_log "redundant: every file reads with another member gone; the limit kept"
rm "${IMG[0]}"
t_mount "$NEW:${IMG[2]}" "$M" -o ro,degraded=allow
t_tree_sum "$M" | cmp -s - "$T/tree.before" || t_fail "files differ after the rebuild"
"$RAIDFS_BIN/raidfsctl" status --json "$M" | "$PY" -c '
import json, sys
s = json.load(sys.stdin)["arrays"][0]["rebuild_speed"]
assert s["max_kib_per_s"] == 1 and s["min_kib_per_s"] == 1, s
' || t_fail "the limit set before is gone"
t_umount "$M"
exit 0
