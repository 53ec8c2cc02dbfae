#!/bin/bash
# Model-based random test (tests/integration/model.py) at every level,
# healthy and degraded: the same random create / write / truncate / rename /
# link / unlink / mkdir / rmdir / fsync / remount sequence on raidfs and on
# a reference directory in tmpfs, compared after every step.  RAID 0 has
# no degraded run (it has no redundancy).  Set RAIDFS_MODEL_OPS for longer.
. "$(dirname "$0")/lib.sh"
t_setup

OPS=${RAIDFS_MODEL_OPS:-240}
REF_BASE=$(mktemp -d /dev/shm/raidfs-model.XXXXXX)
T_RM_AT_EXIT+=("$REF_BASE")

# level members missing-slots...
CONFIGS="0:2: 1:2: 1:2:1 4:3: 4:3:0 5:4: 5:4:2 6:4: 6:4:1,3 10:4: 10:4:3"
seed=0
for c in $CONFIGS; do
	IFS=: read -r level n missing <<<"$c"
	seed=$((seed + 1))
	what="RAID $level, $n members${missing:+, slot(s) $missing missing}"
	rm -f "$T"/*.img
	t_images "$n" 256M
	t_mkfs "$level" 16K "${IMG_LIST[@]}"
	src=$IMGS
	for s in ${missing//,/ }; do
		src=${src/$T\/m$s.img/$T\/absent$s.img}
	done
	ref="$REF_BASE/$seed"
	mkdir -p "$ref" "$T/mnt"
	T_MOUNTS+=("$T/mnt")
	t_log "$what: $OPS operations"
	"$PY" "$TESTS_DIR/model.py" --raidfs "$RAIDFS" --source "$src" \
		--mnt "$T/mnt" --ref "$ref" --seed "$seed" --ops "$OPS" \
		--log "$T/daemon.log" --pids "$T/pids" || t_fail "$what"
	rm -rf "$ref"
done
exit 0
