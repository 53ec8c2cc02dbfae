#!/bin/bash
# Extended attributes with setfattr/getfattr and POSIX ACLs with
# setfacl/getfacl, enforced by the kernel (default_permissions + POSIX ACL
# support), inherited from default ACLs, and kept across a remount.
. "$(dirname "$0")/lib.sh"
t_setup
command -v setfattr >/dev/null && command -v setfacl >/dev/null \
	|| t_fail "setfattr/setfacl missing (Debian packages attr and acl)"

t_images 4 512M
t_mkfs 5 64K "${IMG_LIST[@]}"
t_mount "$IMGS" "$T/mnt" -o allow_other   # other users may enter at all
chmod 755 "$T" "$T/mnt"
M=$T/mnt
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

t_log "user xattrs"
echo data >"$M/f"
setfattr -n user.color -v blue "$M/f"
setfattr -n user.shape -v round "$M/f"
[ "$(getfattr --absolute-names --only-values -n user.color "$M/f")" = blue ] || t_fail "getfattr"
getfattr --absolute-names -d "$M/f" | grep -q 'user.shape="round"' || t_fail "getfattr -d"
setfattr -x user.shape "$M/f"
t_expect_fail getfattr --absolute-names -n user.shape "$M/f"
t_expect_fail setfattr -x user.shape "$M/f"

t_log "ACL grants and revokes access"
echo secret >"$M/acl"
chmod 600 "$M/acl"
t_expect_fail as_nobody cat "$M/acl"
setfacl -m u:65534:r "$M/acl"
getfacl -cp "$M/acl" | grep -q '^user:65534:r--\|^user:nobody:r--' || t_fail "getfacl after -m"
[ "$(as_nobody cat "$M/acl")" = secret ] || t_fail "ACL did not grant read"
t_expect_fail as_nobody sh -c "echo x >>'$M/acl'"
chmod 600 "$M/acl"      # the mask follows the group bits: the grant is masked
getfacl -cp "$M/acl" | grep -q '^mask::---' || t_fail "chmod did not update the mask"
t_expect_fail as_nobody cat "$M/acl"
setfacl -m m::r "$M/acl"
[ "$(as_nobody cat "$M/acl")" = secret ] || t_fail "mask restored"
setfacl -x u:65534 "$M/acl"
t_expect_fail as_nobody cat "$M/acl"

t_log "default ACLs are inherited"
mkdir "$M/dir"
chmod 700 "$M/dir"
setfacl -d -m u:65534:rwx "$M/dir"
setfacl -m u:65534:rwx "$M/dir"
touch "$M/dir/child"
mkdir "$M/dir/sub"
getfacl -cp "$M/dir/child" | grep -q '^user:\(65534\|nobody\):rwx' || t_fail "file did not inherit the default ACL"
getfacl -cp "$M/dir/sub" | grep -q '^default:user:\(65534\|nobody\):rwx' || t_fail "subdir did not inherit the default ACL"
as_nobody sh -c "echo mine >'$M/dir/sub/by-nobody'" || t_fail "inherited ACL did not grant write"

t_log "everything survives a remount"
before=$(getfacl -R -p "$M" 2>/dev/null; getfattr -R -d -m - "$M" 2>/dev/null)
t_umount "$M"
t_mount "$IMGS" "$M"
after=$(getfacl -R -p "$M" 2>/dev/null; getfattr -R -d -m - "$M" 2>/dev/null)
[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after") | head; t_fail "ACLs/xattrs changed across remount"; }
t_umount "$M"
exit 0
