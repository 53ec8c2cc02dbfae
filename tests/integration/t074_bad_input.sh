#!/bin/bash
# Bad input writes nothing: a mount that fails - a configuration naming
# another array's uuid, a cache larger than memory, a bad option, a bad
# libfuse option, a mount point that is not there, a log file that cannot
# be opened, a member missing under degraded=refuse, a member named twice
# (by path, by a symlink, as a loop device over it; fsck -y too) - leaves every member
# image bit for bit unchanged, right after the command returned and 3 s
# later.  (A uuid mismatch and a cache too large used to assemble the
# array read-write first, and wrote.)  Daemonised, as mount(8) runs it.
. "$(dirname "$0")/lib.sh"
t_setup

t_images 4 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"
echo data >"$T/mnt/f"
t_umount "$T/mnt"
m_sums >"$T/sums"
mem_mb=$(( $(getconf _PHYS_PAGES) * $(getconf PAGESIZE) >> 20 ))

conf() {   # conf NAME [uuid] [options...]: a configuration file
	local f=$T/$1.conf uuid=$2 line
	shift 2
	{
		echo "array {"
		[ -n "$uuid" ] && echo "  uuid = \"$uuid\""
		echo "  members = { \"${IMG_LIST[0]}\", \"${IMG_LIST[1]}\", \"${IMG_LIST[2]}\", \"${IMG_LIST[3]}\" }"
		echo "}"
		echo "options {"
		for line in "$@"; do echo "  $line"; done
		echo "}"
	} >"$f"
	echo "$f"
}

# refused WANT_RC WHAT SOURCE [raidfs args...]; on $MNT ($T/mnt unless set)
refused() {
	local want=$1 what=$2 src=$3 rc=0
	shift 3
	"$RAIDFS" "$@" "$src" "${MNT:-$T/mnt}" >"$T/out" 2>&1 || rc=$?
	t_is_mounted "$T/mnt" && { umount "$T/mnt"; t_fail "$what: mounted"; }
	[ $rc -eq "$want" ] || { cat "$T/out"; t_fail "$what: exit $rc, want $want"; }
	m_sums | diff -q - "$T/sums" >/dev/null ||
		{ cat "$T/out"; t_fail "$what: the members changed"; }
	sleep 3
	m_sums | diff -q - "$T/sums" >/dev/null ||
		{ cat "$T/out"; t_fail "$what: the members changed after the command returned"; }
	t_log "$what: exit $rc, nothing written ($(head -c 100 "$T/out" | tr '\n' ' '))"
}

mkdir -p "$T/mnt"
refused 32 "another array's uuid" "$(conf wrong 11111111-2222-3333-4444-555555555555)"
refused 1 "cache_mb beyond memory" "$IMGS" -o cache_mb=$((mem_mb * 2))
refused 1 "cache= beyond memory, in the file" "$(conf bigcache "" "cache = \"$((mem_mb * 4))M\"")"
# a value wrong in a file is named by the file and line
grep -q "bigcache.conf:5: a cache of" "$T/out" || { cat "$T/out"; t_fail "cache=: file and line not named"; }
refused 1 "an empty logfile, in the file" "$(conf nolog "" 'logfile = ""')"
grep -q "nolog.conf:5: logfile must not be empty" "$T/out" || { cat "$T/out"; t_fail "logfile=: file and line not named"; }
refused 1 "a bad option value" "$IMGS" -o degraded=maybe
refused 32 "a bad libfuse option value" "$IMGS" -o max_read=abc
refused 32 "a log file that cannot be opened" "$IMGS" -o logfile="$T/no/such/dir/log"
MNT=$T/none refused 32 "no mount point" "$IMGS"
MNT=$T/sums refused 32 "a mount point that is a file" "$IMGS"
mv "${IMG_LIST[3]}" "$T/m3.away"      # m_sums sums *.img
m_sums | grep -v m3.img >"$T/sums3"; mv "$T/sums" "$T/sums4"; mv "$T/sums3" "$T/sums"
refused 32 "a member missing, degraded=refuse" "$IMGS" -o degraded=refuse
mv "$T/m3.away" "${IMG_LIST[3]}"; mv "$T/sums4" "$T/sums"
m_sums | diff -q - "$T/sums" >/dev/null || t_fail "the missing member changed"

# One member named twice (a typo): refused at once with what is wrong, by
# the daemon and by fsck alike - not "in use" after waiting 10 s for its
# own lock, nor left out for a degraded mount.
twice() {   # twice WHAT WANT_MESSAGE SOURCE
	local t0 t1 rc=0
	t0=$(date +%s)
	refused 32 "$1" "$3"
	t1=$(date +%s)
	[ $((t1 - t0)) -le 5 ] || t_fail "$1: took $((t1 - t0 - 3)) s beyond the 3 s check"
	grep -q -- "$2" "$T/out" || { cat "$T/out"; t_fail "$1: no \"$2\""; }
	"$RAIDFS_BIN/fsck.raidfs" -y "$3" >"$T/out" 2>&1 || rc=$?
	[ $rc -eq 8 ] || { cat "$T/out"; t_fail "$1: fsck -y exit $rc, want 8"; }
	grep -q -- "$2" "$T/out" || { cat "$T/out"; t_fail "$1: fsck -y: no \"$2\""; }
	m_sums | diff -q - "$T/sums" >/dev/null || t_fail "$1: fsck -y changed the members"
}
dup=${IMG_LIST[0]}:${IMG_LIST[1]}:${IMG_LIST[2]}:${IMG_LIST[2]}
twice "a member given twice" "${IMG_LIST[2]} is given twice; each member must be a different device" "$dup"
ln -s "${IMG_LIST[2]}" "$T/link2"
twice "a member and a symlink to it" "${IMG_LIST[2]} and $T/link2 are the same device" \
	"${IMG_LIST[0]}:${IMG_LIST[1]}:${IMG_LIST[2]}:$T/link2:${IMG_LIST[3]}"
if L=$(losetup -f --show "${IMG_LIST[3]}" 2>/dev/null); then
	T_LOOPS+=("$L")
	twice "a member and a loop device over it" "${IMG_LIST[3]} and $L are the same device" \
		"$IMGS:$L"
	losetup -d "$L"
else
	t_log "no loop devices: the loop device case is left out"
fi

# A member that is there but cannot be written (chattr +i): it was
# counted missing, the array ran degraded with a healthy member left out,
# and fsck said "replace the missing member" (a tester's find).  Refused
# by name, by the daemon and fsck -y -f (without -f a clean array is
# not opened for writing at all); -o ro mounts it all.
if chattr +i "${IMG_LIST[1]}" 2>/dev/null; then
	T_IMMUTABLE+=("${IMG_LIST[1]}")
	refused 32 "a member that cannot be written" "$IMGS"
	grep -q "member ${IMG_LIST[1]} cannot be opened for writing" "$T/out" ||
		{ cat "$T/out"; t_fail "the unwritable member not named"; }
	rc=0; "$RAIDFS_BIN/fsck.raidfs" -y -f "$IMGS" >"$T/out" 2>&1 || rc=$?
	[ $rc -eq 8 ] || { cat "$T/out"; t_fail "fsck -y -f with an unwritable member: exit $rc, want 8"; }
	grep -q "cannot be opened for writing" "$T/out" ||
		{ cat "$T/out"; t_fail "fsck -y: the unwritable member not named"; }
	m_sums | diff -q - "$T/sums" >/dev/null || t_fail "fsck -y with an unwritable member wrote"
	t_mount "$IMGS" "$T/mnt" -o ro
	[ "$(cat "$T/mnt/f")" = data ] || t_fail "-o ro: the file changed"
	t_umount "$T/mnt"
	chattr -i "${IMG_LIST[1]}"
else
	t_log "chattr +i does not work here: the unwritable member is left out"
fi

t_log "and the array still mounts, the file intact"
t_mount "$IMGS" "$T/mnt"
[ "$(cat "$T/mnt/f")" = data ] || t_fail "the file changed"
t_umount "$T/mnt"
exit 0
