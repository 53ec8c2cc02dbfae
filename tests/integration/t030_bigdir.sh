#!/bin/bash
# A directory of 100,000 entries: create, list, look up, rename, survive a
# remount, remove.  A linear directory would make this quadratic.
. "$(dirname "$0")/lib.sh"
t_setup

t_images 4 1G
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt"
mkdir "$T/mnt/big"

t_log "create 100000 files"
"$PY" - "$T/mnt/big" <<'PYEOF'
import os, sys, time
d = sys.argv[1]
t0 = time.time()
for i in range(100000):
    os.close(os.open(os.path.join(d, "file-%06d" % i), os.O_CREAT | os.O_WRONLY, 0o644))
print("  %d creates/s" % (100000 / (time.time() - t0)))
PYEOF

check_listing() {
	"$PY" - "$T/mnt/big" "$1" <<'PYEOF'
import os, sys, random
d, want = sys.argv[1], int(sys.argv[2])
names = os.listdir(d)
assert len(names) == want, "listed %d, want %d" % (len(names), want)
assert len(set(names)) == len(names), "duplicates in the listing"
random.seed(1)
for n in random.sample(names, 2000):
    os.stat(os.path.join(d, n))
for i in random.sample(range(100000), 200):
    try:
        os.stat(os.path.join(d, "absent-%d" % i))
        raise AssertionError("absent name found")
    except FileNotFoundError:
        pass
PYEOF
}
check_listing 100000 || t_fail "listing after create"
[ "$(stat -c %h "$T/mnt/big")" -eq 2 ] || t_fail "nlink of a directory of files"

t_log "rename every tenth entry, remount, list"
"$PY" - "$T/mnt/big" <<'PYEOF'
import os, sys
d = sys.argv[1]
for i in range(0, 100000, 10):
    os.rename(os.path.join(d, "file-%06d" % i), os.path.join(d, "moved-%06d" % i))
PYEOF
t_umount "$T/mnt"
t_mount "$IMGS" "$T/mnt"
check_listing 100000 || t_fail "listing after remount"
[ "$(ls "$T/mnt/big" | grep -c '^moved-')" -eq 10000 ] || t_fail "renamed entries"

t_log "remove them all"
"$PY" - "$T/mnt/big" <<'PYEOF'
import os, sys
d = sys.argv[1]
for n in os.listdir(d):
    os.unlink(os.path.join(d, n))
assert os.listdir(d) == []
os.rmdir(d)
PYEOF
t_umount "$T/mnt"
exit 0
