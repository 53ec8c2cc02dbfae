/*
 * xattr_ops: the extended attribute operations of fs.h, with the namespace
 * rules Linux applies in fs/xattr.c (xattr_permission) and a filesystem's
 * ACL handlers, so a FUSE daemon need only pass the caller along:
 *
 *   system.   only the two POSIX ACL names (others: -EOPNOTSUPP); setting
 *             system.posix_acl_access also sets the mode bits (acl.c), in
 *             the same transaction
 *   trusted.  for uid 0 only: others read nothing (-ENODATA), may not
 *             write (-EPERM) and do not see the names in a list
 *   security. anyone (the kernel's security modules decide)
 *   user.     only on regular files and directories (elsewhere: reads
 *             -ENODATA, writes -EPERM)
 *   anything else -EOPNOTSUPP.
 *
 * Each operation: check the name, fs_iget, take the inode's lock, apply
 * the rules, call xattr.c (inside one transaction for changes), unlock,
 * fs_iput.
 */
#include <string.h>
#include <sys/xattr.h>
#include <linux/limits.h>
#include "fs_int.h"

#define XA_CAPS "security.capability"   /* linux/xattr.h's XATTR_NAME_CAPS */

enum xa_ns { XA_NS_USER, XA_NS_TRUSTED, XA_NS_SECURITY, XA_NS_ACL_ACCESS,
	     XA_NS_ACL_DEFAULT };

static bool has_prefix(const char *name, const char *prefix)
{
	return !strncmp(name, prefix, strlen(prefix));
}

/* The namespace of name, or -ERANGE (length), -EOPNOTSUPP (unknown). */
static int xa_namespace(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > FS_XATTR_NAME_MAX)
		return -ERANGE;
	if (!strcmp(name, FS_ACL_ACCESS))
		return XA_NS_ACL_ACCESS;
	if (!strcmp(name, FS_ACL_DEFAULT))
		return XA_NS_ACL_DEFAULT;
	if (has_prefix(name, "trusted."))
		return XA_NS_TRUSTED;
	if (has_prefix(name, "security."))
		return XA_NS_SECURITY;
	if (has_prefix(name, "user."))
		return XA_NS_USER;
	return -EOPNOTSUPP;
}

/* May ctx use ns (write: change it)?  ip NULL: before the inode is read. */
static int xa_permission(const struct fs_ctx *ctx, const struct fs_inode *ip,
			 int ns, bool write)
{
	if (ns == XA_NS_TRUSTED && ctx->uid != 0)
		return write ? -EPERM : -ENODATA;
	if (ns == XA_NS_USER && ip && !S_ISREG(ip->d.mode) &&
	    !S_ISDIR(ip->d.mode))
		return write ? -EPERM : -ENODATA;
	return 0;
}

/* The limits of the syscall: space is xattr.c's to judge. */
static int xa_check_value(size_t size, int flags)
{
	if (size > XATTR_SIZE_MAX)
		return -E2BIG;
	if (flags & ~(XATTR_CREATE | XATTR_REPLACE))
		return -EINVAL;
	return 0;
}

/* An ACL with no entries (the header alone): Linux takes it for no ACL
 * (posix_acl_from_xattr gives NULL, and set_acl removes). */
static bool acl_is_empty(int ns, const uint8_t *value, size_t size)
{
	return (ns == XA_NS_ACL_ACCESS || ns == XA_NS_ACL_DEFAULT) &&
	       size == 4 && value[0] == 2 && !value[1] && !value[2] &&
	       !value[3];
}

/* Caller holds ip->lock (write); a transaction is open.  Removing an ACL
 * that is not there succeeds, as on Linux (vfs_remove_acl): tar restoring
 * a tree with ACLs failed with ENODATA. */
static int xa_change(struct fs *fs, const struct fs_ctx *ctx,
		     struct fs_tx *tx, struct fs_inode *ip, int ns, const char *name, const void *value, size_t size,
		     int flags, bool remove)
{
	bool acl = ns == XA_NS_ACL_ACCESS || ns == XA_NS_ACL_DEFAULT;
	int err;

	if (remove || acl_is_empty(ns, value, size)) {
		err = fs_xattr_remove(fs, tx, ip, name);
		return acl && err == -ENODATA ? 0 : err;
	}
	if (ns == XA_NS_ACL_ACCESS)
		return fs_acl_set_access(fs, ctx, tx, ip, value, size, flags);
	return fs_xattr_set(fs, tx, ip, name, value, size, flags);
}

static int xa_modify(struct fs *fs, const struct fs_ctx *ctx, uint64_t ino,
		     const char *name, const void *value, size_t size,
		     int flags, bool remove)
{
	struct fs_inode *ip;
	struct fs_tx *tx;
	int ns, err;

	ns = xa_namespace(name);
	if (ns < 0)
		return ns;
	err = xa_permission(ctx, NULL, ns, true);
	if (!err)
		err = xa_check_value(size, flags);
	if (!err)
		err = fs_iget(fs, ino, &ip);
	if (err)
		return err;
	pthread_rwlock_wrlock(&ip->lock);
	err = xa_permission(ctx, ip, ns, true);
	if (!err)
		err = fs_iflags_check(ip, FS_CHANGE_ATTR);
	if (!err)
		err = fs_meta_check(fs, remove ? FS_META_FLOOR_REMOVE :
					    FS_META_FLOOR_CREATE);
	if (!err)
		err = fs_tx_begin(fs, &tx);
	if (!err) {
		err = xa_change(fs, ctx, tx, ip, ns, name, value, size, flags,
				remove);
		fs_tx_end(fs, tx);
	}
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(fs, ip);
	return err;
}

int fs_setxattr(struct fs *fs, const struct fs_ctx *ctx, uint64_t ino,
		const char *name, const void *value, size_t size, int flags)
{
	return xa_modify(fs, ctx, ino, name, value, size, flags, false);
}

int fs_removexattr(struct fs *fs, const struct fs_ctx *ctx, uint64_t ino,
		   const char *name)
{
	return xa_modify(fs, ctx, ino, name, NULL, 0, 0, true);
}

/* Does ip hold file capabilities a write would take away (not when the
 * file refuses the write: immutable)?  Caller holds ip->lock. */
static bool caps_to_kill(struct fs *fs, struct fs_inode *ip)
{
	return ip->d.xattr_root &&
	       fs_xattr_get(fs, ip, XA_CAPS, NULL, 0) >= 0 &&
	       !fs_iflags_check(ip, FS_CHANGE_DATA);
}

/* fs_accessed's shape: most files have no xattrs, so a read lock decides,
 * and the write lock only confirms and changes. */
int fs_kill_caps(struct fs *fs, uint64_t ino)
{
	struct fs_inode *ip;
	struct fs_tx *tx;
	bool kill;
	int err = fs_iget(fs, ino, &ip);

	if (err)
		return err;
	pthread_rwlock_rdlock(&ip->lock);
	kill = caps_to_kill(fs, ip);
	pthread_rwlock_unlock(&ip->lock);
	if (kill) {
		pthread_rwlock_wrlock(&ip->lock);
		kill = caps_to_kill(fs, ip);
		if (kill && !(err = fs_meta_check(fs, FS_META_FLOOR_REMOVE)) &&
		    !(err = fs_tx_begin(fs, &tx))) {
			err = fs_xattr_remove(fs, tx, ip, XA_CAPS);
			fs_tx_end(fs, tx);
		}
		pthread_rwlock_unlock(&ip->lock);
	}
	fs_iput(fs, ip);
	return err ? err : kill;
}

ssize_t fs_getxattr(struct fs *fs, const struct fs_ctx *ctx, uint64_t ino,
		    const char *name, void *buf, size_t size)
{
	struct fs_inode *ip;
	ssize_t ret;
	int ns;

	ns = xa_namespace(name);
	if (ns < 0)
		return ns;
	ret = xa_permission(ctx, NULL, ns, false);
	if (!ret)
		ret = fs_iget(fs, ino, &ip);
	if (ret)
		return ret;
	pthread_rwlock_rdlock(&ip->lock);
	ret = xa_permission(ctx, ip, ns, false);
	if (!ret)
		ret = fs_xattr_get(fs, ip, name, buf, size);
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(fs, ip);
	return ret;
}

/* trusted.* names are listed only for the privileged. */
static bool xa_shown(const char *name, size_t len, const void *arg)
{
	const struct fs_ctx *ctx = arg;

	return ctx->uid == 0 || len < 8 || memcmp(name, "trusted.", 8);
}

ssize_t fs_listxattr(struct fs *fs, const struct fs_ctx *ctx, uint64_t ino,
		     char *buf, size_t size)
{
	struct fs_inode *ip;
	ssize_t ret;

	ret = fs_iget(fs, ino, &ip);
	if (ret)
		return ret;
	pthread_rwlock_rdlock(&ip->lock);
	ret = fs_xattr_list(fs, ip, xa_shown, ctx, buf, size);
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(fs, ip);
	return ret;
}
