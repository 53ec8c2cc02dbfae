#!/bin/bash
# O_DIRECT opens get FOPEN_DIRECT_IO (daemon/fuse_io.c open_reply, once the
# kernel takes FUSE_DIRECT_IO_ALLOW_MMAP: fuse_hook.c).  Checked here:
# - one round trip per O_DIRECT write: 200 writes reach the daemon as 200
#   WRITEs and no GETATTR or GETXATTR each (the page-cache path asked
#   both before every write: three round trips);
# - O_DIRECT beside the page cache as on tmpfs: tests/tools/dio_mix.py,
#   direct and buffered writes and reads, shared mappings, truncates and
#   fcntl(O_DIRECT) toggles on one file, every read against a model, on
#   tmpfs and on raidfs; it caught direct reads that ended at the
#   daemon's end of file while a buffered write past it was still in the
#   writeback cache, and a page fault through a mapping of the O_DIRECT
#   file whose READ, short at the end of file, waited on its own pages;
# - an O_DIRECT write drops file capabilities (root's too) and, by an
#   unprivileged writer, setuid/setgid, as on tmpfs; a store through a
#   shared mapping of the file keeps them, as on tmpfs;
# - what was written direct reads back the same after a remount.
. "$(dirname "$0")/lib.sh"
t_setup
ROOT=$(cd "$TESTS_DIR/../.." && pwd)
DIO_MIX=$ROOT/tests/tools/dio_mix.py

t_images 4 128M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt" -o debug,allow_other
M=$T/mnt
t_tmpfs_ref dio
chmod 755 "$T"
chmod 777 "$M" "$REF"

# direct_writes FILE N: N O_DIRECT writes of 4 KiB, one after another
direct_writes() {
	"$PY" - "$1" "$2" <<'PY'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY | os.O_DIRECT, 0o644)
buf = mmap.mmap(-1, 4096)
for i in range(int(sys.argv[2])):
    buf[:] = bytes([i % 251 + 1]) * 4096
    os.pwrite(fd, buf, i * 4096)
os.close(fd)
PY
}
count() { grep -ac "opcode: $1" "$T/daemon.log" || true; }

# FUSE_DIRECT_IO_ALLOW_MMAP came with Linux 6.6 (FUSE 7.39)
kernel=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
if [ "$kernel" -ge 6006 ]; then
	grep -q 'O_DIRECT direct (FOPEN_DIRECT_IO)' "$T/daemon.log" ||
		t_fail "Linux $(uname -r), but O_DIRECT opens do not get FOPEN_DIRECT_IO: $(grep -a 'O_DIRECT' "$T/daemon.log" | head -1)"

	t_log "200 O_DIRECT writes: 200 WRITEs, no GETATTR or GETXATTR each"
	direct_writes "$M/once" 1
	w0=$(count WRITE) a0=$(count GETATTR) x0=$(count GETXATTR)
	direct_writes "$M/once" 200
	w=$(($(count WRITE) - w0)) a=$(($(count GETATTR) - a0)) x=$(($(count GETXATTR) - x0))
	t_log "  $w WRITE, $a GETATTR, $x GETXATTR"
	[ "$w" -ge 200 ] || t_fail "$w WRITE requests for 200 O_DIRECT writes"
	[ "$a" -le 4 ] || t_fail "$a GETATTR requests for 200 O_DIRECT writes"
	[ "$x" -le 2 ] || t_fail "$x GETXATTR requests for 200 O_DIRECT writes"
else
	t_log "Linux $(uname -r) has no direct_io_allow_mmap (6.6 and later): not counted"
fi

t_log "O_DIRECT beside buffered I/O and mappings, as on tmpfs (dio_mix.py)"
for seed in 1 2 3 4; do
	a=$("$PY" "$DIO_MIX" "$REF/mix" 2500 $seed) || t_fail "dio_mix seed $seed on tmpfs: $a"
	# a hang is a failure too (a page fault's READ waiting on itself)
	b=$(timeout -k 10 120 "$PY" "$DIO_MIX" "$M/mix" 2500 $seed) ||
		{ echo "$b" | tail -n 12 | sed 's/^/    /'; t_fail "dio_mix seed $seed on raidfs"; }
	[ "$a" = "$b" ] || t_fail "dio_mix seed $seed: '$b' on raidfs, '$a' on tmpfs"
done

t_log "an O_DIRECT write drops capabilities and, by nobody, setuid/setgid"
for d in "$REF" "$M"; do
	printf '0123456789' >"$d/caps"
	chmod 755 "$d/caps"
	printf '0123456789' >"$d/suid"
	chmod 6777 "$d/suid"
	if command -v setcap >/dev/null; then
		setcap cap_net_raw+ep "$d/caps" || t_fail "setcap in $d"
	fi
	direct_writes "$d/caps" 1
	t_as_nobody "$PY" -c '
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
os.pwrite(fd, mmap.mmap(-1, 4096), 0)
os.close(fd)' "$d/suid" || t_fail "O_DIRECT write by nobody in $d"
done
if command -v getcap >/dev/null; then
	[ -z "$(getcap "$REF/caps")" ] || t_fail "tmpfs kept capabilities (the test is wrong)"
	[ -z "$(getcap "$M/caps")" ] || t_fail "an O_DIRECT write kept $(getcap "$M/caps")"
	t_log "a store through a shared mapping of an O_DIRECT file keeps them"
	for d in "$REF" "$M"; do
		printf '%4096s' x >"$d/mapped"
		chmod 755 "$d/mapped"
		setcap cap_net_raw+ep "$d/mapped" || t_fail "setcap in $d"
		"$PY" -c '
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_DIRECT)
m = mmap.mmap(fd, 4096)
m[0:4] = b"MMAP"
m.flush()
m.close()
os.close(fd)' "$d/mapped" || t_fail "shared mapping of an O_DIRECT file in $d"
	done
	[ -n "$(getcap "$REF/mapped")" ] || t_fail "tmpfs dropped capabilities on a store (the test is wrong)"
	[ -n "$(getcap "$M/mapped")" ] || t_fail "a store through a mapping dropped the capabilities"
	[ "$(head -c 4 "$M/mapped")" = MMAP ] || t_fail "the store did not reach the file"
fi
a=$(stat -c %a "$REF/suid") b=$(stat -c %a "$M/suid")
[ "$a" = "$b" ] || t_fail "nobody's O_DIRECT write: mode $b on raidfs, $a on tmpfs"

t_log "what was written direct reads the same after a remount"
direct_writes "$M/kept" 300
direct_writes "$REF/kept" 300
sum=$(sha256sum <"$REF/kept")
[ "$(sha256sum <"$M/kept")" = "$sum" ] || t_fail "O_DIRECT file differs before the remount"
t_umount "$M"
t_mount "$IMGS" "$M"
[ "$(sha256sum <"$M/kept")" = "$sum" ] || t_fail "O_DIRECT file differs after a remount"
t_umount "$M"
