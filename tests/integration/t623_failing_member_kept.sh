#!/bin/bash
# A RAID 5 member whose reads keep failing over a range (bad sectors that
# a rewrite does not cure; faultfs eio-read) is kept - without it the
# array would have no redundancy left - but status no longer calls it a
# plain healthy member: FAILING, replace it (--json "kept_failing"), and
# its "repaired" counter does not grow with rewrites that do not read back.
# Before, status said "clean"/"active" with "repaired" growing by the
# same 1,200 blocks on every read pass (a tester's find, T1 #2).  Every
# file still reads.
. "$(dirname "$0")/lib.sh"
t_setup
. "$TESTS_DIR/ctl_lib.sh"
t_faultfs

for i in 0 1 2 3; do truncate -s 96M "$T/back/m$i.img"; done
t_mkfs 5 64K "$T/back/m0.img" "$T/back/m1.img" "$T/back/m2.img" "$T/back/m3.img"
M=$T/mnt
t_mount "$T/ff/m0.img:$T/ff/m1.img:$T/ff/m2.img:$T/ff/m3.img" "$M"
head -c 16M /dev/urandom >"$T/src"
for i in 1 2 3 4; do cp "$T/src" "$M/f$i"; done
sync -f "$M/f1"
echo "m1.img eio-read 2M 60M" >"$T/ff/.faultctl"

device_field() {        # device_field SLOT KEY: from status --json
	"$CTL" status --json "$M" | "$PY" -c '
import json, sys
a = json.load(sys.stdin)["arrays"][0]
d = [d for d in a["devices"] if d["slot"] == int(sys.argv[1])][0]
print(json.dumps(d.get(sys.argv[2])))' "$1" "$2"
}

for pass in 1 2; do
	for i in 1 2 3 4; do
		dd if="$M/f$i" of=/dev/null iflag=direct bs=64K status=none ||
			t_fail "pass $pass: f$i does not read"
		cmp -s "$T/src" "$M/f$i" || t_fail "pass $pass: f$i differs"
	done
done
# the verdict waits out its settle time (fail.c)
for _ in $(seq 100); do
	[ "$(device_field 1 kept_failing)" = true ] && break
	sleep 0.1
done
[ "$(device_field 1 kept_failing)" = true ] ||
	t_fail "member 1 not said failing: $("$CTL" status -v "$M")"
[ "$(device_field 1 state)" = '"active"' ] || t_fail "member 1 not kept"
[ "$(device_field 1 repaired)" = 0 ] ||
	t_fail "repairs that do not read back counted: $(device_field 1 repaired)"
"$CTL" status "$M" | grep -q "FAILING: more read or checksum errors than fault a member" ||
	t_fail "status does not say it: $("$CTL" status "$M")"
validate
echo "m1.img clear" >"$T/ff/.faultctl"
t_umount "$M"
t_log "ok"
