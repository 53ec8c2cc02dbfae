/*
 * fuse_acl: the POSIX ACL semantics the kernel leaves to a FUSE daemon that
 * asks for FUSE_CAP_POSIX_ACL.  The kernel checks permissions against the
 * ACLs and stores them as system.posix_acl_* xattrs, but (fs/fuse/acl.c:
 * "Fuse userspace is responsible for updating access permissions") it
 * does not
 *   - update the mode when an access ACL is set      (rfs_acl_set_mode)
 *   - update the access ACL when the mode changes    (rfs_acl_chmod)
 *   - apply a parent's default ACL to a new inode    (rfs_acl_inherit_*)
 * which a local filesystem does in posix_acl_update_mode, posix_acl_chmod
 * and posix_acl_create.  fs stores the xattrs as they are; this file does
 * the rest with ordinary fs calls.
 *
 * The xattr value is the kernel's posix_acl_xattr format: a little-endian
 * u32 version (2), then entries of { u16 tag, u16 perm, u32 id }.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "fuse_ops.h"

#define ACL_XATTR_VERSION 2
#define ACL_USER_OBJ 0x01
#define ACL_USER 0x02
#define ACL_GROUP_OBJ 0x04
#define ACL_GROUP 0x08
#define ACL_MASK 0x10
#define ACL_OTHER 0x20
#define ACL_ACCESS "system.posix_acl_access"
#define ACL_DEFAULT "system.posix_acl_default"

struct acl_entry_disk {
	uint16_t tag;
	uint16_t perm;
	uint32_t id;
};

struct acl {
	struct acl_entry_disk *e;   /* into buf, after the version word */
	size_t n;
	void *buf;
	size_t size;
};

static int acl_parse(void *buf, size_t size, struct acl *acl)
{
	uint32_t version;

	if (size < 4 || (size - 4) % sizeof(struct acl_entry_disk))
		return -EINVAL;
	memcpy(&version, buf, 4);
	if (le32toh(version) != ACL_XATTR_VERSION)
		return -EINVAL;
	acl->buf = buf;
	acl->size = size;
	acl->e = (struct acl_entry_disk *)((char *)buf + 4);
	acl->n = (size - 4) / sizeof(struct acl_entry_disk);
	return 0;
}

/* Reads name of ino into a malloc'd acl; -ENODATA when there is none. */
static int acl_read(struct fs *fs, uint64_t ino, const char *name,
		    struct acl *acl)
{
	ssize_t size = fs_getxattr(fs, ino, name, NULL, 0);
	void *buf;
	int ret;

	if (size < 0)
		return (int)size;
	buf = malloc(size ? (size_t)size : 1);
	if (!buf)
		return -ENOMEM;
	size = fs_getxattr(fs, ino, name, buf, (size_t)size);
	ret = size < 0 ? (int)size : acl_parse(buf, (size_t)size, acl);
	if (ret)
		free(buf);
	return ret;
}

static struct acl_entry_disk *acl_find(struct acl *acl, uint16_t tag)
{
	size_t i;

	for (i = 0; i < acl->n; i++)
		if (le16toh(acl->e[i].tag) == tag)
			return &acl->e[i];
	return NULL;
}

/* The entry that stands for the group bits: the mask if there is one. */
static struct acl_entry_disk *acl_group_bits(struct acl *acl)
{
	struct acl_entry_disk *m = acl_find(acl, ACL_MASK);

	return m ? m : acl_find(acl, ACL_GROUP_OBJ);
}

static bool acl_is_minimal(struct acl *acl)
{
	return !acl_find(acl, ACL_MASK) && !acl_find(acl, ACL_USER) &&
		!acl_find(acl, ACL_GROUP);
}

static int mode_set(struct fs *fs, uint64_t ino, mode_t mode)
{
	struct fs_attr in = { .ino = ino, .mode = mode };

	return fs_setattr(fs, ino, &in, FS_SET_ATTR_MODE, NULL);
}

/*
 * After an access ACL was stored: the permission bits follow it, and an
 * ACL that says no more than the bits is dropped (as posix_acl_update_mode).
 */
int rfs_acl_set_mode(struct fs *fs, uint64_t ino, const char *name,
		     const void *value, size_t size)
{
	struct acl_entry_disk *u, *g, *o;
	struct fs_attr a;
	struct acl acl;
	void *copy;
	int ret;

	if (strcmp(name, ACL_ACCESS))
		return 0;
	copy = malloc(size ? size : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, value, size);
	ret = acl_parse(copy, size, &acl);
	if (ret)
		goto out;
	u = acl_find(&acl, ACL_USER_OBJ);
	g = acl_group_bits(&acl);
	o = acl_find(&acl, ACL_OTHER);
	ret = -EINVAL;
	if (!u || !g || !o)
		goto out;
	ret = fs_getattr(fs, ino, &a);
	if (ret)
		goto out;
	a.mode = (a.mode & ~(mode_t)0777) | (le16toh(u->perm) & 7u) << 6 |
		(le16toh(g->perm) & 7u) << 3 | (le16toh(o->perm) & 7u);
	ret = mode_set(fs, ino, a.mode);
	if (!ret && acl_is_minimal(&acl))
		ret = fs_removexattr(fs, ino, ACL_ACCESS);
out:
	free(copy);
	return ret;
}

/* After a chmod: the access ACL's owner, mask and other follow the bits. */
int rfs_acl_chmod(struct fs *fs, uint64_t ino, mode_t mode)
{
	struct acl_entry_disk *u, *g, *o;
	struct acl acl;
	int ret = acl_read(fs, ino, ACL_ACCESS, &acl);

	if (ret)
		return ret == -ENODATA || ret == -EOPNOTSUPP ? 0 : ret;
	u = acl_find(&acl, ACL_USER_OBJ);
	g = acl_group_bits(&acl);
	o = acl_find(&acl, ACL_OTHER);
	ret = -EINVAL;
	if (u && g && o) {
		u->perm = htole16((mode >> 6) & 7);
		g->perm = htole16((mode >> 3) & 7);
		o->perm = htole16(mode & 7);
		ret = fs_setxattr(fs, ino, ACL_ACCESS, acl.buf, acl.size, 0);
	}
	free(acl.buf);
	return ret;
}

/*
 * posix_acl_create_masq: the default ACL, narrowed by the mode the creator
 * asked for; *mode narrowed by the ACL.  Returns whether the result says
 * more than the mode bits.
 */
static bool acl_create_masq(struct acl *acl, mode_t *mode)
{
	struct acl_entry_disk *group_obj = NULL, *mask = NULL;
	bool not_equiv = false;
	mode_t m = *mode;
	size_t i;

	for (i = 0; i < acl->n; i++) {
		struct acl_entry_disk *e = &acl->e[i];
		unsigned perm = le16toh(e->perm);

		switch (le16toh(e->tag)) {
		case ACL_USER_OBJ:
			perm &= (m >> 6) & 7;
			m &= (perm << 6) | ~(mode_t)0700;
			break;
		case ACL_USER:
		case ACL_GROUP:
			not_equiv = true;
			break;
		case ACL_GROUP_OBJ: group_obj = e; break;
		case ACL_OTHER:
			perm &= m & 7;
			m &= perm | ~(mode_t)07;
			break;
		case ACL_MASK:
			mask = e;
			not_equiv = true;
			break;
		}
		e->perm = htole16(perm);
	}
	if (!mask)
		mask = group_obj;
	if (mask) {
		unsigned perm = le16toh(mask->perm) & ((m >> 3) & 7);

		mask->perm = htole16(perm);
		m &= (perm << 3) | ~(mode_t)070;
	}
	*mode = m;
	return not_equiv;
}

/*
 * Before creating in parent: with a default ACL there, the umask does not
 * apply (ctx->umask = 0) and the mode is narrowed by the ACL; inh keeps
 * what rfs_acl_inherit_apply() stores on the new inode.
 */
int rfs_acl_inherit_prepare(struct fs *fs, uint64_t parent, mode_t *mode,
			    struct fs_ctx *ctx, struct rfs_acl_inherit *inh)
{
	struct acl acl;
	int ret;

	memset(inh, 0, sizeof(*inh));
	if (S_ISLNK(*mode))
		return 0;
	ret = acl_read(fs, parent, ACL_DEFAULT, &acl);
	if (ret)
		return ret == -ENODATA || ret == -EOPNOTSUPP ? 0 : ret;
	inh->dflt = malloc(acl.size);
	if (!inh->dflt) {
		free(acl.buf);
		return -ENOMEM;
	}
	memcpy(inh->dflt, acl.buf, acl.size);
	inh->dflt_size = S_ISDIR(*mode) ? acl.size : 0;
	inh->access_needed = acl_create_masq(&acl, mode);
	inh->access = acl.buf;
	inh->access_size = acl.size;
	ctx->umask = 0;
	return 0;
}

int rfs_acl_inherit_apply(struct fs *fs, uint64_t ino,
			  struct rfs_acl_inherit *inh)
{
	int ret = 0;

	if (inh->access && inh->access_needed)
		ret = fs_setxattr(fs, ino, ACL_ACCESS, inh->access,
				  inh->access_size, 0);
	if (!ret && inh->dflt_size)
		ret = fs_setxattr(fs, ino, ACL_DEFAULT, inh->dflt,
				  inh->dflt_size, 0);
	return ret;
}

void rfs_acl_inherit_free(struct rfs_acl_inherit *inh)
{
	free(inh->access);
	free(inh->dflt);
	memset(inh, 0, sizeof(*inh));
}
