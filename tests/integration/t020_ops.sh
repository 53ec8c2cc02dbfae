#!/bin/bash
# Every operation with its errors (tests/integration/ops.py), as root and as
# an unprivileged user (EACCES, EPERM, sticky directories), then the whole
# tree again after unmount and mount.
. "$(dirname "$0")/lib.sh"
t_setup

t_images 4 1G
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt" -o allow_other   # other users may enter at all
chmod 755 "$T" "$T/mnt"
cp "$TESTS_DIR/ops.py" "$T/ops.py"     # readable by nobody wherever the tree is
chmod 644 "$T/ops.py"

"$PY" "$T/ops.py" "$T/mnt" names files links special times sparse \
	big xattr perm_root || t_fail "ops.py as root"
t_log "as nobody (uid 65534)"
setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$PY" "$T/ops.py" "$T/mnt" perm_user || t_fail "ops.py as nobody"

before=$(t_tree_sum "$T/mnt")
t_umount "$T/mnt"
t_mount "$IMGS" "$T/mnt" -o allow_other
after=$(t_tree_sum "$T/mnt")
[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after") | head -20; t_fail "tree changed across remount"; }
t_umount "$T/mnt"
exit 0
