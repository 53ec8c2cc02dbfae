#!/bin/bash
# The programs' conventions (docs/DESIGN.md, "The programs' conventions"):
# every program answers --help and --version on stdout with exit 0, all
# print the one version with the on-disk format version, and a usage error
# exits with the program's usage code, says "Try 'PROG --help'." on stderr
# and prints nothing on stdout.  Needs neither root nor FUSE.
. "$(dirname "$0")/lib.sh"
t_tmp cli
TOP=$(cd "$TESTS_DIR/../.." && pwd)

# program -> usage exit code: mount(8)'s for the daemon and its helper,
# fsck(8)'s for fsck, 1 for mkfs as mke2fs, 2 for raidfsctl as zpool
declare -A USAGE_RC=([raidfs]=1 [mount.raidfs]=1 [mkfs.raidfs]=1 [fsck.raidfs]=16 [raidfsctl]=2)

version=$(sed -n 's/^#define RAIDFS_VERSION "\(.*\)"$/\1/p' "$TOP/source/prog.h")
rc_fmt=$(awk '/RC_SB_VERSION_MAJOR/ { a = $3 } /RC_SB_VERSION_MINOR/ { b = $3 } END { print a "." b }' "$TOP/raidcore/ondisk.h")
fs_fmt=$(awk '/define FS_VERSION_MAJOR/ { a = $3 } /define FS_VERSION_MINOR/ { b = $3 } END { print a "." b }' "$TOP/fs/ondisk_fs.h")
[ -n "$version" ] || t_fail "no RAIDFS_VERSION in source/prog.h"

# run NAME ARGS...: exit status in $rc, output in $T/out and $T/err
run() {
	rc=0
	"$RAIDFS_BIN/$1" "${@:2}" >"$T/out" 2>"$T/err" || rc=$?
}

for p in raidfs mount.raidfs mkfs.raidfs fsck.raidfs raidfsctl; do
	[ -x "$RAIDFS_BIN/$p" ] || t_fail "no $RAIDFS_BIN/$p"
	for h in --help -h; do
		run "$p" "$h"
		[ $rc -eq 0 ] || t_fail "$p $h: exit $rc"
		grep -q "^Usage: $p " "$T/out" || t_fail "$p $h: no usage on stdout: $(cat "$T/out")"
		[ -s "$T/err" ] && t_fail "$p $h wrote to stderr: $(cat "$T/err")"
	done
	t_log "$p --help: exit 0, stdout"

	run "$p" --version
	[ $rc -eq 0 ] || t_fail "$p --version: exit $rc"
	[ "$(head -n 1 "$T/out")" = "$p (raidfs) $version" ] \
		|| t_fail "$p --version: first line '$(head -n 1 "$T/out")'"
	grep -qx "on-disk format: array $rc_fmt, filesystem $fs_fmt" "$T/out" \
		|| t_fail "$p --version: no on-disk format $rc_fmt/$fs_fmt: $(cat "$T/out")"
	[ -s "$T/err" ] && t_fail "$p --version wrote to stderr: $(cat "$T/err")"
	t_log "$p --version: $(head -n 1 "$T/out"), $(sed -n 2p "$T/out")"

	for args in "--no-such-option" "" "-Q x y"; do
		# shellcheck disable=SC2086
		run "$p" $args
		[ $rc -eq "${USAGE_RC[$p]}" ] || t_fail "$p $args: exit $rc, want ${USAGE_RC[$p]}"
		[ -s "$T/out" ] && t_fail "$p $args wrote to stdout: $(cat "$T/out")"
		[ "$(tail -n 1 "$T/err")" = "Try '$p --help'." ] \
			|| t_fail "$p $args: stderr does not end with the hint: $(cat "$T/err")"
		[ "$(wc -l <"$T/err")" -ge 2 ] || t_fail "$p $args: no reason given: $(cat "$T/err")"
	done
	t_log "$p usage errors: exit ${USAGE_RC[$p]}, the reason and \"Try '$p --help'.\" on stderr"
done

# raidfsctl's commands: an extra argument is named as such (it said an
# argument was missing), getopt's messages name the program, and an
# empty device is shown as one (a tester's find)
# ctl_usage RC ARGS... -- FIRST-LINE: raidfsctl ARGS exits RC, stderr's
# first line FIRST-LINE
ctl_usage() {
	local want=${*: -1} code=$1
	shift
	run raidfsctl "${@:1:$#-2}"
	[ $rc -eq "$code" ] || t_fail "raidfsctl ${*:1:$#-2}: exit $rc, want $code"
	[ "$(head -n 1 "$T/err")" = "$want" ] \
		|| t_fail "raidfsctl ${*:1:$#-2}: $(head -n 1 "$T/err"), want $want"
}
ctl_usage 2 clear /mnt junk -- "raidfsctl: too many arguments: MOUNTPOINT only"
ctl_usage 2 replace /mnt 2 /dev/x extra -- \
	"raidfsctl: replace: too many arguments: MOUNTPOINT MEMBER DEVICE"
ctl_usage 2 status --jsn /mnt -- "raidfsctl status: unrecognized option '--jsn'"
ctl_usage 1 add /mnt "" -- 'raidfsctl: "" (empty): no such device'
t_log "raidfsctl: extra arguments, bad options and an empty device named"
exit 0
