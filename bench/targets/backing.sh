#!/usr/bin/env bash
# targets/backing.sh VERB: the backing store itself (BENCH_STORE: a tmpfs
# by default, a directory on disk with BENCH_STORE_DIR), through a bind
# mount so the jobs see it at BENCH_MNT like every other target.  This is
# also the seeds' "one member" row.
set -eu
. "$(dirname "$0")/../lib.sh"
VERB=$1
SRC=$BENCH_STORE/backing

case $VERB in
check) ;;
up) mkdir -p "$SRC" && mount --bind "$SRC" "$BENCH_MNT" ;;
down) bench_umount "$BENCH_MNT"; rm -rf "$SRC" ;;
scrubs | degrade | scrub | rebuild) bench_skip "one store has no redundancy" ;;
*) echo "backing.sh: unknown verb $VERB" >&2; exit 2 ;;
esac
