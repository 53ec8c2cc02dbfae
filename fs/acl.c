/*
 * acl: POSIX ACLs - the rules a local filesystem follows and the kernel
 * leaves to a FUSE daemon (Linux fs/fuse/acl.c: "Fuse userspace is
 * responsible for updating access permissions"), each applied in the
 * transaction of the operation that needs it:
 *
 *   fs_acl_inherit     create: the directory's default ACL gives the new
 *                      inode its ACLs and masks its mode (posix_acl_create)
 *   fs_acl_chmod       chmod: the access ACL follows the new mode bits
 *                      (posix_acl_chmod)
 *   fs_acl_set_access  setxattr of system.posix_acl_access: the mode bits
 *                      follow the ACL, and an ACL that says no more than
 *                      the bits is not stored, and S_ISGID goes if the
 *                      caller is outside the group (posix_acl_update_mode)
 *
 * The value is the kernel's posix_acl_xattr format: a little-endian u32
 * version (2), then entries of { le16 tag, le16 perm, le32 id }.  The
 * kernel checks permissions against the ACLs (default_permissions); this
 * file only keeps them and the mode consistent.
 *
 * Caller holds ip->lock (write) and, for dp, dp->lock; a transaction is
 * open.  An ACL given by a caller that does not parse is -EINVAL; a stored
 * one that does not is damage, -EIO (as Linux's posix_acl_chmod).
 */
#include <string.h>
#include <sys/xattr.h>
#include "fs_int.h"

#define ACL_XATTR_VERSION 2
#define ACL_TAG_USER_OBJ 0x01
#define ACL_TAG_USER 0x02
#define ACL_TAG_GROUP_OBJ 0x04
#define ACL_TAG_GROUP 0x08
#define ACL_TAG_MASK 0x10
#define ACL_TAG_OTHER 0x20
#define ACL_HDR 4
#define ACL_ENTRY 8

/* A parsed ACL: entries in place in the caller's buffer. */
struct acl {
	uint8_t *e;             /* first entry */
	size_t n;
	uint8_t *user_obj, *group_obj, *mask, *other;
	bool extended;          /* named users or groups, or a mask */
};

static uint16_t acl_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static void acl_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static unsigned acl_perm(const uint8_t *e)
{
	return acl_get16(e + 2) & 7u;
}

static void acl_set_perm(uint8_t *e, unsigned perm)
{
	acl_put16(e + 2, (uint16_t)((acl_get16(e + 2) & ~7u) | (perm & 7u)));
}

/*
 * The one parser of the format: version, size, known tags, and the three
 * entries every ACL has (owner, owning group, other).  -EINVAL otherwise.
 */
static int acl_parse(uint8_t *buf, size_t size, struct acl *a)
{
	uint8_t *e;

	memset(a, 0, sizeof(*a));
	if (size < ACL_HDR || (size - ACL_HDR) % ACL_ENTRY ||
	    buf[0] != ACL_XATTR_VERSION || buf[1] || buf[2] || buf[3])
		return -EINVAL;
	a->e = buf + ACL_HDR;
	a->n = (size - ACL_HDR) / ACL_ENTRY;
	for (e = a->e; e < buf + size; e += ACL_ENTRY) {
		switch (acl_get16(e)) {
		case ACL_TAG_USER_OBJ: a->user_obj = e; break;
		case ACL_TAG_GROUP_OBJ: a->group_obj = e; break;
		case ACL_TAG_OTHER: a->other = e; break;
		case ACL_TAG_MASK: a->mask = e; a->extended = true; break;
		case ACL_TAG_USER:
		case ACL_TAG_GROUP: a->extended = true; break;
		default: return -EINVAL;
		}
	}
	return a->user_obj && a->group_obj && a->other ? 0 : -EINVAL;
}

/* The entry that stands for the group bits: the mask if there is one. */
static uint8_t *acl_group_bits(const struct acl *a)
{
	return a->mask ? a->mask : a->group_obj;
}

/* Reads ip's ACL name into buf: its size, -ENODATA, or -EIO if damaged. */
static ssize_t acl_read(struct fs *fs, struct fs_inode *ip, const char *name,
			uint8_t *buf, size_t cap, struct acl *a)
{
	ssize_t len = fs_xattr_get(fs, ip, name, buf, cap);

	if (len >= 0 && acl_parse(buf, (size_t)len, a))
		return -EIO;
	return len;
}

/*
 * posix_acl_create_masq: narrows each entry by the mode the creator asked
 * for (the mask, or without one the owning group, stands for the group
 * bits) and the mode by the entries.
 */
static mode_t acl_create_masq(const struct acl *a, mode_t mode)
{
	uint8_t *g = acl_group_bits(a);
	unsigned u = acl_perm(a->user_obj) & ((mode >> 6) & 7);
	unsigned o = acl_perm(a->other) & (mode & 7);
	unsigned gp = acl_perm(g) & ((mode >> 3) & 7);

	acl_set_perm(a->user_obj, u);
	acl_set_perm(a->other, o);
	acl_set_perm(g, gp);
	return (mode & ~(mode_t)0777) | u << 6 | gp << 3 | o;
}

int fs_acl_inherit(struct fs *fs, struct fs_tx *tx, struct fs_inode *dp,
		   struct fs_inode *ip)
{
	uint8_t acl[FS_XATTR_SIZE_MAX];
	struct acl a;
	ssize_t len;
	int err;

	len = acl_read(fs, dp, FS_ACL_DEFAULT, acl, sizeof(acl), &a);
	if (len == -ENODATA)
		return 1;
	if (len < 0)
		return (int)len;
	if (S_ISDIR(ip->d.mode)) {
		err = fs_xattr_set(fs, tx, ip, FS_ACL_DEFAULT, acl, (size_t)len,
				   0);
		if (err)
			return err;
	}
	ip->d.mode = (ip->d.mode & ~(mode_t)07777) |
		     acl_create_masq(&a, ip->d.mode & 07777);
	if (!a.extended)
		return 0;
	return fs_xattr_set(fs, tx, ip, FS_ACL_ACCESS, acl, (size_t)len, 0);
}

int fs_acl_chmod(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		 mode_t mode)
{
	uint8_t acl[FS_XATTR_SIZE_MAX];
	struct acl a;
	ssize_t len;

	len = acl_read(fs, ip, FS_ACL_ACCESS, acl, sizeof(acl), &a);
	if (len == -ENODATA)
		return 0;
	if (len < 0)
		return (int)len;
	acl_set_perm(a.user_obj, (mode >> 6) & 7);
	acl_set_perm(acl_group_bits(&a), (mode >> 3) & 7);
	acl_set_perm(a.other, mode & 7);
	return fs_xattr_set(fs, tx, ip, FS_ACL_ACCESS, acl, (size_t)len, 0);
}

int fs_acl_set_access(struct fs *fs, const struct fs_ctx *ctx,
		      struct fs_tx *tx, struct fs_inode *ip,
		      const void *value, size_t size, int flags)
{
	uint8_t acl[FS_XATTR_SIZE_MAX];
	ssize_t have;
	bool exists;
	struct acl a;
	int err;

	if (size > sizeof(acl))
		return -ENOSPC;
	memcpy(acl, value, size);
	err = acl_parse(acl, size, &a);
	if (err)
		return err;
	have = fs_xattr_get(fs, ip, FS_ACL_ACCESS, NULL, 0);
	if (have < 0 && have != -ENODATA)
		return (int)have;
	exists = have >= 0;
	if ((flags & XATTR_CREATE) && exists)
		return -EEXIST;
	if ((flags & XATTR_REPLACE) && !exists)
		return -ENODATA;
	/* Equivalent to the mode bits: those say it all. */
	if (!a.extended)
		err = exists ? fs_xattr_remove(fs, tx, ip, FS_ACL_ACCESS) : 0;
	else
		err = fs_xattr_set(fs, tx, ip, FS_ACL_ACCESS, acl, size, 0);
	if (err)
		return err;
	ip->d.mode = (ip->d.mode & ~(mode_t)0777) |
		     acl_perm(a.user_obj) << 6 |
		     acl_perm(acl_group_bits(&a)) << 3 | acl_perm(a.other);
	if (!fs_ctx_in_group(ctx, ip->d.gid))   /* as a chmod would */
		ip->d.mode &= ~(mode_t)S_ISGID;
	fs_inode_touch(ip, false, false, true);
	return fs_inode_dirty(fs, tx, ip);
}
