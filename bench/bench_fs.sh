#!/usr/bin/env bash
# bench_fs.sh: raidfs mounted on a 4-member RAID 5 of image files in tmpfs,
# side by side with the same workload on the tmpfs itself, in one run.
#
#   bench/bench_fs.sh [MiB] [FILES]     (root; uses build/ release binaries)
#
# Sequential write (dd, 1 MiB blocks, fsync at the end), sequential read
# (page cache dropped first), and file creates per second (FILES empty
# files in one directory, then sync).
set -eu
MIB=${1:-1024}
FILES=${2:-20000}
BIN=$(cd "$(dirname "$0")/../build" && pwd)
W=$(mktemp -d /dev/shm/raidfs-bench.XXXXXX)
PID=
cleanup() {
	set +e
	mountpoint -q "$W/mnt" && umount "$W/mnt"
	[ -n "$PID" ] && { for _ in $(seq 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done; }
	rm -rf "$W"
}
trap cleanup EXIT

now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", n / (b - a) }'; }
drop() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; }

run() {	# DIR -> "write_MBps read_MBps creates_per_s"
	local d=$1 t0 t1 t2 t3 t4 w r c
	t0=$(now)
	dd if=/dev/zero of="$d/big" bs=1M count="$MIB" conv=fsync status=none
	t1=$(now)
	drop
	t2=$(now)
	dd if="$d/big" of=/dev/null bs=1M status=none
	t3=$(now)
	mkdir "$d/many"
	(cd "$d/many" && seq "$FILES" | xargs touch)
	sync
	t4=$(now)
	w=$(rate "$MIB" "$t0" "$t1")
	r=$(rate "$MIB" "$t2" "$t3")
	c=$(rate "$FILES" "$t3" "$t4")
	echo "$w $r $c"
}

mkdir "$W/tmpfs" "$W/mnt"
imgs=
for i in 0 1 2 3; do
	truncate -s $(( MIB * 2 / 3 + 512 ))M "$W/m$i.img"
	imgs="$imgs${imgs:+:}$W/m$i.img"
done
"$BIN/mkfs.raidfs" -q -l 5 "$W"/m?.img
"$BIN/raidfs" -f "$imgs" "$W/mnt" 2>"$W/log" &
PID=$!
for _ in $(seq 100); do mountpoint -q "$W/mnt" && break; sleep 0.1; done

read -r tw tr tc < <(run "$W/tmpfs")
read -r rw rr rc < <(run "$W/mnt")
printf '%-28s %12s %12s %14s\n' "" "write MB/s" "read MB/s" "creates/s"
printf '%-28s %12s %12s %14s\n' "tmpfs" "$tw" "$tr" "$tc"
printf '%-28s %12s %12s %14s\n' "raidfs raid5 x4 (on tmpfs)" "$rw" "$rr" "$rc"
