/*
 * xattr: an inode's extended attributes, in a B+tree of their own (as XFS's
 * attribute fork or btrfs's xattr items): one record per attribute, keyed
 * by name hash as directory entries are (dir.c), its value in the record
 * up to FS_XATTR_INLINE bytes and beyond that, up to XATTR_SIZE_MAX, in a
 * chain of value blocks whose checksum the record holds (ext4's ea_inode
 * in spirit, but journalled metadata like everything else).  Names are
 * stored as given: what a name may be and who may see it is xattr_ops.c's,
 * what an ACL means is acl.c's.
 *
 * Usage: lock ip->lock (read for get and list, write for the rest), then
 * fs_xattr_get / fs_xattr_list, or inside a transaction fs_xattr_set /
 * fs_xattr_remove (which touch ctime and mark the inode dirty).
 *
 * One set dirties at most XA_CHAIN_MAX value blocks, 2 * depth + 1 tree
 * nodes, the bitmap blocks of those and the inode's table block - about
 * 30 blocks for a 64 KiB value, under half the smallest journal's ring
 * (63 blocks), so a set always fits in one transaction.
 */
#include <string.h>
#include <sys/xattr.h>
#include <linux/limits.h>
#include "fs_int.h"

#define XA_CHAIN_MAX ((XATTR_SIZE_MAX + FS_XVALUE_DATA - 1) / FS_XVALUE_DATA)

static struct fs_bt xa_tree(struct fs *fs, struct fs_inode *ip)
{
	return (struct fs_bt){ fs, &ip->d.xattr_root, &ip->d.xattr_depth,
			       sizeof(struct fs_xattr_rec_disk), FS_TREE_XATTR,
			       ip->ino, &ip->d.blocks, 0 };
}

static uint32_t xa_chain_len(uint64_t value_len)
{
	if (value_len <= FS_XATTR_INLINE)
		return 0;
	return (uint32_t)((value_len + FS_XVALUE_DATA - 1) / FS_XVALUE_DATA);
}

int fs_xattr_rec_check(struct fs *fs, const struct fs_xattr_rec_disk *r)
{
	uint32_t len = fs_le32(r->value_len);
	bool ext = r->flags & FS_XREC_EXTERNAL;

	if (!r->name_len || r->flags & ~FS_XREC_EXTERNAL ||
	    (fs_rec_key(r) & ~0xffull) !=
	    fs_dir_name_base(fs, r->name, r->name_len) ||
	    len > XATTR_SIZE_MAX || ext != (len > FS_XATTR_INLINE))
		return -EUCLEAN;
	if (ext && (fs_le32(r->v.ext.nblocks) != xa_chain_len(len) ||
		    !fs_le64(r->v.ext.first)))
		return -EUCLEAN;
	return 0;
}

/* ---- value chains --------------------------------------------------------- */
/* Block i of r's chain, checked for its place in the chain. */
static int chain_block(struct fs *fs, uint64_t owner, uint64_t blk,
		       uint32_t i, uint32_t want_len, struct fs_buf **out)
{
	struct fs_xvalue_disk *h;
	int err;

	if (blk < fs_le64(fs->sb.data_start) || blk >= fs_le64(fs->sb.blocks))
		return -EUCLEAN;
	err = bc_read_meta(fs, blk, FS_BT_XVALUE, out);
	if (err)
		return err;
	h = (struct fs_xvalue_disk *)(*out)->data;
	if (fs_le64(h->h.owner) == owner && fs_le32(h->index) == i &&
	    fs_le32(h->len) == want_len)
		return 0;
	bc_put(fs, *out);
	return -EUCLEAN;
}

static int chain_walk(struct fs *fs, uint64_t owner,
		      const struct fs_xattr_rec_disk *r, uint8_t *value,
		      int (*blk_cb)(void *arg, uint64_t blk), void *arg)
{
	uint32_t len = fs_le32(r->value_len), n = fs_le32(r->v.ext.nblocks);
	uint64_t blk = fs_le64(r->v.ext.first);
	uint32_t i, piece;
	struct fs_buf *b;
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		piece = i + 1 < n ? FS_XVALUE_DATA : len - i * FS_XVALUE_DATA;
		err = chain_block(fs, owner, blk, i, piece, &b);
		if (err)
			break;
		memcpy(value + (size_t)i * FS_XVALUE_DATA,
		       b->data + FS_XVALUE_HDR, piece);
		if (blk_cb)
			err = blk_cb(arg, blk);
		blk = fs_le64(((struct fs_xvalue_disk *)b->data)->next);
		bc_put(fs, b);
	}
	if (!err && blk)
		err = -EUCLEAN;         /* the chain goes on past its count */
	if (!err && fs_csum(value, len, fs_rec_key(r)) != fs_le64(r->v.ext.csum))
		err = -EUCLEAN;
	return err;
}

int fs_xattr_chain_read(struct fs *fs, uint64_t owner,
			const struct fs_xattr_rec_disk *r, void *value,
			int (*blk_cb)(void *arg, uint64_t blk), void *arg)
{
	uint8_t *tmp = value ? NULL : malloc(fs_le32(r->value_len));
	int err;

	if (!value && !tmp)
		return -ENOMEM;
	err = chain_walk(fs, owner, r, value ? value : tmp, blk_cb, arg);
	free(tmp);
	if (err == -EUCLEAN)
		fs_log(LOG_ERR, "xattr value chain of inode %llu is damaged",
		       (unsigned long long)owner);
	return err;
}

/* Writes value (len > FS_XATTR_INLINE) into new blocks; fills r->v.ext. */
static int chain_write(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		       struct fs_xattr_rec_disk *r, const uint8_t *value,
		       size_t len)
{
	uint32_t n = xa_chain_len(len), i, got;
	uint64_t blk[XA_CHAIN_MAX];
	struct fs_xvalue_disk *h;
	struct fs_buf *b;
	int err = 0;

	for (got = 0; got < n; got++) {
		err = fs_alloc_meta(fs, tx, got ? blk[got - 1] + 1 : 0,
				    &blk[got]);
		if (err)
			break;
	}
	for (i = 0; i < n && !err; i++) {
		err = bc_new(fs, blk[i], &b);
		if (err)
			break;
		fs_tx_dirty(fs, tx, b);
		h = (struct fs_xvalue_disk *)b->data;
		fs_bhdr_init(h, FS_BT_XVALUE, blk[i], ip->ino);
		h->next = fs_cpu64(i + 1 < n ? blk[i + 1] : 0);
		h->len = fs_cpu32(i + 1 < n ? FS_XVALUE_DATA :
				  (uint32_t)(len - (size_t)i * FS_XVALUE_DATA));
		h->index = fs_cpu32(i);
		memcpy(b->data + FS_XVALUE_HDR, value + (size_t)i * FS_XVALUE_DATA,
		       fs_le32(h->len));
		bc_put(fs, b);
	}
	if (err) {
		for (i = 0; i < got; i++)
			fs_free_blocks(fs, tx, blk[i], 1, true);
		return err;
	}
	ip->d.blocks += n;
	r->flags = FS_XREC_EXTERNAL;
	r->v.ext.first = fs_cpu64(blk[0]);
	r->v.ext.nblocks = fs_cpu32(n);
	r->v.ext.csum = fs_cpu64(fs_csum(value, len, fs_rec_key(r)));
	return 0;
}

static int chain_free_one(void *arg, uint64_t blk)
{
	struct fs_extlist *l = arg;

	return fs_extlist_add(l, blk, 1);
}

/*
 * Frees the value blocks of r (nothing if its value is inline).  A chain
 * that does not read whole is left allocated - its blocks cannot be
 * proven to be this record's - so that the attribute (or the inode) can
 * still go; fsck finds the leak and frees it.
 */
static int chain_free(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		      const struct fs_xattr_rec_disk *r)
{
	struct fs_extlist l = { 0 };
	size_t i;
	int err;

	if (!(r->flags & FS_XREC_EXTERNAL))
		return 0;
	err = fs_xattr_chain_read(fs, ip->ino, r, NULL, chain_free_one, &l);
	if (err == -EUCLEAN || err == -EIO) {
		fs_log(LOG_WARNING, "inode %llu: the blocks of damaged xattr "
		       "'%.*s' stay allocated until fsck",
		       (unsigned long long)ip->ino, r->name_len, r->name);
		ip->d.blocks -= fs_le32(r->v.ext.nblocks) <= ip->d.blocks ?
				fs_le32(r->v.ext.nblocks) : ip->d.blocks;
		err = 0;
		l.n = 0;
	}
	for (i = 0; i < l.n && !err; i++) {
		fs_free_blocks(fs, tx, l.v[i].blk, l.v[i].len, true);
		ip->d.blocks -= l.v[i].len;
	}
	fs_extlist_free(&l);
	return err;
}

/* ---- records -------------------------------------------------------------- */
static bool xrec_is(const void *rec, const char *name, size_t len)
{
	const struct fs_xattr_rec_disk *r = rec;

	return r->name_len == len && !memcmp(r->name, name, len);
}

/* name's record: 0 (checked), or -ENOENT with used[] (fs_name_scan). */
static int xa_scan(struct fs *fs, struct fs_inode *ip, const char *name,
		   struct fs_xattr_rec_disk *rec, uint64_t used[4])
{
	struct fs_bt t = xa_tree(fs, ip);
	int err = fs_name_scan(fs, &t, name, xrec_is, rec, used);

	return err ? err : fs_xattr_rec_check(fs, rec);
}

/* The record for (name, value) under the lowest free collision index. */
static int xa_rec_new(struct fs *fs, const char *name, const uint64_t used[4],
		      size_t vlen, struct fs_xattr_rec_disk *rec)
{
	size_t len = strlen(name);
	int idx = fs_name_index(used);

	if (idx < 0)
		return idx;
	memset(rec, 0, sizeof(*rec));
	rec->key = fs_cpu64(fs_dir_name_base(fs, name, len) | (uint64_t)idx);
	rec->value_len = fs_cpu32((uint32_t)vlen);
	rec->name_len = (uint8_t)len;
	memcpy(rec->name, name, len);
	return 0;
}

/* Stores (name, value): a new record, or old's replacement. */
static int xa_store(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		    const char *name, const void *value, size_t size,
		    const struct fs_xattr_rec_disk *old, const uint64_t used[4])
{
	struct fs_bt t = xa_tree(fs, ip);
	struct fs_xattr_rec_disk rec;
	int err;

	err = xa_rec_new(fs, name, used, size, &rec);
	if (err)
		return err;
	if (old)
		rec.key = old->key;
	if (size > FS_XATTR_INLINE)
		err = chain_write(fs, tx, ip, &rec, value, size);
	else if (size)
		memcpy(rec.v.inline_value, value, size);
	if (err)
		return err;
	err = old ? fs_bt_update(&t, tx, &rec) : fs_bt_insert(&t, tx, &rec);
	if (err) {
		(void)chain_free(fs, tx, ip, &rec);
		return err;
	}
	return old ? chain_free(fs, tx, ip, old) : 0;
}

static int xa_set_locked(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
			 const char *name, const void *value, size_t size,
			 int flags, bool remove)
{
	struct fs_xattr_rec_disk old;
	struct fs_bt t = xa_tree(fs, ip);
	uint64_t used[4];
	bool found;
	int err;

	err = xa_scan(fs, ip, name, &old, used);
	if (err && err != -ENOENT)
		return err;
	found = !err;
	if (!found && (remove || (flags & XATTR_REPLACE)))
		return -ENODATA;
	if (found && (flags & XATTR_CREATE))
		return -EEXIST;
	/* values in blocks take space as data does, never the reserve */
	if (!remove && xa_chain_len(size) &&
	    !fs_alloc_has_space(fs, xa_chain_len(size), false))
		return -ENOSPC;
	if (remove) {
		err = chain_free(fs, tx, ip, &old);
		if (!err)
			err = fs_bt_delete(&t, tx, fs_rec_key(&old));
	} else {
		err = xa_store(fs, tx, ip, name, value, size,
			       found ? &old : NULL, used);
	}
	if (err)
		return err;
	fs_inode_touch(ip, false, false, true);
	return fs_inode_dirty(fs, tx, ip);
}

int fs_xattr_set(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		 const char *name, const void *value, size_t size, int flags)
{
	if (size > XATTR_SIZE_MAX)
		return -E2BIG;
	return xa_set_locked(fs, tx, ip, name, value, size, flags, false);
}

int fs_xattr_remove(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip,
		    const char *name)
{
	return xa_set_locked(fs, tx, ip, name, NULL, 0, 0, true);
}

ssize_t fs_xattr_get(struct fs *fs, struct fs_inode *ip, const char *name,
		     void *buf, size_t size)
{
	struct fs_xattr_rec_disk rec;
	uint64_t used[4];
	size_t len;
	int err;

	err = xa_scan(fs, ip, name, &rec, used);
	if (err)
		return err == -ENOENT ? -ENODATA : err;
	len = fs_le32(rec.value_len);
	if (size == 0)
		return (ssize_t)len;
	if (size < len)
		return -ERANGE;
	if (rec.flags & FS_XREC_EXTERNAL)
		err = fs_xattr_chain_read(fs, ip->ino, &rec, buf, NULL, NULL);
	else
		memcpy(buf, rec.v.inline_value, len);
	return err ? err : (ssize_t)len;
}

/* ---- walking every record ------------------------------------------------- */
struct xa_list {
	bool (*shown)(const char *name, size_t len, const void *arg);
	const void *arg;
	char *buf;
	size_t size, len;
};

static int xa_no_node(void *arg, uint64_t blk)
{
	return 0;
}

static int xa_list_one(void *arg, const void *rec)
{
	const struct fs_xattr_rec_disk *r = rec;
	struct xa_list *l = arg;

	if (!l->shown(r->name, r->name_len, l->arg))
		return 0;
	if (l->size && l->len + r->name_len + 1 <= l->size) {
		memcpy(l->buf + l->len, r->name, r->name_len);
		l->buf[l->len + r->name_len] = '\0';
	}
	l->len += r->name_len + 1u;
	return 0;
}

ssize_t fs_xattr_list(struct fs *fs, struct fs_inode *ip,
		      bool (*shown)(const char *name, size_t len,
				    const void *arg),
		      const void *arg, char *buf, size_t size)
{
	struct xa_list l = { shown, arg, buf, size, 0 };
	struct fs_bt t = xa_tree(fs, ip);
	int err;

	err = fs_bt_walk(&t, xa_no_node, xa_list_one, &l);
	if (err)
		return err;
	if (size && l.len > size)
		return -ERANGE;
	return (ssize_t)l.len;
}

struct xa_destroy {
	struct fs *fs;
	struct fs_tx *tx;
	struct fs_inode *ip;
};

static int xa_destroy_one(void *arg, const void *rec)
{
	struct xa_destroy *d = arg;

	return chain_free(d->fs, d->tx, d->ip, rec);
}

int fs_xattr_destroy(struct fs *fs, struct fs_tx *tx, struct fs_inode *ip)
{
	struct xa_destroy d = { fs, tx, ip };
	struct fs_bt t = xa_tree(fs, ip);
	int err;

	err = fs_bt_walk(&t, xa_no_node, xa_destroy_one, &d);
	if (!err)
		err = fs_bt_destroy(&t, tx);
	return err;
}
