#!/bin/bash
# The installed layout works as installed: `make install` with the default
# PREFIX (here into a scratch DESTDIR), then, in a private mount namespace
# where the installed files are overlaid read-only onto their real
# directories (overlayfs with lower layers only; nothing is written to the
# real system directories, and nothing is seen outside the namespace),
# mount(8) with an fstab file and with -t raidfs finds mount.raidfs and
# the daemon with a bare PATH (/usr/bin:/bin, without /usr/local/bin):
# mount.raidfs is the daemon under the helper's name, so nothing has to be
# looked up.  mkfs(8) and fsck(8) find their helpers on PATH, so they get
# root's PATH without /usr/local.  Files written through each mount read
# back; after umount the daemon exits and the array is clean (fsck's clean
# fast path). raidfsctl is on root's PATH; man(1) finds every installed
# page by its name (`man raidfsctl`, `man raidfs.conf`), with the default
# MANPATH in the namespace and with MANPATH naming the scratch root outside
# it.  The monthly scrub's units pass `systemd-analyze verify` (their
# programs and the man pages they cite are found), and their commands work
# on the mount: ExecStart (raidfsctl scrub start --wait) joins a running
# scrub and waits for its end (exit 0), exits 1 when ExecStop stops the
# scrub it waits for, and then resumes it to the end.
. "$(dirname "$0")/lib.sh"
BARE="env -i PATH=/usr/bin:/bin"
ROOTPATH="env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin"

# ---- inside the namespace -------------------------------------------------
# Overlays every directory the install wrote into onto the real one
# (/sbin is usr/sbin on merged-/usr systems: the real path is used).
overlay_installed() {
	local d real
	declare -A lower=()
	while read -r d; do
		# a directory the system lacks (/usr/local/share/man/man8):
		# its nearest existing parent is overlaid
		while [ ! -e "$d" ] && [ "$d" != / ]; do d=$(dirname "$d"); done
		real=$(realpath -e "$d") || t_skip "$d does not exist on this system"
		# man5 and man8 both missing: their parent once (overlayfs
		# refuses a layer given twice)
		case ":${lower[$real]:-}" in *":$ROOT$d:"*) continue ;; esac
		lower[$real]+="$ROOT$d:"
	done < <(cd "$ROOT" && find . -mindepth 1 \( -type f -o -type l \) -printf '%h\n' | sed 's/^\.//' | sort -u)
	for real in "${!lower[@]}"; do
		mount -t overlay -o "ro,lowerdir=${lower[$real]}$real" raidfs-install "$real" \
			|| t_fail "overlay on $real"
		t_log "overlay: ${lower[$real]%:} over $real"
	done
}

# umount_installed DIR WHAT: the daemon serving DIR is the installed one;
# umount; it exits.
umount_installed() {
	local pid exe comm
	pid=$(t_daemon_pid "$1") || t_fail "$2: no daemon serving $1"
	echo "$pid" >>"$T/pids"
	exe=$(readlink "/proc/$pid/exe")
	comm=$(cat "/proc/$pid/comm")
	[ "$exe" = /usr/local/bin/raidfs ] || t_fail "$2: served by $exe, not the installed daemon"
	t_umount_idle "$1" || t_fail "$2: umount"
	t_wait_gone "$pid" || t_fail "$2: daemon $pid still running after umount"
	t_log "$2: served by $exe (pid $pid, named $comm); unmounted, the daemon exited"
}

# man(1), as a user runs it, finds each page by name (and shows it)
man_pages_found() {
	local sec name want
	for page in "${PAGES[@]}"; do
		sec=${page##*.} name=${page%.*}
		want=/usr/local/share/man/man$sec/$page
		[ "$($BARE man -w "$sec" "$name" 2>&1)" = "$want" ] \
			|| t_fail "man -w $sec $name: $($BARE man -w "$sec" "$name" 2>&1), want $want"
	done
	$BARE man -P cat raidfsctl 2>/dev/null | grep -q "administer mounted raidfs arrays" \
		|| t_fail "man raidfsctl does not show the installed page"
	$BARE man -P cat raidfs.conf 2>/dev/null | grep -q "raidfs array configuration file" \
		|| t_fail "man raidfs.conf does not show the installed page"
	t_log "man -w finds all ${#PAGES[@]} pages under /usr/local/share/man; man raidfsctl, man raidfs.conf show them"
}

# unit_cmd KEY UNIT MOUNTPOINT: the unit's command line for that instance
unit_cmd() {
	sed -n "s/^$1=-\{0,1\}//p" "$UNITS/$2" | sed "s|%f|$3|g"
}

# The scrub timer's units, verified, and their commands run on DIR.
scrub_units() {
	local inst start stop pid rc
	inst=$(systemd-escape --path "$1" 2>/dev/null) || inst=
	if [ -n "$inst" ] && command -v systemd-analyze >/dev/null; then
		(cd "$T" && $ROOTPATH systemd-analyze verify "$UNITS/raidfs-scrub@$inst.service" \
			"$UNITS/raidfs-scrub@$inst.timer") >"$T/verify.out" 2>&1 \
			|| t_fail "systemd-analyze verify: $(cat "$T/verify.out")"
		[ -s "$T/verify.out" ] && t_fail "systemd-analyze verify warns: $(cat "$T/verify.out")"
		t_log "systemd-analyze verify raidfs-scrub@$inst.service and .timer: clean"
	else
		t_log "no systemd-escape or systemd-analyze: the units are not verified"
	fi
	start=$(unit_cmd ExecStart raidfs-scrub@.service "$1")
	stop=$(unit_cmd ExecStop raidfs-scrub@.service "$1")
	[ "$start" = "/sbin/raidfsctl scrub start --wait $1" ] || t_fail "ExecStart: $start"
	raidfsctl set "$1" rebuild-speed-max=1M >/dev/null || t_fail "set"
	raidfsctl scrub start "$1" >/dev/null || t_fail "scrub start"
	$ROOTPATH $start >"$T/w1" 2>&1 &
	pid=$!
	sleep 0.5
	kill -0 $pid 2>/dev/null || t_fail "scrub --wait did not wait for the running scrub: $(cat "$T/w1")"
	raidfsctl set "$1" rebuild-speed-max=0 >/dev/null || t_fail "set"
	rc=0; wait $pid || rc=$?
	[ $rc -eq 0 ] && grep -q "scrub: finished.* 0 unrecoverable" "$T/w1" \
		|| t_fail "ExecStart joining a scrub: exit $rc: $(cat "$T/w1")"
	t_log "ExecStart joined the running scrub and waited for its end: $(cat "$T/w1")"

	raidfsctl set "$1" rebuild-speed-max=1M >/dev/null || t_fail "set"
	$ROOTPATH $start >"$T/w2" 2>&1 &
	pid=$!
	sleep 0.5
	$ROOTPATH $stop >/dev/null || t_fail "ExecStop: $stop"
	rc=0; wait $pid || rc=$?
	[ $rc -eq 1 ] && grep -q "scrub: stopped" "$T/w2" \
		|| t_fail "ExecStart after ExecStop: exit $rc, want 1: $(cat "$T/w2")"
	raidfsctl set "$1" rebuild-speed-max=0 >/dev/null || t_fail "set"
	rc=0; $ROOTPATH $start >"$T/w3" 2>&1 || rc=$?
	[ $rc -eq 0 ] && grep -q "scrub resumed at stripe [1-9]" "$T/w3" &&
		grep -q "scrub: finished" "$T/w3" || t_fail "ExecStart resuming: exit $rc: $(cat "$T/w3")"
	t_log "ExecStop stopped the scrub ExecStart waited for (exit 1); ExecStart then resumed it to the end"
}

in_namespace() {
	ROOT=$T/root
	overlay_installed
	[ "$(readlink -f /sbin/mount.raidfs)" = /usr/local/bin/raidfs ] \
		|| t_fail "/sbin/mount.raidfs -> $(readlink -f /sbin/mount.raidfs)"
	man_pages_found
	$ROOTPATH raidfsctl --version | grep -q "^raidfsctl (raidfs)" || t_fail "raidfsctl not on root's PATH"
	$ROOTPATH mkfs -t raidfs -q -f -l 5 -C "$T/data.conf" "${IMG_LIST[@]}" || t_fail "mkfs -t raidfs"
	M=$T/mnt
	mkdir -p "$M"

	echo "$T/data.conf $M raidfs defaults,nofail 0 0" >"$T/fstab"
	$BARE mount -T "$T/fstab" "$M" || t_fail "mount -T fstab"
	t_is_mounted "$M" || t_fail "mount -T: not mounted"
	head -c 3M /dev/urandom >"$T/ref"
	cp "$T/ref" "$M/f"
	cmp "$T/ref" "$M/f" || t_fail "read back through the fstab mount"
	umount_installed "$M" "mount -T fstab"

	$BARE mount -t raidfs "$IMGS" "$M" || t_fail "mount -t raidfs"
	cmp "$T/ref" "$M/f" || t_fail "file differs after remount"
	scrub_units "$M"
	echo second >"$M/g"
	umount_installed "$M" "mount -t raidfs"

	rc=0; $ROOTPATH fsck -t raidfs -n "$T/data.conf" >"$T/fsck.out" 2>&1 || rc=$?
	[ $rc -eq 0 ] || t_fail "fsck -t raidfs: exit $rc: $(cat "$T/fsck.out")"
	grep -q "skipped, unmounted cleanly" "$T/fsck.out" || t_fail "array not clean: $(cat "$T/fsck.out")"
	t_log "fsck -t raidfs: clean fast path (the daemon closed the array cleanly)"
}

PAGES=(raidfs.8 mount.raidfs.8 mkfs.raidfs.8 fsck.raidfs.8 raidfsctl.8 raidfs.conf.5)
UNITS=/usr/local/lib/systemd/system
if [ "${1:-}" = --in-namespace ]; then
	T=$2
	IMGS=$3
	IFS=: read -r -a IMG_LIST <<<"$IMGS"
	in_namespace
	exit 0
fi

# ---- outside: install, then run the above in a namespace --------------------
t_setup
command -v unshare >/dev/null || t_skip "no unshare"
# a chroot whose / is no mount point cannot have a private namespace
unshare -m --propagation private true 2>/dev/null ||
	t_skip "no private mount namespace here (a chroot whose / is not a mount point?)"
grep -qw overlay /proc/filesystems || modprobe -q overlay 2>/dev/null || true
grep -qw overlay /proc/filesystems || t_skip "no overlayfs"
TOP=$(cd "$TESTS_DIR/../.." && pwd)
ROOT=$T/root

t_log "make install DESTDIR=$ROOT (default PREFIX)"
# a make of its own, not a sub-make of the one running the tests
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$TOP" install DESTDIR="$ROOT" \
	>"$T/install.log" 2>&1 || { cat "$T/install.log" >&2; t_fail "make install"; }
(cd "$ROOT" && find . \( -type f -o -type l \) -printf '%p%l\n' | sort) >"$T/installed"
sed 's/^/    /' "$T/installed"
diff - "$T/installed" <<LIST || t_fail "installed files differ from the layout"
./sbin/fsck.raidfs
./sbin/mkfs.raidfs
./sbin/mount.fuse.raidfs/usr/local/bin/raidfs
./sbin/mount.raidfs/usr/local/bin/raidfs
./sbin/raidfsctl
./usr/local/bin/raidfs
./usr/local/lib/systemd/system/raidfs-scrub@.service
./usr/local/lib/systemd/system/raidfs-scrub@.timer
./usr/local/share/man/man5/raidfs.conf.5
./usr/local/share/man/man8/fsck.raidfs.8
./usr/local/share/man/man8/mkfs.raidfs.8
./usr/local/share/man/man8/mount.raidfs.8
./usr/local/share/man/man8/raidfs.8
./usr/local/share/man/man8/raidfsctl.8
LIST
for page in "${PAGES[@]}"; do
	sec=${page##*.}
	[ "$(MANPATH=$ROOT/usr/local/share/man man -w "$sec" "${page%.*}")" = \
		"$ROOT/usr/local/share/man/man$sec/$page" ] || t_fail "MANPATH=... man -w $sec ${page%.*}"
done
MANPATH=$ROOT/usr/local/share/man man -P cat raidfsctl | grep -q "raidfs\-scrub@" \
	|| t_fail "MANPATH=... man raidfsctl: the page does not show the scrub timer"
t_log "with MANPATH=$ROOT/usr/local/share/man man finds every page"

t_images 3 128M
had_daemon=$([ -e /usr/local/bin/raidfs ] && echo yes || echo no)
unshare -m --propagation private bash "$0" --in-namespace "$T" "$IMGS" \
	|| t_fail "in the mount namespace"
findmnt -S raidfs-install >/dev/null && t_fail "an overlay is visible outside the namespace"
[ "$had_daemon" = "$([ -e /usr/local/bin/raidfs ] && echo yes || echo no)" ] \
	|| t_fail "/usr/local/bin/raidfs appeared outside the namespace"
t_log "outside the namespace nothing changed"
exit 0
