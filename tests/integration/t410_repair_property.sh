#!/bin/bash
# A property of repair (issue 8): random damage to one member - zeros,
# random bytes, the old contents of the range (writes lost there), EIO,
# a shrink or truncation - over a random range of a random member at a
# random level, then fsck -y -f (a full pass: nothing recorded the damage;
# and --rebuild onto a member left out): the set of files that read
# correctly (read-only mount) never shrinks, every file reads correctly,
# and a second fsck -n -f finds nothing.  Seeded; the seed is printed.
# RAIDFS_PROPERTY_ITERS (8) and RAIDFS_PROPERTY_SEED (8) change the run;
# make faults runs many more with a new seed.  Every other round serves
# the members as loop devices (RAIDFS_FAULTS_LOOP: half, all or none).
# Known failures: entries
# "property/KIND/..." in tests/integration/KNOWN_FAULTS.
. "$(dirname "$0")/lib.sh"
t_setup
FAULTFS=$(t_tool faultfs)
T_MOUNTS+=("$T/mnt" "$T/ff")

t_wait_bg "$PY" "$TESTS_DIR/faults.py" --work "$T" --bin "$RAIDFS_BIN" \
	--faultfs "$FAULTFS" --known "$TESTS_DIR/KNOWN_FAULTS" \
	--table "${RAIDFS_PROPERTY_TABLE:-$T/table}" \
	--loop "${RAIDFS_FAULTS_LOOP:-half}" \
	--property "${RAIDFS_PROPERTY_ITERS:-8}" --seed "${RAIDFS_PROPERTY_SEED:-8}" ||
	t_fail "repair property (see above)"
