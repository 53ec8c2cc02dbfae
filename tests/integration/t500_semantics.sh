#!/bin/bash
# Linux semantics at ext4's level (issue 11), on one mount: a buffered read
# after an AIO O_DIRECT write sees the new data.
. "$(dirname "$0")/lib.sh"
t_setup
AIO_STALE=$(t_tool aio_stale)

t_images 4 128M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt" -o allow_other
chmod 755 "$T" "$T/mnt"
M=$T/mnt

t_log "buffered reads after AIO O_DIRECT writes are not stale"
"$AIO_STALE" "$M/aio" 300 || t_fail "a buffered read returned stale data after a direct write"
rm "$M/aio"

t_umount "$M"
