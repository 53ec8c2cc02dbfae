#!/bin/bash
# A read error on a survivor during a rebuild costs only the blocks
# involved: a RAID 5 with a spare, on faultfs; one block of file1 fails
# to read on its member, and the member holding that row's parity is
# failed with raidfsctl. The rebuild onto the spare goes on past the
# row and finishes (clean); status, status --json (valid against the
# schema) and UnrecoverableData (history and the alert program's
# RAIDFS_MESSAGE) name /file1 and the bytes of that block, once, also
# after the block is read again; file0 and file2 read back intact;
# `raidfsctl clear` empties the list, and a scrub lists the file again.
# A deleted file is no longer listed.  Once the sector reads again and the
# file is written again, a scrub through
# the whole array that finds nothing lost empties the list by itself, as
# ZFS's error log after a clean scrub.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/fsck_lib.sh"
t_setup

CTL=$RAIDFS_BIN/raidfsctl
SCHEMA=$TESTS_DIR/../../docs/raidfsctl-status.schema.json
[ -x "$CTL" ] || t_fail "no $CTL"
"$PY" -c 'import jsonschema' 2>/dev/null || t_skip "no python3-jsonschema"
t_faultfs

for i in 0 1 2 3; do truncate -s 24M "$T/back/m$i.img"; done
t_mkfs 5 64K -s "$T/back/m3.img" "$T/back/m0.img" "$T/back/m1.img" "$T/back/m2.img"
printf '%s\n' '#!/bin/sh' "echo \"\$RAIDFS_EVENT \$RAIDFS_MESSAGE\" >>'$T/alerts'" >"$T/alert.sh"
chmod +x "$T/alert.sh"
M=$T/mnt
SRC=$T/ff/m0.img:$T/ff/m1.img:$T/ff/m2.img:$T/ff/m3.img
t_mount "$SRC" "$M" -o "program=$T/alert.sh"
t_pattern_files "$M" 40 40 40
mkdir -p "$T/ref"
t_pattern_files "$T/ref" 40 40 40
t_umount "$M"                    # every block in its place on the members

t_log "file1's block 5 unreadable on its member; the row's parity member failed"
read -r img off < <(t_locate_block 1 5 "$T/back/m0.img" "$T/back/m1.img" "$T/back/m2.img")
[ -n "$off" ] || t_fail "file1's block 5 is on no member"
par=$(f_parity_of "$off" "$T/back/m0.img" "$T/back/m1.img" "$T/back/m2.img")
[ "$par" != "$img" ] || t_fail "the block is its row's parity"
slot=$(basename "$par" .img)
slot=${slot#m}
echo "$(basename "$img") eio-read $off 4096" >"$T/ff/.faultctl"
t_mount "$SRC" "$M" -o "program=$T/alert.sh"
"$CTL" fail "$M" "$slot" >/dev/null || t_fail "fail $slot"
for i in $(seq 200); do
	"$CTL" events "$M" | grep -q "RebuildFinished slot=$slot" && break
	sleep 0.05
done
"$CTL" events "$M" >"$T/events"
grep -q "RebuildFinished slot=$slot .*progress=100" "$T/events" \
	|| t_fail "the rebuild did not go through: $(cat "$T/events")"
# the rebuild left a hole (the lost block's row): the daemon's verifying
# scrub runs, and finds it still lost
for i in $(seq 200); do
	"$CTL" events "$M" | grep -q "ScrubFinished" && break
	sleep 0.05
done
[ "$("$CTL" status "$M" | head -1)" = "$M: clean" ] \
	|| t_fail "not clean after the rebuild: $("$CTL" status "$M")"

t_log "the damaged file is listed, once; the others are intact"
for i in $(seq 100); do "$CTL" status "$M" | grep -q "/file1: bytes" && break; sleep 0.05; done
"$CTL" status "$M" >"$T/status"
grep -q "^    /file1: bytes 20480-24575\$" "$T/status" || t_fail "status: $(cat "$T/status")"
"$CTL" status -v "$M" | grep -q "/file1: bytes 20480-24575 (inode [0-9]*)" \
	|| t_fail "status -v: no inode"
cmp -s "$T/ref/file0" "$M/file0" || t_fail "file0 differs"
cmp -s "$T/ref/file2" "$M/file2" || t_fail "file2 differs"
dd if="$M/file1" of=/dev/null bs=4096 skip=5 count=1 2>/dev/null && t_fail "file1's lost block read"
cmp -s -n 20480 "$T/ref/file1" "$M/file1" || t_fail "file1 differs before the lost block"
sleep 0.5                        # (a second lookup, if any, is done)
"$CTL" status --json "$M" >"$T/status.json" || t_fail "status --json"
"$PY" -c '
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.validate(json.load(open(sys.argv[2])), schema,
                    cls=jsonschema.Draft202012Validator)
d = json.load(open(sys.argv[2]))["arrays"][0]["damaged"]
f = d["files"]
assert [(x["path"], x["from_byte"], x["to_byte"]) for x in f] == \
    [("/file1", 20480, 24575)], d
' "$SCHEMA" "$T/status.json" || t_fail "JSON: $(cat "$T/status.json")"
"$CTL" events "$M" >"$T/events"
# the file named once (the scrub the daemon starts to verify the rebuilt
# slot, which has a hole, adds its own count of what it could not make)
[ "$(grep -c 'UnrecoverableData.*(inode' "$T/events")" -eq 1 ] || t_fail "events: $(cat "$T/events")"
grep -q "MemberDamaged slot=$slot .*1 blocks its rebuild could not make" "$T/events" \
	|| t_fail "the rebuilt slot is not said unverified: $(cat "$T/events")"
grep -q "UnrecoverableData.*/file1 (inode [0-9]*): bytes 20480-24575" "$T/events" \
	|| t_fail "UnrecoverableData names no file: $(cat "$T/events")"
for i in $(seq 100); do grep -q "^UnrecoverableData" "$T/alerts" 2>/dev/null && break; sleep 0.05; done
grep -q "^UnrecoverableData /file1 (inode [0-9]*): bytes 20480-24575" "$T/alerts" \
	|| t_fail "the program saw: $(cat "$T/alerts")"

t_log "clear empties the list; a scrub finds the block again"
"$CTL" clear "$M" >/dev/null || t_fail "clear"
"$CTL" status "$M" | grep -q "unrecoverable data" && t_fail "still listed after clear"
"$CTL" scrub start "$M" >/dev/null || t_fail "scrub start"
for i in $(seq 100); do "$CTL" scrub status "$M" | grep -q "^  scrub: finished" && break; sleep 0.05; done
"$CTL" scrub status "$M" | grep -q "^  scrub: finished.* [1-9][0-9]* unrecoverable" \
	|| t_fail "scrub: $("$CTL" scrub status "$M")"
for i in $(seq 100); do "$CTL" status "$M" | grep -q "/file1: bytes" && break; sleep 0.05; done
"$CTL" status "$M" | grep -q "^    /file1: bytes 20480-24575\$" \
	|| t_fail "the scrub's find is not listed: $("$CTL" status "$M")"
cmp -s "$T/ref/file0" "$M/file0" && cmp -s "$T/ref/file2" "$M/file2" || t_fail "a file differs after the scrub"

t_log "file1 deleted: no longer listed"
rm -f "$M/file1"
for i in $(seq 100); do "$CTL" status "$M" | grep -q "/file1" || break; sleep 0.05; done
"$CTL" status "$M" | grep -q "/file1" && t_fail "a deleted file is listed: $("$CTL" status "$M")"

t_log "a scrub meets the lost block again: in no file now"
"$CTL" scrub start --wait "$M" >/dev/null 2>&1 && t_fail "scrub --wait: 0 with a block lost"
for i in $(seq 100); do "$CTL" status "$M" | grep -q "unrecoverable data" && break; sleep 0.05; done
"$CTL" status --json "$M" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)["arrays"][0]["damaged"]
assert not d["files"] and d["other_blocks"] >= 1, d
' || t_fail "not counted as a block in no file: $("$CTL" status "$M")"

t_log "the sector reads again, file1 is written again: a clean scrub empties the list"
echo "$(basename "$img") clear" >"$T/ff/.faultctl"
cp "$T/ref/file1" "$M/file1" || t_fail "rewrite file1"
sync -f "$M"
"$CTL" scrub start "$M" >/dev/null || t_fail "scrub start (2)"
for i in $(seq 200); do "$CTL" scrub status "$M" | grep -q "^  scrub: finished" && break; sleep 0.05; done
"$CTL" scrub status "$M" | grep -q "^  scrub: finished.* 0 unrecoverable" \
	|| t_fail "scrub (2): $("$CTL" scrub status "$M")"
for i in $(seq 100); do "$CTL" status "$M" | grep -q "unrecoverable data" || break; sleep 0.05; done
"$CTL" status "$M" | grep -q "unrecoverable data" \
	&& t_fail "still listed after a clean scrub: $("$CTL" status "$M")"
cmp -s "$T/ref/file1" "$M/file1" || t_fail "file1 differs after its rewrite"
t_umount "$M"
exit 0
