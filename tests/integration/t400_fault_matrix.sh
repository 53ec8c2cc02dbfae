#!/bin/bash
# The fault matrix (issue 8): one member of an array misbehaves - zeros or
# random bytes over a range, truncation to 0, a shrink, a stale copy of its
# image put back, lost writes, misdirected writes, EIO on read - in each
# region of the member (superblock copies at the start, journal ring,
# checksum table, data, superblock copies at the end), offline and while
# mounted and busy, at every level with redundancy.  Every file reads back
# exactly, never wrong bytes; the fault is logged naming the member and
# counted against it; fsck -y, then fsck -n -f is clean and every file is
# intact.  The members are images served by faultfs (tests/tools/faultfs.c),
# which makes them fail on command.  tests/integration/faults.py runs the
# cases and prints the table kind x region x level -> result.
#
# make test runs a sample that covers every kind, region, level and mode;
# RAIDFS_FAULTS=full (make faults) runs every member of every case,
# RAIDFS_FAULTS="ID..." only the cases named (KIND/REGION/MODE/raidL/mM,
# as KNOWN_FAULTS names them), and RAIDFS_FAULTS_TABLE=FILE keeps the
# table.  The members are loop devices over the images (the partition and
# disk path) in every other case of the sample, and where
# RAIDFS_FAULTS_LOOP=all (none, half) says so.  Cases that fail because of a
# bug not fixed yet are listed in tests/integration/KNOWN_FAULTS with the
# reason; they are reported as known and do not fail the test.
. "$(dirname "$0")/lib.sh"
t_setup
FAULTFS=$(t_tool faultfs)
T_MOUNTS+=("$T/mnt" "$T/ff")   # in this order: raidfs sits on faultfs

loop=${RAIDFS_FAULTS_LOOP:-}
case ${RAIDFS_FAULTS:-sample} in
sample) which=(--sample) loop=${loop:-half} ;;
full) which=(--full) ;;
*) read -ra which <<<"$RAIDFS_FAULTS"; which=(--case "${which[@]}") ;;
esac
t_wait_bg "$PY" "$TESTS_DIR/faults.py" --work "$T" --bin "$RAIDFS_BIN" \
	--faultfs "$FAULTFS" --known "$TESTS_DIR/KNOWN_FAULTS" \
	--table "${RAIDFS_FAULTS_TABLE:-$T/table}" --loop "${loop:-none}" \
	"${which[@]}" ||
	t_fail "a fault case failed (see above; its log is shown)"
