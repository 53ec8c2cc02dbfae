#!/bin/bash
# Bad input writes nothing (issue 8): a mount that fails and a rebuild that
# is refused leave every member image bit for bit as it was, right after
# the command and a few seconds later (nothing goes on writing in the
# background).  Mounts: a configuration naming another array's uuid (image
# files and loop devices), a cache larger than memory, degraded=refuse
# with a member missing.  Rebuilds (fsck -y --rebuild, no -f): onto a
# member of another array, onto a target smaller than the members, onto a
# member of a mounted array (with -f); options the kernel refuses
# (an empty fsname=).  A daemon that mounts after all
# (the cache is not allocated up front) is no failure: nothing failed.
# Known failures: tests/integration/KNOWN_FAULTS.
. "$(dirname "$0")/lib.sh"
t_known_faults
t_setup
FSCK=$RAIDFS_BIN/fsck.raidfs
LATER=${RAIDFS_NOWRITE_WAIT:-3}

t_images 4 48M a
A=("${IMG_LIST[@]}")
A_SRC=$IMGS
t_mkfs 5 64K "${A[@]}"
t_images 3 48M b
B=("${IMG_LIST[@]}")
B_SRC=$IMGS
t_mkfs 5 64K "${B[@]}"
for src in "$A_SRC" "$B_SRC"; do
	t_mount "$src" "$T/mnt"
	head -c 3M /dev/urandom >"$T/mnt/file"
	mkdir "$T/mnt/dir" && echo hello >"$T/mnt/dir/small"
	t_umount "$T/mnt"
done
truncate -s 16M "$T/small.img"
ALL=("${A[@]}" "${B[@]}" "$T/small.img")
mkdir "$T/pristine"
cp --sparse=always "${ALL[@]}" "$T/pristine/"

restore() { cp --sparse=always "$T"/pristine/*.img "$T/"; }

# unchanged NAME CMD...: CMD must fail, and leave every image as it was,
# now and $LATER seconds later.  Every check starts from the images as
# they were made (an earlier check that wrote must not hide a later one).
unchanged() {
	local name=$1 rc=0
	shift
	[ -n "${KEEP_IMAGES:-}" ] || restore
	rm -f "$T/mounted"
	t_sums "${ALL[@]}" >"$T/before"
	"$@" >"$T/$name.out" 2>&1 || rc=$?
	t_sums "${ALL[@]}" >"$T/after"
	sleep "$LATER"
	t_sums "${ALL[@]}" >"$T/later"
	if [ $rc -eq 0 ] && [ -e "$T/mounted" ] && [ -n "${MOUNT_MAY_WORK:-}" ]; then
		t_log "$name: mounted after all (nothing failed, nothing to check)"
		return 0
	fi
	if [ $rc -eq 0 ]; then
		t_log "$name: the command succeeded (it must be refused)"
		sed 's/^/    /' "$T/$name.out" | tail -n 10
		return 1
	fi
	if ! cmp -s "$T/before" "$T/after" || ! cmp -s "$T/before" "$T/later"; then
		t_log "$name: images changed (exit $rc):"
		diff "$T/before" "$T/later" | sed 's/^/    /'
		sed 's/^/    /' "$T/$name.out" | tail -n 10
		return 1
	fi
	t_log "$name: refused (exit $rc), images unchanged"
}

# mount_fails SOURCE [raidfs options]: the daemon must exit without
# mounting; a daemon that mounted after all is unmounted again.
mount_fails() {
	local src=$1 rc=0
	shift
	t_try_mount "$src" "$T/mnt" "$@" || rc=$?
	if t_is_mounted "$T/mnt"; then
		t_umount "$T/mnt"
		: >"$T/mounted"
		return 0
	fi
	return $rc
}

other_uuid=$(cat /proc/sys/kernel/random/uuid)
cat >"$T/wrong-uuid.conf" <<EOF
array {
	uuid = "$other_uuid"
	members = { $(printf '"%s", ' "${A[@]}" | sed 's/, $//') }
}
EOF
k_check nowrite/mount-wrong-uuid unchanged mount-wrong-uuid \
	mount_fails "$T/wrong-uuid.conf"

loops=()
for img in "${A[@]}"; do
	l=$(losetup -f --show "$img") || t_skip "no loop devices"
	T_LOOPS+=("$l")
	loops+=("$l")
done
cat >"$T/wrong-uuid-loop.conf" <<EOF
array {
	uuid = "$other_uuid"
	members = { $(printf '"%s", ' "${loops[@]}" | sed 's/, $//') }
}
EOF
k_check nowrite/mount-wrong-uuid-loop unchanged mount-wrong-uuid-loop \
	mount_fails "$T/wrong-uuid-loop.conf"
# a member on a read-only loop device (losetup -r, a write-protected
# disk): refused, not taken, faulted at its first superblock write and
# the array written degraded around it (a tester's find)
ro_loop=$(losetup -r -f --show "${A[2]}") || t_fail "losetup -r"
T_LOOPS+=("$ro_loop")
k_check nowrite/mount-readonly-member unchanged mount-readonly-member \
	mount_fails "${loops[0]}:${loops[1]}:$ro_loop:${loops[3]}"
losetup -d "$ro_loop"
for l in "${loops[@]}"; do losetup -d "$l"; done
T_LOOPS=()

# far more memory than this machine has; ASan must fail the allocation
# as libc would (return NULL), not abort the daemon
huge=$(( $(awk '/MemTotal/ { print $2 }' /proc/meminfo) / 1024 * 64 ))
mount_fails_malloc() {
	ASAN_OPTIONS="$ASAN_OPTIONS:allocator_may_return_null=1" mount_fails "$@"
}
MOUNT_MAY_WORK=1 k_check nowrite/mount-cache-too-big unchanged \
	mount-cache-too-big mount_fails_malloc "$A_SRC" -o "cache_mb=$huge"

# options libfuse passes on and the kernel's mount(2) refuses: before,
# the filesystem was opened (and closed clean) first, and wrote
k_check nowrite/mount-kernel-refuses-fsname unchanged \
	mount-kernel-refuses-fsname mount_fails "$A_SRC" -o fsname=

missing_src=${A_SRC/${A[2]}/$T/gone.img}
k_check nowrite/mount-degraded-refuse unchanged mount-degraded-refuse \
	mount_fails "$missing_src" -o degraded=refuse

k_check nowrite/rebuild-foreign-member unchanged rebuild-foreign-member \
	"$FSCK" -y --rebuild "${B[1]}" "${A_SRC/${A[2]}/${B[1]}}"
k_check nowrite/rebuild-too-small unchanged rebuild-too-small \
	"$FSCK" -y --rebuild "$T/small.img" "${A_SRC/${A[2]}/$T/small.img}"

restore
t_mount "$B_SRC" "$T/mnt"
KEEP_IMAGES=1 k_check nowrite/rebuild-in-use unchanged rebuild-in-use \
	"$FSCK" -y -f --rebuild "${B[1]}" "${A_SRC/${A[2]}/${B[1]}}"
t_umount "$T/mnt"

k_done
