#!/bin/bash
# Extended attributes with setfattr/getfattr and POSIX ACLs with
# setfacl/getfacl, enforced by the kernel (default_permissions + POSIX ACL
# support), inherited from default ACLs, and kept across a remount; values
# of 64 KiB and 10,000 attributes on one file (format 2), their space given
# back on removal, fsck -n -f clean afterwards.
. "$(dirname "$0")/lib.sh"
t_setup
command -v setfattr >/dev/null && command -v setfacl >/dev/null \
	|| t_fail "setfattr/setfacl missing (Debian packages attr and acl)"

t_images 4 512M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt" -o allow_other   # other users may enter at all
chmod 755 "$T" "$T/mnt"
M=$T/mnt

t_log "user xattrs"
echo data >"$M/f"
setfattr -n user.color -v blue "$M/f"
setfattr -n user.shape -v round "$M/f"
[ "$(getfattr --absolute-names --only-values -n user.color "$M/f")" = blue ] || t_fail "getfattr"
getfattr --absolute-names -d "$M/f" | grep -q 'user.shape="round"' || t_fail "getfattr -d"
setfattr -x user.shape "$M/f"
t_expect_fail getfattr --absolute-names -n user.shape "$M/f"
t_expect_fail setfattr -x user.shape "$M/f"

t_log "a 64 KiB value (XATTR_SIZE_MAX)"
head -c 65536 /dev/urandom >"$T/v64k"
echo data >"$M/big"
setfattr -n user.big -v "0s$(base64 -w0 "$T/v64k")" "$M/big" || t_fail "setfattr of 64 KiB"
getfattr --absolute-names --only-values -n user.big "$M/big" >"$T/v64k.got"
cmp "$T/v64k" "$T/v64k.got" || t_fail "64 KiB value read back differs"

t_log "10,000 attributes on one file: read back, listed, removed, space back"
echo data >"$M/many"
sync -f "$M"
"$PY" - "$M/many" <<'PYEOF' || t_fail "10,000 attributes"
import errno, os, sys
f = sys.argv[1]
def used():
    s = os.statvfs(f)
    return s.f_blocks - s.f_bfree
def value(i):
    return (b"%d-" % i) * (1 + i % 7 * (i % 11) * 20)   # up to ~1.4 KiB
before = used()
for i in range(10000):
    os.setxattr(f, "user.%d" % i, value(i))
for i in range(10000):
    assert os.getxattr(f, "user.%d" % i) == value(i), i
assert used() > before, "attributes took no space"
# 98,890 bytes of names: over Linux's XATTR_LIST_MAX (64 KiB)
try:
    os.listxattr(f)
    raise SystemExit("listxattr of 98,890 bytes of names did not fail")
except OSError as e:
    assert e.errno == errno.E2BIG, e
for i in range(1000, 6000):
    os.removexattr(f, "user.%d" % i)
want = {"user.%d" % i for i in list(range(1000)) + list(range(6000, 10000))}
got = os.listxattr(f)
assert len(got) == len(want) and set(got) == want, (len(got), len(want))
for i in want:
    os.removexattr(f, i)
assert os.listxattr(f) == []
assert used() == before, (used(), before)
PYEOF

# An ACL that is not there removes without error, and an empty one
# (the header alone) is none, as on Linux: tar --acls restoring a tree
# failed with "Cannot set POSIX ACLs ...: No data available".
t_log "ACLs: removing one that is not there, setting an empty one"
mkdir "$M/noacl"
"$PY" - "$M/noacl" <<'PYEOF' || t_fail "removing an absent ACL, or setting an empty one"
import os, sys
d = sys.argv[1]
for n in ("system.posix_acl_default", "system.posix_acl_access"):
    os.removexattr(d, n)
    os.setxattr(d, n, b"\x02\0\0\0")
    try:
        os.getxattr(d, n)
        sys.exit(n + ": an empty ACL was stored")
    except OSError as e:
        assert e.errno == 61, e
PYEOF
rmdir "$M/noacl"

t_log "ACL grants and revokes access"
echo secret >"$M/acl"
chmod 600 "$M/acl"
t_expect_fail t_as_nobody cat "$M/acl"
setfacl -m u:65534:r "$M/acl"
getfacl -cp "$M/acl" | grep -q '^user:65534:r--\|^user:nobody:r--' || t_fail "getfacl after -m"
[ "$(t_as_nobody cat "$M/acl")" = secret ] || t_fail "ACL did not grant read"
t_expect_fail t_as_nobody sh -c "echo x >>'$M/acl'"
chmod 600 "$M/acl"      # the mask follows the group bits: the grant is masked
getfacl -cp "$M/acl" | grep -q '^mask::---' || t_fail "chmod did not update the mask"
t_expect_fail t_as_nobody cat "$M/acl"
setfacl -m m::r "$M/acl"
[ "$(t_as_nobody cat "$M/acl")" = secret ] || t_fail "mask restored"
setfacl -x u:65534 "$M/acl"
t_expect_fail t_as_nobody cat "$M/acl"

t_log "default ACLs are inherited"
mkdir "$M/dir"
chmod 700 "$M/dir"
setfacl -d -m u:65534:rwx "$M/dir"
setfacl -m u:65534:rwx "$M/dir"
touch "$M/dir/child"
mkdir "$M/dir/sub"
getfacl -cp "$M/dir/child" | grep -q '^user:\(65534\|nobody\):rwx' || t_fail "file did not inherit the default ACL"
getfacl -cp "$M/dir/sub" | grep -q '^default:user:\(65534\|nobody\):rwx' || t_fail "subdir did not inherit the default ACL"
t_as_nobody sh -c "echo mine >'$M/dir/sub/by-nobody'" || t_fail "inherited ACL did not grant write"

t_log "everything survives a remount"
before=$(getfacl -R -p "$M" 2>/dev/null; getfattr -R -d -m - "$M" 2>/dev/null)
t_umount "$M"
t_mount "$IMGS" "$M"
after=$(getfacl -R -p "$M" 2>/dev/null; getfattr -R -d -m - "$M" 2>/dev/null)
[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after") | head; t_fail "ACLs/xattrs changed across remount"; }
getfattr --absolute-names --only-values -n user.big "$M/big" >"$T/v64k.got"
cmp "$T/v64k" "$T/v64k.got" || t_fail "64 KiB value differs after remount"
t_umount "$M"
t_log "fsck -n -f: clean"
rc=0; "$RAIDFS_BIN/fsck.raidfs" -n -f "$IMGS" >"$T/fsck.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/fsck.out"; t_fail "fsck -n -f: exit $rc"; }
exit 0
