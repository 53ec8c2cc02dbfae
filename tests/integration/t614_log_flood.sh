#!/bin/bash
# Beyond the redundancy the log stays readable: a RAID 5 of 4 on faultfs
# loses member 1 (vanish), then member 0 reads zeros; 10 s of re-reading
# 20 files get EIO (never wrong data), and the daemon says "kept; its data
# is suspect" once per member (it said it at every flush: 15,000 lines in
# 10 s) and
# at most 10 "unrecoverable data" lines a second, then a count (past the
# damage list's bounds every block met again was new: one line each).
. "$(dirname "$0")/lib.sh"
t_setup
t_faultfs

for i in 0 1 2 3; do truncate -s 100M "$T/back/m$i.img"; done
t_mkfs 5 64K "$T/back/m0.img" "$T/back/m1.img" "$T/back/m2.img" "$T/back/m3.img"
M=$T/mnt
SRC=$T/ff/m0.img:$T/ff/m1.img:$T/ff/m2.img:$T/ff/m3.img
t_mount "$SRC" "$M" -o cache_mb=4     # reads reach the members
for i in $(seq 1 20); do head -c 1M /dev/urandom >"$T/ref$i"; cp "$T/ref$i" "$M/f$i"; done
sync -f "$M"

t_log "member 1 vanishes, then member 0 reads zeros"
echo "m1.img vanish" >"$T/ff/.faultctl"
sleep 2; touch "$M/x"; sync -f "$M" 2>/dev/null || true; sleep 2
echo "m0.img zero-read 0 100M" >"$T/ff/.faultctl"
from=$(($(wc -l <"$T/daemon.log") + 1))
start=$SECONDS wrong=0 eio=0
while [ $((SECONDS - start)) -lt 10 ]; do
	for i in $(seq 1 20); do
		dd if="$M/f$i" iflag=nocache count=0 status=none 2>/dev/null || true
		if timeout 20 cat "$M/f$i" >"$T/got" 2>>"$T/dd.err"; then
			cmp -s "$T/got" "$T/ref$i" || wrong=$((wrong + 1))
		else
			eio=$((eio + 1))
		fi
	done
done
secs=$((SECONDS - start))
tail -n +"$from" "$T/daemon.log" >"$T/flood.log"
kept=$(grep -c "kept; its data is suspect" "$T/flood.log" || true)
lost=$(grep -c "unrecoverable data:" "$T/flood.log" || true)
t_log "$secs s: $eio reads failed, $wrong wrong; $kept 'kept' lines, $lost 'unrecoverable data' lines, $(wc -l <"$T/flood.log") in all"
[ "$wrong" -eq 0 ] || t_fail "$wrong reads returned wrong data"
[ "$eio" -gt 0 ] || { head -5 "$T/dd.err"; cat "$T/ff/.faultctl"; t_fail "no read failed: the faults did not take"; }
[ "$kept" -le 4 ] || t_fail "'kept; its data is suspect' said $kept times (4 members)"
[ "$lost" -le $((10 * (secs + 2) + secs + 2)) ] ||
	t_fail "$lost 'unrecoverable data' lines in $secs s (10 a second, and a count)"
# the array lost data: its close may say so; only the daemon's exit counts
pid=${T_PID_OF[$M]}
t_umount_idle "$M" || t_fail "umount"
wait "$pid" || true
unset "T_PID_OF[$M]"
exit 0
