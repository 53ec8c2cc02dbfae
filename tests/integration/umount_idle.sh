#!/bin/bash
# umount_idle.sh [umount args...] DIR: umount(8), retried while the target
# is busy, for up to RAIDFS_UMOUNT_WAIT seconds (default 60).
#
# "target is busy" right after a test's last access is not a bug: a process
# that just left the mount (a shell's cwd, a reader still exiting, the
# kernel releasing files under load) holds it a moment longer.  Any other
# umount error is returned at once.  Used by lib.sh (t_umount_idle) and by
# model.py, so every test unmounts the same way.
set -u
wait_s=${RAIDFS_UMOUNT_WAIT:-60}
deadline=$(($(date +%s) + wait_s))
while :; do
	err=$(LC_ALL=C umount "$@" 2>&1) && exit 0
	rc=$?
	case $err in
	*"target is busy"*|*"Device or resource busy"*)
		[ "$(date +%s)" -lt "$deadline" ] && { sleep 0.2; continue; } ;;
	esac
	echo "$err" >&2
	exit $rc
done
