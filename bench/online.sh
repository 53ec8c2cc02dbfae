#!/usr/bin/env bash
# bench/online.sh: issue 9's online figures, measured in one run on this
# machine (not part of make test; make bench-online):
#   - rebuild of a 4-member RAID 5 (BENCH_LEVEL) of image files at 10 %
#     and 90 % full, as MiB/s of the rebuilt member, against a sequential
#     read of one member;
#   - the catch-up of a member that was away while 1 % of the array
#     changed, against the full rebuild of the same member;
#   - what a running rebuild and a running scrub cost a concurrent fio
#     sequential reader (its MiB/s alone and meanwhile).
#   - scrub at 90 % full, as MiB/s of each member, against the same read.
# Members live in BENCH_DIR (default /dev/shm: software cost, not disks),
# BENCH_MEMBER_MB each (default 1024); the release build in BENCH_BIN
# (default build/).  With BENCH_DISK_MIBPS=N each member is a disk of N
# MiB/s (tests/tools/faultfs.c -r: busy while it works, idle time lost,
# built as build/tools/faultfs), which
# is where issue 10's "rebuild and scrub >= 0.8x the members' sequential
# read speed" can be measured: on tmpfs a member reads at memory speed.
# Prints one "name value unit" line per figure.
set -eu
BIN=${BENCH_BIN:-build}
CTL=$BIN/raidfsctl
MB=${BENCH_MEMBER_MB:-1024}
LEVEL=${BENCH_LEVEL:-5}
W=$(mktemp -d "${BENCH_DIR:-/dev/shm}/raidfs-online.XXXXXX")
M=$W/mnt
D=$W            # the member images, as the array opens them
PID=
DISKPID=
mkdir -p "$M"

cleanup() {
	mountpoint -q "$M" && { fusermount3 -u "$M" 2>/dev/null || umount "$M"; }
	[ -n "$PID" ] && wait "$PID" 2>/dev/null
	if [ -n "$DISKPID" ]; then
		fusermount3 -u "$D" 2>/dev/null || umount "$D"
		wait "$DISKPID" 2>/dev/null
	fi
	rm -rf "$W"
}
trap cleanup EXIT
now() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }
say() { printf '%-34s %10s %s\n' "$1" "$2" "$3"; }
mb_s() { awk -v b="$1" -v ms="$2" 'BEGIN { printf "%.0f", b / 1048576 / (ms / 1000) }'; }

up() {		# up SOURCE [opts]: the daemon in the foreground, PID kept
	"$BIN/raidfs" -f "$@" "$M" >>"$W/daemon.log" 2>&1 &
	PID=$!
	for _ in $(seq 400); do mountpoint -q "$M" && return 0; sleep 0.05; done
	cat "$W/daemon.log" >&2
	exit 1
}
down() {
	sync -f "$M"
	until fusermount3 -u "$M" 2>/dev/null; do sleep 0.1; done
	wait "$PID" || true
	PID=
}
state() { "$CTL" status "$M" | head -1 | sed 's/.*: //'; }
wait_clean() {
	while [ "$(state)" != clean ]; do sleep 0.02; done
}
# fill PCT: files of random data until df says PCT % used
fill() {
	local cap used mb
	read -r cap used < <(df -Pm "$M" | awk 'NR == 2 { print $3 + $4, $3 }')
	mb=$(( cap * $1 / 100 - used ))
	while [ "$mb" -gt 0 ]; do
		n=$(( mb > 64 ? 64 : mb ))
		head -c "${n}M" "$W/blob" >"$M/fill$1.$mb"
		mb=$(( mb - n ))
	done
	sync -f "$M"
}
# blank3: member 3 failed, removed and blanked (a new disk in its place)
blank3() {
	"$CTL" fail "$M" 3 >/dev/null
	"$CTL" remove "$M" 3 >/dev/null
	truncate -s 0 "$D/m3.img"
	truncate -s "${MB}M" "$D/m3.img"
}
# rebuild: the new disk added and rebuilt; ms from add to clean
rebuild() {
	local t0 t1
	blank3
	t0=$(now)
	"$CTL" add "$M" "$D/m3.img" >/dev/null
	wait_clean
	t1=$(now)
	ms "$t0" "$t1"
}
# fio_read SECONDS: sequential 1 MiB reads of the big files, MiB/s
fio_read() {
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
	fio --name=r --filename="$M/$(ls "$M" | grep '^fill90' | head -1)" \
		--rw=read --bs=1M --runtime="$1" --time_based --readonly \
		--output-format=json 2>/dev/null |
		python3 -c 'import json,sys; print(int(json.load(sys.stdin)["jobs"][0]["read"]["bw"] / 1024))'
}

if [ -n "${BENCH_DISK_MIBPS:-}" ]; then
	mkdir -p "$W/back" "$W/disks"
	"${BENCH_FAULTFS:-build/tools/faultfs}" -f -r "$BENCH_DISK_MIBPS" \
		"$W/back" "$W/disks" 2>>"$W/disks.log" &
	DISKPID=$!
	for _ in $(seq 100); do mountpoint -q "$W/disks" && break; sleep 0.05; done
	for i in 0 1 2 3; do truncate -s "${MB}M" "$W/back/m$i.img"; done
	D=$W/disks
else
	for i in 0 1 2 3; do truncate -s "${MB}M" "$W/m$i.img"; done
fi
SRC=$D/m0.img:$D/m1.img:$D/m2.img:$D/m3.img
"$BIN/mkfs.raidfs" -q -f -l "$LEVEL" -c 64K "$D"/m[0-3].img >/dev/null
head -c 64M /dev/urandom >"$W/blob"
up "$SRC"
"$CTL" set "$M" rebuild-speed-min=0 rebuild-speed-max=0 >/dev/null

t0=$(now); dd if="$D/m0.img" of=/dev/null bs=1M status=none; t1=$(now)
one=$(mb_s $((MB * 1048576)) "$(ms "$t0" "$t1")")
say "read one member (dd bs=1M)" "$one" MiB/s
of_one() { awk -v r="$1" -v o="$one" 'BEGIN { printf "%.2fx", r / o }'; }
for pct in 10 90; do
	fill "$pct"
	t=$(rebuild)
	r=$(mb_s $((MB * 1048576)) "$t")
	say "rebuild at $pct % full" "$r" \
		"MiB/s of the member ($t ms; $(of_one "$r") one member's read)"
	[ "$pct" = 90 ] && full_ms=$t
done
t0=$(now)
"$CTL" scrub start "$M" >/dev/null
until "$CTL" scrub status "$M" | head -1 | grep -q finished; do sleep 0.02; done
t1=$(now)
r=$(mb_s $((MB * 1048576)) "$(ms "$t0" "$t1")")
say "scrub at 90 % full" "$r" \
	"MiB/s of each member ($(ms "$t0" "$t1") ms; $(of_one "$r") one member's read)"

# the catch-up: member 3 away while 1 % of the array changes
down
up "$D/m0.img:$D/m1.img:$D/m2.img"
cap=$(df -Pm "$M" | awk 'NR == 2 { print $3 + $4 }')
f=$(ls "$M" | grep '^fill90' | head -1)
dd if="$W/blob" of="$M/$f" bs=1M count=$(( cap / 100 )) conv=notrunc status=none
sync -f "$M"
down
t0=$(now)
up "$SRC"
wait_clean
t1=$(now)
say "catch-up after 1 % changed" "$(ms "$t0" "$t1")" \
	"ms, mount to clean (full rebuild: $full_ms ms)"
grep 'catch-up' "$W/daemon.log" | tail -2 || true

# a concurrent fio reader: alone, during a rebuild, during a scrub
alone=$(fio_read 2)
say "fio seq read alone" "$alone" MiB/s
blank3
"$CTL" add "$M" "$D/m3.img" >/dev/null
during=$(fio_read 2)
say "fio seq read during a rebuild" "$during" "MiB/s ($(state) at its end)"
wait_clean
# md's speed_limit_min: while the array serves I/O the rebuild yields to
# the minimum
"$CTL" set "$M" rebuild-speed-min=100M >/dev/null
blank3
"$CTL" add "$M" "$D/m3.img" >/dev/null
during=$(fio_read 2)
say "fio ... during a rebuild, min 100M" "$during" "MiB/s ($(state) at its end)"
wait_clean
"$CTL" set "$M" rebuild-speed-min=0 >/dev/null
"$CTL" scrub start "$M" >/dev/null
during=$(fio_read 2)
sc=$("$CTL" scrub status "$M" | head -1)
say "fio seq read during a scrub" "$during" "MiB/s (at its end: $sc)"
"$CTL" scrub stop "$M" >/dev/null 2>&1 || true
down
