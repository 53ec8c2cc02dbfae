#!/bin/bash
# fsck -y on a filesystem a crash left unclean puts its journal in place
# and frees its orphans, as e2fsck recovers a journal: a RAID 5 whose
# daemon is killed with a 16 MiB file unlinked while held open.  -y says
# what it replayed and freed; the next fsck -n -f replays nothing and is
# clean, and the mount finds a clean filesystem with the space back.
# Before, -y replayed in memory only and said "replayed ... clean": every
# later fsck replayed the same transactions again, and the orphan's space
# stayed used until the next mount (a tester's find).
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

t_images 3 64M
t_mkfs 5 64K "${IMG_LIST[@]}"
M=$T/mnt
t_mount "$IMGS" "$M"
for i in 1 2 3; do echo "file $i" >"$M/f$i"; done
head -c 16M /dev/urandom >"$M/orphan"
"$PY" - "$M" "$T" <<'PY' &
import os, sys, time
d = sys.argv[1]
for f in ("f1", "f2", "f3", "orphan"):
    fd = os.open(os.path.join(d, f), os.O_RDONLY); os.fsync(fd); os.close(fd)
fd = os.open(os.path.join(d, "orphan"), os.O_RDONLY)
os.unlink(os.path.join(d, "orphan"))
dfd = os.open(d, os.O_RDONLY); os.fsync(dfd); os.close(dfd)
open(os.path.join(sys.argv[2], "held"), "w").close()
time.sleep(60)
PY
holder=$!
T_PIDS+=("$holder")
for i in $(seq 200); do [ -e "$T/held" ] && break; sleep 0.05; done
[ -e "$T/held" ] || t_fail "the holder did not start"
pid=${T_PID_OF[$M]}
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null || true
RAIDFS_UMOUNT_WAIT=10 t_umount_idle "$M" 2>/dev/null || umount -l "$M"
unset "T_PID_OF[$M]"

t_log "fsck -y replays the journal to the members and frees the orphan"
rc=0
"$FSCK" -y "$IMGS" >"$T/fsck1" 2>&1 || rc=$?
[ $rc -eq 0 ] || t_fail "fsck -y exited $rc: $(cat "$T/fsck1")"
grep -q "journal: [1-9][0-9]* transactions replayed, 1 orphan inodes freed" "$T/fsck1" \
	|| t_fail "fsck -y: $(cat "$T/fsck1")"
rc=0
"$FSCK" -n -f "$IMGS" >"$T/fsck2" 2>&1 || rc=$?
[ $rc -eq 0 ] || t_fail "fsck -n -f exited $rc: $(cat "$T/fsck2")"
grep -q "replayed" "$T/fsck2" && t_fail "the second fsck replayed again: $(cat "$T/fsck2")"
: >"$T/daemon.log"
t_mount "$IMGS" "$M"
grep -q "not unmounted cleanly" "$T/daemon.log" && t_fail "the mount replayed again"
for i in 1 2 3; do [ "$(cat "$M/f$i")" = "file $i" ] || t_fail "f$i differs"; done
[ -e "$M/orphan" ] && t_fail "the orphan came back"
used=$(df -B1M --output=used "$M" | tail -1)
[ "$used" -lt 16 ] || t_fail "the orphan's space still used: $used MiB used"
t_umount "$M"
t_log "ok"
