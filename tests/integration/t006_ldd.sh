#!/bin/bash
# What each program links (ldd, printed in full): only the daemon links
# libfuse3 - mkfs.raidfs and fsck.raidfs must run on a machine without
# FUSE - and mount.raidfs is the daemon itself under the helper's name.
# Needs neither root nor FUSE.
. "$(dirname "$0")/lib.sh"
t_tmp ldd

for p in raidfs mkfs.raidfs fsck.raidfs; do
	[ -x "$RAIDFS_BIN/$p" ] || t_fail "no $RAIDFS_BIN/$p"
	ldd "$RAIDFS_BIN/$p" >"$T/$p.ldd" || t_fail "ldd $p"
	t_log "ldd $p:"
	sed 's/^[[:space:]]*/      /' "$T/$p.ldd"
done
grep -q 'libfuse3\.so' "$T/raidfs.ldd" || t_fail "raidfs does not link libfuse3 (is ldd working?)"
for p in mkfs.raidfs fsck.raidfs; do
	grep -q 'libfuse' "$T/$p.ldd" && t_fail "$p links libfuse: $(grep libfuse "$T/$p.ldd")"
	t_log "$p: no libfuse"
done
[ "$(readlink -f "$RAIDFS_BIN/mount.raidfs")" = "$(readlink -f "$RAIDFS_BIN/raidfs")" ] \
	|| t_fail "mount.raidfs is not the daemon: $(ls -l "$RAIDFS_BIN/mount.raidfs")"
t_log "mount.raidfs -> $(readlink "$RAIDFS_BIN/mount.raidfs"): the daemon itself"
exit 0
