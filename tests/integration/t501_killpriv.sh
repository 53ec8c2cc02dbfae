#!/bin/bash
# killpriv_v2 (daemon/fuse_hook.c): the kernel stops asking for
# security.capability before every write(2) (one GETXATTR for 200
# writes, not 200; none per fsync of overwrites either), and the daemon
# clears setuid/setgid where Linux does:
# each case runs on tmpfs and on raidfs and must leave the same mode -
# buffered and O_DIRECT writes, an O_TRUNC open, truncate, fallocate by
# an unprivileged user, none of it by root; a second write after the bits
# are set again;
# chown by root and chown(2) with -1, -1 by the owner; file capabilities
# dropped by a write, again after they are set again.
. "$(dirname "$0")/lib.sh"
t_setup
command -v setcap >/dev/null || t_skip "no setcap (libcap2-bin)"

t_images 4 256M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt" -o debug,allow_other
M=$T/mnt
t_tmpfs_ref kp
chmod 755 "$T"
chmod 777 "$M" "$REF"

t_log "one GETXATTR for 200 writes (killpriv_v2), not one per write"
if ! grep -q 'killpriv_v2 off (the kernel does not offer it)' "$T/daemon.log"; then
	before=$(grep -c 'opcode: GETXATTR' "$T/daemon.log" || true)
	"$PY" - "$M/many" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY, 0o644)
for i in range(200):
    os.pwrite(fd, b"x" * 4096, i * 4096)
os.fsync(fd)
os.close(fd)
PY
	after=$(grep -c 'opcode: GETXATTR' "$T/daemon.log" || true)
	[ $((after - before)) -le 1 ] ||
		t_fail "$((after - before)) GETXATTR requests for 200 writes"
	t_log "overwrites with an fsync every 32: no GETATTR or GETXATTR per fsync"
	# the daemon drops the kernel's attributes at fsync only when
	# st_blocks changed (fs_blocks_changed): else every fsync'd batch
	# cost a GETATTR and, S_NOSEC gone with it, a GETXATTR
	a0=$(grep -c 'opcode: GETATTR' "$T/daemon.log" || true)
	x0=$(grep -c 'opcode: GETXATTR' "$T/daemon.log" || true)
	"$PY" - "$M/many" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
for i in range(320):
    os.pwrite(fd, b"y" * 4096, (i * 37 % 200) * 4096)
    if i % 32 == 31:
        os.fsync(fd)
os.close(fd)
PY
	a=$(($(grep -c 'opcode: GETATTR' "$T/daemon.log" || true) - a0))
	x=$(($(grep -c 'opcode: GETXATTR' "$T/daemon.log" || true) - x0))
	[ "$a" -le 2 ] && [ "$x" -le 1 ] ||
		t_fail "$a GETATTR and $x GETXATTR for 10 fsyncs of overwrites"
else
	t_log "the kernel does not offer killpriv_v2 (before Linux 5.11): not counted"
fi

# same_mode NAME WHAT: NAME has the same mode on tmpfs and on raidfs
same_mode() {
	local a b
	a=$(stat -c %a "$REF/$1") b=$(stat -c %a "$M/$1")
	[ "$a" = "$b" ] || t_fail "$2: mode $b on raidfs, $a on tmpfs"
}
mkfile() {     # mkfile DIR NAME MODE [OWNER]
	printf '0123456789' >"$1/$2"
	[ -z "${4:-}" ] || chown "$4" "$1/$2"
	chmod "$3" "$1/$2"
}

t_log "write, O_DIRECT write, O_TRUNC open, truncate, fallocate by nobody"
for m in 6777 6767 2666 4777; do
	for d in "$REF" "$M"; do
		for op in write direct otrunc trunc falloc; do mkfile "$d" "$op.$m" "$m"; done
		t_as_nobody sh -c "echo x >>'$d/write.$m'; : >'$d/otrunc.$m';
			truncate -s 3 '$d/trunc.$m'; fallocate -l 8192 '$d/falloc.$m'" ||
			t_fail "nobody's writes in $d"
		t_as_nobody "$PY" -c '
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
buf.write(b"d" * 4096)
os.pwrite(fd, buf, 0)
os.close(fd)' "$d/direct.$m" || t_fail "O_DIRECT write by nobody in $d"
	done
	for op in write direct otrunc trunc falloc; do
		same_mode "$op.$m" "$op by nobody of a root file $m"
	done
done

t_log "root's writes, truncate and O_TRUNC open keep the bits (CAP_FSETID)"
for d in "$REF" "$M"; do
	for op in write otrunc trunc; do mkfile "$d" "root_$op" 6777 65534:65534; done
	echo x >>"$d/root_write"; : >"$d/root_otrunc"; truncate -s 3 "$d/root_trunc"
done
for op in write otrunc trunc; do same_mode "root_$op" "$op by root"; done
[ "$(stat -c %a "$M/root_write")" = 6777 ] || t_fail "root's write dropped the bits"

t_log "written once, setuid again, written again: cleared again"
for d in "$REF" "$M"; do
	mkfile "$d" again 0666
	t_as_nobody sh -c "echo x >>'$d/again'"
	chmod 6777 "$d/again"
	t_as_nobody sh -c "echo y >>'$d/again'"
done
same_mode again "a second write after chmod 6777"
[ "$(stat -c %a "$M/again")" = 777 ] || t_fail "setuid survived the second write"

t_log "chown by root, chown(2) with -1, -1 by the owner"
for d in "$REF" "$M"; do
	mkfile "$d" ch_ug 6755
	mkfile "$d" ch_gnox 2745
	mkfile "$d" ch_u 4700
	chown 1234:1234 "$d/ch_ug" "$d/ch_gnox" "$d/ch_u"
	mkfile "$d" own_same 6755 65534:65534
	t_as_nobody "$PY" -c 'import os, sys; os.chown(sys.argv[1], -1, -1)' "$d/own_same" ||
		t_fail "chown -1 -1 by the owner in $d"
done
for f in ch_ug ch_gnox ch_u own_same; do same_mode $f "chown of $f"; done

t_log "a write drops file capabilities, and again once they are set again"
for d in "$REF" "$M"; do
	mkfile "$d" cap 0755
	for round in 1 2; do
		setcap cap_net_raw+ep "$d/cap" || t_fail "setcap in $d"
		getcap "$d/cap" | grep -q cap_net_raw || t_fail "no capability set in $d"
		echo x >>"$d/cap"
		[ -z "$(getcap "$d/cap")" ] || t_fail "round $round: a write kept $(getcap "$d/cap") in $d"
	done
done

t_log "the same after a remount"
modes=$(cd "$M" && stat -c '%n %a' -- * | sort)
t_umount "$M"
t_mount "$IMGS" "$M"
[ "$(cd "$M" && stat -c '%n %a' -- * | sort)" = "$modes" ] || t_fail "modes changed across a remount"
t_umount "$M"
