/*
 * xattr: an inode's extended attributes, all in one checksummed block (as
 * ext4 without ea_inode).  Names are stored as given: what a name may be
 * and who may see it is xattr_ops.c's, what an ACL means is acl.c's.
 *
 * Block layout: struct fs_xattr_hdr_disk, then count entries packed:
 * u8 name_len, u8 0, le16 value_len, name bytes, value bytes.
 *
 * Usage: lock ip->lock (read for get and list, write for the rest), then
 * fs_xattr_get / fs_xattr_list, or inside a transaction fs_xattr_set /
 * fs_xattr_remove (which touch ctime and mark the inode dirty).
 */
#include <string.h>
#include <sys/xattr.h>
#include <linux/limits.h>
#include "fs_int.h"

#define XA_CAP (FS_BSIZE - FS_XATTR_HDR)

struct xa_ent {
	const uint8_t *name;
	size_t name_len;
	const uint8_t *value;
	size_t value_len;
};

struct xa_set {
	struct fs_buf *b;
	struct xa_ent e[XA_CAP / FS_XATTR_ENTRY_HDR];
	unsigned n;
};

static int xa_load(struct fs *fs, struct fs_inode *ip, struct xa_set *s)
{
	struct fs_xattr_hdr_disk *h;
	const uint8_t *p, *end;
	unsigned i, count;
	int err;

	s->b = NULL;
	s->n = 0;
	if (!ip->d.xattr_block)
		return 0;
	err = bc_read_meta(fs, ip->d.xattr_block, FS_BT_XATTR, &s->b);
	if (err)
		return err;
	h = (struct fs_xattr_hdr_disk *)s->b->data;
	count = fs_le32(h->count);
	p = s->b->data + FS_XATTR_HDR;
	end = p + (fs_le32(h->used) < XA_CAP ? fs_le32(h->used) : XA_CAP);
	if (fs_le64(h->h.owner) != ip->ino)
		goto bad;
	for (i = 0; i < count; i++) {
		if (p + FS_XATTR_ENTRY_HDR > end)
			goto bad;
		s->e[i].name_len = p[0];
		s->e[i].value_len = (size_t)p[2] | (size_t)p[3] << 8;
		s->e[i].name = p + FS_XATTR_ENTRY_HDR;
		s->e[i].value = s->e[i].name + s->e[i].name_len;
		p = s->e[i].value + s->e[i].value_len;
		if (p > end)
			goto bad;
	}
	s->n = count;
	return 0;
bad:
	fs_log(LOG_ERR, "xattr block of inode %llu is inconsistent",
	       (unsigned long long)ip->ino);
	bc_put(fs, s->b);
	s->b = NULL;
	return -EUCLEAN;
}

static void xa_release(struct fs *fs, struct xa_set *s)
{
	if (s->b)
		bc_put(fs, s->b);
	s->b = NULL;
}

static int xa_find(const struct xa_set *s, const char *name)
{
	size_t len = strlen(name);
	unsigned i;

	for (i = 0; i < s->n; i++)
		if (s->e[i].name_len == len && !memcmp(s->e[i].name, name, len))
			return (int)i;
	return -1;
}

static size_t xa_size(const struct xa_set *s, int skip)
{
	size_t used = 0;
	unsigned i;

	for (i = 0; i < s->n; i++)
		if ((int)i != skip)
			used += FS_XATTR_ENTRY_HDR + s->e[i].name_len +
				s->e[i].value_len;
	return used;
}

/* Serialises s without entry skip, plus (name, value) if name != NULL. */
static size_t xa_build(const struct xa_set *s, int skip, const char *name,
		       const void *value, size_t vlen, uint8_t *out,
		       unsigned *count)
{
	struct xa_ent add = { (const uint8_t *)name, name ? strlen(name) : 0,
			      value, vlen };
	uint8_t *p = out;
	unsigned i;

	*count = 0;
	for (i = 0; i <= s->n; i++) {
		const struct xa_ent *e = i < s->n ? &s->e[i] : &add;

		if ((int)i == skip || (i == s->n && !name))
			continue;
		p[0] = (uint8_t)e->name_len;
		p[1] = 0;
		p[2] = (uint8_t)e->value_len;
		p[3] = (uint8_t)(e->value_len >> 8);
		memcpy(p + FS_XATTR_ENTRY_HDR, e->name, e->name_len);
		memcpy(p + FS_XATTR_ENTRY_HDR + e->name_len, e->value,
		       e->value_len);
		p += FS_XATTR_ENTRY_HDR + e->name_len + e->value_len;
		(*count)++;
	}
	return (size_t)(p - out);
}

/* Replaces the inode's attribute block with the entries in buf. */
static int xa_store(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		    const uint8_t *buf, size_t used, unsigned count)
{
	struct fs_xattr_hdr_disk *h;
	struct fs_buf *b;
	uint64_t blk = ip->d.xattr_block;
	int err;

	if (!count) {
		if (blk) {
			fs_free_blocks(fs, tx, blk, 1, true);
			ip->d.blocks--;
			ip->d.xattr_block = 0;
		}
		return 0;
	}
	if (!blk) {
		err = fs_alloc_meta(fs, tx, 0, &blk);
		if (err)
			return err;
		ip->d.blocks++;
		ip->d.xattr_block = blk;
	}
	err = bc_new(fs, blk, &b);
	if (err)
		return err;
	fs_tx_dirty(fs, tx, b);
	h = (struct fs_xattr_hdr_disk *)b->data;
	fs_bhdr_init(h, FS_BT_XATTR, blk, ip->ino);
	h->count = fs_cpu32(count);
	h->used = fs_cpu32((uint32_t)used);
	memcpy(b->data + FS_XATTR_HDR, buf, used);
	bc_put(fs, b);
	return 0;
}

static int xa_set_locked(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
			 const char *name, const void *value, size_t size,
			 int flags, bool remove)
{
	uint8_t out[XA_CAP];
	struct xa_set *s;
	unsigned count;
	size_t used;
	int idx, err;

	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = xa_load(fs, ip, s);
	if (err)
		goto out;
	idx = xa_find(s, name);
	err = -ENODATA;
	if (idx < 0 && (remove || (flags & XATTR_REPLACE)))
		goto out;
	err = -EEXIST;
	if (idx >= 0 && (flags & XATTR_CREATE))
		goto out;
	err = -ENOSPC;
	if (!remove && xa_size(s, idx) + FS_XATTR_ENTRY_HDR + strlen(name) +
	    size > XA_CAP)
		goto out;
	used = xa_build(s, idx, remove ? NULL : name, value, size, out, &count);
	xa_release(fs, s);
	err = xa_store(fs, tx, ip, out, used, count);
	if (!err) {
		fs_inode_touch(ip, false, false, true);
		err = fs_inode_dirty(fs, tx, ip);
	}
out:
	xa_release(fs, s);
	free(s);
	return err;
}

int fs_xattr_set(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		 const char *name, const void *value, size_t size, int flags)
{
	return xa_set_locked(fs, tx, ip, name, value, size, flags, false);
}

int fs_xattr_remove(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		    const char *name)
{
	return xa_set_locked(fs, tx, ip, name, NULL, 0, 0, true);
}

/* Copies len bytes to buf under the getxattr size rules. */
static ssize_t xa_copy_out(void *buf, size_t size, const void *src,
			   size_t len)
{
	if (size == 0)
		return (ssize_t)len;
	if (size < len)
		return -ERANGE;
	memcpy(buf, src, len);
	return (ssize_t)len;
}

ssize_t fs_xattr_get(struct fs *fs, struct fs_inode *ip, const char *name,
		     void *buf, size_t size)
{
	struct xa_set *s = malloc(sizeof(*s));
	ssize_t ret;
	int idx;

	if (!s)
		return -ENOMEM;
	ret = xa_load(fs, ip, s);
	if (!ret) {
		idx = xa_find(s, name);
		ret = idx < 0 ? -ENODATA :
		      xa_copy_out(buf, size, s->e[idx].value,
				  s->e[idx].value_len);
	}
	xa_release(fs, s);
	free(s);
	return ret;
}

ssize_t fs_xattr_list(struct fs *fs, struct fs_inode *ip,
		      bool (*shown)(const char *name, size_t len,
				    const void *arg),
		      const void *arg, char *buf, size_t size)
{
	char out[XA_CAP];
	struct xa_set *s;
	size_t len = 0;
	ssize_t ret;
	unsigned i;

	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	ret = xa_load(fs, ip, s);
	for (i = 0; !ret && i < s->n; i++) {
		if (!shown((const char *)s->e[i].name, s->e[i].name_len, arg))
			continue;
		memcpy(out + len, s->e[i].name, s->e[i].name_len);
		len += s->e[i].name_len;
		out[len++] = '\0';
	}
	if (!ret)
		ret = xa_copy_out(buf, size, out, len);
	xa_release(fs, s);
	free(s);
	return ret;
}

int fs_xattr_destroy(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip)
{
	if (ip->d.xattr_block) {
		fs_free_blocks(fs, tx, ip->d.xattr_block, 1, true);
		ip->d.blocks--;
		ip->d.xattr_block = 0;
	}
	return 0;
}

