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
# fast path). raidfsctl is on root's PATH and `man raidfsctl` shows the
# installed page.
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

in_namespace() {
	ROOT=$T/root
	overlay_installed
	[ "$(readlink -f /sbin/mount.raidfs)" = /usr/local/bin/raidfs ] \
		|| t_fail "/sbin/mount.raidfs -> $(readlink -f /sbin/mount.raidfs)"
	$BARE man -P cat raidfsctl 2>/dev/null | grep -q "administer mounted raidfs arrays" \
		|| t_fail "man raidfsctl does not show the installed page"
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
	echo second >"$M/g"
	umount_installed "$M" "mount -t raidfs"

	rc=0; $ROOTPATH fsck -t raidfs -n "$T/data.conf" >"$T/fsck.out" 2>&1 || rc=$?
	[ $rc -eq 0 ] || t_fail "fsck -t raidfs: exit $rc: $(cat "$T/fsck.out")"
	grep -q "skipped, unmounted cleanly" "$T/fsck.out" || t_fail "array not clean: $(cat "$T/fsck.out")"
	t_log "fsck -t raidfs: clean fast path (the daemon closed the array cleanly)"
}

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
./sbin/mount.raidfs/usr/local/bin/raidfs
./sbin/raidfsctl
./usr/local/bin/raidfs
./usr/local/share/man/man8/raidfsctl.8
LIST

t_images 3 128M
had_daemon=$([ -e /usr/local/bin/raidfs ] && echo yes || echo no)
unshare -m --propagation private bash "$0" --in-namespace "$T" "$IMGS" \
	|| t_fail "in the mount namespace"
findmnt -S raidfs-install >/dev/null && t_fail "an overlay is visible outside the namespace"
[ "$had_daemon" = "$([ -e /usr/local/bin/raidfs ] && echo yes || echo no)" ] \
	|| t_fail "/usr/local/bin/raidfs appeared outside the namespace"
t_log "outside the namespace nothing changed"
exit 0
