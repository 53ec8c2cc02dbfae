#!/bin/bash
# mkfs.raidfs creates an array at every level, with every spelling of the
# level, and the result is a real array: a second mkfs without -f finds the
# raidfs superblock on every member and names the array, and (when the
# daemon is built) the array mounts and keeps a file.  Also `mkfs -t raidfs`.
. "$(dirname "$0")/lib.sh"

m_setup

# level, members, spares, spelling
cases=(
	"0 2 0 0" "0 3 0 raid0" "1 2 0 1" "1 3 1 mirror" "4 3 0 raid4"
	"5 3 0 5" "5 4 1 RAID5" "6 4 0 raid6" "6 5 1 6" "10 2 0 10"
	"10 4 0 Raid10" "10 3 0 raid10"
)
n=0
for c in "${cases[@]}"; do
	read -r level members spares spelling <<<"$c"
	n=$((n + 1))
	imgs=() sp=()
	for i in $(seq "$members"); do
		truncate -s 24M "$T/c$n-m$i.img"
		imgs+=("$T/c$n-m$i.img")
	done
	for i in $(seq "$spares"); do
		truncate -s 24M "$T/c$n-s$i.img"
		sp+=(-s "$T/c$n-s$i.img")
	done
	t_log "level $level ($spelling): $members members, $spares spares"
	uuid=$(cat /proc/sys/kernel/random/uuid)
	"$MKFS" -l "$spelling" -c 16K -L "lvl$level" -U "$uuid" "${sp[@]}" \
		"${imgs[@]}" >"$T/out" 2>"$T/err" \
		|| t_fail "mkfs -l $spelling: $(cat "$T/err")"
	grep -q "level     raid$level, $members member" "$T/out" || t_fail "level line: $(cat "$T/out")"
	grep -q "uuid      $uuid" "$T/out" || t_fail "uuid not reported"
	grep -q "chunk     16 KiB" "$T/out" || t_fail "chunk not reported"
	grep -qE "capacity  [0-9.]+ MiB" "$T/out" || t_fail "capacity not reported"
	src=$(IFS=:; echo "${imgs[*]}")
	[ "$spares" -gt 0 ] && src="$src:$T/c$n-s1.img"
	grep -qF "fstab     $src /mnt/point raidfs defaults,nofail 0 0" "$T/out" \
		|| t_fail "fstab line: $(grep fstab "$T/out")"
	[ -s "$T/err" ] && t_fail "stderr on success: $(cat "$T/err")"

	# The array is there: every member and spare now refuses without -f.
	rc=0
	"$MKFS" -l "$level" "${sp[@]}" "${imgs[@]}" >/dev/null 2>"$T/err" || rc=$?
	[ $rc -eq 1 ] || t_fail "second mkfs without -f: exit $rc"
	for img in "${imgs[@]}"; do
		grep -q "$img holds member .* of the raidfs raid$level array $uuid (label 'lvl$level')" "$T/err" \
			|| t_fail "no raidfs signature reported on $img: $(cat "$T/err")"
	done
	[ "$spares" -eq 0 ] || grep -q "c$n-s1.img holds a spare of the raidfs raid$level array $uuid" "$T/err" \
		|| t_fail "spare not reported: $(cat "$T/err")"
done

t_log "default level is 5 with 64 KiB chunks; -q prints nothing"
for i in 0 1 2; do truncate -s 24M "$T/d$i.img"; done
out=$("$MKFS" -q "$T"/d0.img "$T"/d1.img "$T"/d2.img 2>&1) || t_fail "mkfs -q: $out"
[ -z "$out" ] || t_fail "-q printed: $out"
"$MKFS" -n -f "$T"/d0.img "$T"/d1.img "$T"/d2.img >"$T/out" || t_fail "-n -f"
grep -q "level     raid5, 3 members" "$T/out" || t_fail "default level: $(cat "$T/out")"
grep -q "chunk     64 KiB" "$T/out" || t_fail "default chunk: $(cat "$T/out")"

t_log "mkfs -t raidfs finds mkfs.raidfs on PATH"
for i in 0 1 2; do truncate -s 24M "$T/p$i.img"; done
PATH=$RAIDFS_BIN:$PATH mkfs -t raidfs -q -l 5 "$T"/p0.img "$T"/p1.img "$T"/p2.img \
	|| t_fail "mkfs -t raidfs failed"
rc=0
"$MKFS" "$T"/p0.img "$T"/p1.img "$T"/p2.img 2>"$T/err" >/dev/null || rc=$?
[ $rc -eq 1 ] && grep -q "p0.img holds member 0 of 3 of the raidfs raid5" "$T/err" \
	|| t_fail "mkfs -t raidfs did not create an array: $(cat "$T/err")"

if m_can_mount; then
	t_log "the new array mounts, keeps a file, and unmounts clean"
	for lv in 6 10; do
		for i in 0 1 2 3; do truncate -s 64M "$T/mnt$lv-$i.img"; done
		"$MKFS" -q -l $lv "$T"/mnt$lv-{0,1,2,3}.img || t_fail "mkfs -l $lv"
		t_mount "$T/mnt$lv-0.img:$T/mnt$lv-1.img:$T/mnt$lv-2.img:$T/mnt$lv-3.img" "$T/mnt$lv"
		head -c 3M /dev/urandom >"$T/ref"
		cp "$T/ref" "$T/mnt$lv/f"
		t_umount "$T/mnt$lv"
		t_mount "$T/mnt$lv-0.img:$T/mnt$lv-1.img:$T/mnt$lv-2.img:$T/mnt$lv-3.img" "$T/mnt$lv"
		cmp "$T/ref" "$T/mnt$lv/f" || t_fail "file differs after remount (raid$lv)"
		t_umount "$T/mnt$lv"
	done
else
	t_log "no raidfs daemon built: mount check skipped"
fi
t_log "ok"
