#!/usr/bin/env bash
# targets/ceiling.sh VERB [xattr]: the FUSE passthrough ceiling, libfuse's
# passthrough_ll (bench/ceiling/ceiling_ll.c: max_write 1 MiB, splice, the
# writeback cache) over a directory of BENCH_STORE: what any FUSE
# filesystem on this store can at best reach.  No redundancy: no degrade,
# scrub or rebuild.  With xattr (target ceiling-xattr) it also serves
# extended attributes, as raidfs does: the kernel then asks for
# security.capability before every write(2) (file_remove_privs; only
# FUSE_HANDLE_KILLPRIV_V2, which libfuse 3.14 cannot negotiate, spares
# it), a round trip that the plain ceiling answers once with ENOSYS.
set -eu
. "$(dirname "$0")/../lib.sh"
VERB=$1 OPTS=writeback
[ "${2:-}" != xattr ] || OPTS=writeback,xattr
EXE=$BENCH_BIN/bench/ceiling_ll
SRC=$BENCH_STORE/$BENCH_TARGET-src

case $VERB in
check)
	[ -x "$EXE" ] || bench_skip "no $EXE (libfuse3-dev's examples: make bench-deps)" ;;
up)
	mkdir -p "$SRC"
	"$EXE" -f -o source="$SRC",$OPTS "$BENCH_MNT" >/dev/null 2>>"$BENCH_TGT/log" &
	echo $! >"$BENCH_TGT/pids"
	bench_wait_mount "$BENCH_MNT" "$!" ;;
down)
	bench_umount "$BENCH_MNT"
	pid=$(cat "$BENCH_TGT/pids" 2>/dev/null || true)
	[ -z "$pid" ] || bench_wait_exit "$pid"
	: >"$BENCH_TGT/pids"
	rm -rf "$SRC" ;;
scrubs | degrade | scrub | rebuild) bench_skip "the ceiling has no redundancy" ;;
*) echo "ceiling.sh: unknown verb $VERB" >&2; exit 2 ;;
esac
