#!/bin/bash
# make demo: the first thing a new user runs.  Builds what is missing, makes
# a RAID 5 array of four sparse image files in a temporary directory,
# mounts it, copies files in, takes a member away, shows every file still
# reads correctly and the array reported as degraded, and cleans up.
set -eu

cd "$(dirname "$0")/.."
TOP=$(pwd)
BIN=${RAIDFS_BIN:-$TOP/build}
say() { printf '\n==> %s\n' "$*"; }

if [ ! -x "$BIN/raidfs" ]; then
	say "Building raidfs (make)"
	make -s all
fi
[ "$(id -u)" -eq 0 ] || { echo "demo: FUSE mounts here need root (sudo make demo)" >&2; exit 1; }

DIR=$(mktemp -d /tmp/raidfs-demo.XXXXXX)
MNT=$DIR/mnt
PID=
cleanup() {
	set +e
	if [ -n "$PID" ] && [ -e "/proc/$PID" ]; then
		umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
		wait "$PID" 2>/dev/null
	fi
	rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mount_array() {   # mount_array SOURCE [OPTIONS...]: the daemon in the background, its log in $DIR/log
	local src=$1
	shift
	: >"$DIR/log"
	"$BIN/raidfs" -f "$@" "$src" "$MNT" 2>"$DIR/log" &
	PID=$!
	for _ in $(seq 100); do
		grep -q " $MNT " /proc/mounts && break
		kill -0 "$PID" 2>/dev/null || { cat "$DIR/log"; echo "demo: mount failed" >&2; exit 1; }
		sleep 0.1
	done
	sed 's/^/    log: /' "$DIR/log"
}

unmount_array() {
	umount "$MNT"
	wait "$PID"
	PID=
}

say "Working in $DIR (removed at the end)"
say "Creating four sparse 1 GiB image files: they use no space until written"
for i in 0 1 2 3; do truncate -s 1G "$DIR/disk$i.img"; done
ls -ls "$DIR"/*.img | sed 's/^/    /'
IMGS="$DIR/disk0.img:$DIR/disk1.img:$DIR/disk2.img:$DIR/disk3.img"

say "Making a RAID 5 array of them, with an empty filesystem"
"$BIN/mkfs.raidfs" -l 5 -c 64K "$DIR"/disk*.img | sed 's/^/    /'

say "Mounting it on $MNT: raidfs $IMGS $MNT"
mkdir "$MNT"
mount_array "$IMGS"
df -h "$MNT" | sed 's/^/    /'

say "Copying some files in (this repository's sources and 20 MiB of random data)"
mkdir "$MNT/src"
cp -r "$TOP/raidcore" "$TOP/fs" "$TOP/docs" "$MNT/src/"
head -c 20M /dev/urandom >"$MNT/random.bin"
(cd "$MNT" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$DIR/sums"
echo "    $(wc -l <"$DIR/sums") files, checksums noted"

say "Unmounting (everything is flushed and the array marked clean)"
unmount_array

say "Taking a member away: disk2.img is gone, as if that disk had died"
mv "$DIR/disk2.img" "$DIR/disk2.removed"

say "Mounting again with the same command: refused, disk2.img may be a typo"
"$BIN/raidfs" -f "$IMGS" "$MNT" 2>&1 | sed 's/^/    /' || true

say "Mounting with -o degraded=allow: the array runs degraded"
mount_array "$IMGS" -o degraded=allow
grep -q DEGRADED "$DIR/log" && echo "    -> raidfs reports the array as DEGRADED, member 2 missing"

say "Reading every file back and comparing with the checksums"
if (cd "$MNT" && sha256sum --quiet -c "$DIR/sums"); then
	echo "    all $(wc -l <"$DIR/sums") files read back correctly, reconstructed from parity"
else
	echo "    SOME FILES DIFFER" >&2
	exit 1
fi

say "Writing still works while degraded"
echo "written with a member missing" >"$MNT/degraded.txt"
cat "$MNT/degraded.txt" | sed 's/^/    /'

say "Unmounting"
unmount_array

say "A new blank disk takes the place of the dead one: rebuilding it"
truncate -s 1G "$DIR/disk2.img"
echo "    fsck.raidfs -y --rebuild $DIR/disk2.img $IMGS"
rc=0
"$BIN/fsck.raidfs" -y --rebuild "$DIR/disk2.img" "$IMGS" 2>&1 | sed 's/^/    /' || rc=$?
[ "$rc" -le 1 ] || { echo "    the rebuild failed (exit $rc)" >&2; exit 1; }

say "Fully redundant again: now disk0.img dies, and every file still reads"
mv "$DIR/disk0.img" "$DIR/disk0.removed"
mount_array "$IMGS" -o degraded=allow
if (cd "$MNT" && sha256sum --quiet -c "$DIR/sums") && [ -s "$MNT/degraded.txt" ]; then
	echo "    all $(wc -l <"$DIR/sums") files (and the one written while degraded) read back correctly"
else
	echo "    SOME FILES DIFFER" >&2
	exit 1
fi

say "Unmounting and cleaning up"
unmount_array
echo "    done."
