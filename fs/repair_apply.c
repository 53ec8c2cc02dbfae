/*
 * repair_apply: fixes what repair_scan.c found, on a read-write mount,
 * one layer per call (fs/repair.h says why):
 *
 *   1. bitmaps, when any bit is wrong: the block bitmap rewritten whole
 *      from the scan, the inode chunk map's wrong in-use bits set.  The
 *      in-memory allocation maps are stale afterwards, so the caller
 *      unmounts before anything allocates.
 *   2. otherwise: damaged inodes cleared, unreadable maps emptied,
 *      dangling entries removed, entries re-keyed or re-typed, counts set,
 *      and unreachable inodes linked into /lost+found.
 *
 * Every change is a journalled transaction of its own.  Each inode is
 * changed under fs->ns_lock (write) and its own lock, and is never left
 * with a link count of 0 (fs_iput would free it).
 */
#include <dirent.h>
#include <string.h>
#include "repair_int.h"

#define LOST_FOUND "lost+found"

/* ---- layer 1: bitmaps ----------------------------------------------------- */
static int bitmap_block_write(struct fs *fs, uint64_t blk, enum fs_btype type,
			      uint64_t first, uint64_t bits, const uint8_t *want)
{
	struct fs_buf *b;
	struct fs_tx *tx;
	uint64_t k, bit;
	uint8_t *map;
	int err;

	err = fs_tx_begin(fs, &tx);
	if (err)
		return err;
	if (bc_read_meta(fs, blk, type, &b)) {
		err = bc_new(fs, blk, &b);
		if (err)
			goto out;
		fs_bhdr_init(b->data, type, blk, 0);
	}
	fs_tx_dirty(fs, tx, b);
	map = b->data + FS_BITMAP_HDR;
	memset(map, 0, FS_BSIZE - FS_BITMAP_HDR);
	for (k = 0; k < FS_BITS_PER_BITMAP; k++) {
		bit = first + k;
		if (bit >= bits || rp_bit(want, bit))
			rp_bit_set(map, k);
	}
	bc_put(fs, b);
out:
	fs_tx_end(fs, tx);
	return err;
}

static int bitmap_write(struct fs *fs, uint64_t start, uint64_t nb,
			enum fs_btype type, uint64_t bits, const uint8_t *want)
{
	uint64_t i;
	int err = 0;

	for (i = 0; i < nb && !err; i++)
		err = bitmap_block_write(fs, start + i, type,
					 i * FS_BITS_PER_BITMAP, bits, want);
	return err;
}

/* Every chunk whose in-use bits differ from the scan's gets them. */
static int ichunk_bits_write(struct fs_repair *r, const uint8_t *want)
{
	uint64_t c, i;
	uint16_t bits;
	struct fs_tx *tx;
	int err = 0;

	for (c = 0; c < r->ninodes / 16 && !err; c++) {
		for (bits = 0, i = 0; i < 16; i++)
			if (rp_bit(want, c * 16 + i))
				bits |= (uint16_t)(1u << i);
		if (bits == r->ibits[c])
			continue;
		err = fs_tx_begin(r->fs, &tx);
		if (err)
			break;
		err = fs_ichunk_set_used(r->fs, tx, c, bits);
		fs_tx_end(r->fs, tx);
	}
	return err;
}

static int apply_bitmaps(struct fs_repair *r, uint64_t *fixed)
{
	struct fs_sb_disk *sb = &r->fs->sb;
	uint8_t *im = rp_imap_want(r);
	int err;

	if (!im)
		return -ENOMEM;
	err = bitmap_write(r->fs, fs_le64(sb->bbitmap_start),
			   fs_le64(sb->bbitmap_blocks), FS_BT_BBITMAP,
			   r->nblocks, r->used);
	if (!err)
		err = ichunk_bits_write(r, im);
	free(im);
	if (!err)
		*fixed += r->bbits_wrong + r->ibits_wrong;
	return err;
}

/* ---- layer 2: inodes and entries ------------------------------------------ */
typedef int (*inode_fix_fn)(struct fs_repair *r, struct fs_tx *tx,
			    struct fs_inode *ip, const struct rp_fix *f);

/* Runs fn on the locked inode inside a transaction and writes it back. */
static int with_inode(struct fs_repair *r, uint64_t ino, inode_fix_fn fn,
		      const struct rp_fix *f)
{
	struct fs *fs = r->fs;
	struct fs_inode *ip;
	struct fs_tx *tx;
	int err;

	err = fs_iget(fs, ino, &ip);
	if (err)
		return err;
	pthread_rwlock_wrlock(&ip->lock);
	err = fs_tx_begin(fs, &tx);
	if (!err) {
		err = fn(r, tx, ip, f);
		if (!ip->d.nlink && !(r->st[ino] & RP_ORPHAN))
			ip->d.nlink = S_ISDIR(ip->d.mode) ? 2 : 1;
		if (!err)
			err = fs_inode_dirty(fs, tx, ip);
		fs_tx_end(fs, tx);
	}
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(fs, ip);
	return err;
}

static int fix_map(struct fs_repair *r, struct fs_tx *tx, struct fs_inode *ip,
		   const struct rp_fix *f)
{
	if (f->what & 2) {
		ip->d.xattr_root = 0;
		ip->d.xattr_depth = 0;
	}
	if (!(f->what & 1)) {
		ip->d.blocks = r->nblk[ip->ino];
		return 0;
	}
	ip->d.map_root = 0;
	ip->d.map_depth = 0;
	ip->d.nextents = 0;
	ip->d.flags &= ~FS_IFLAG_EXTENT_TREE;
	ip->d.blocks = f->what & 2 ? 0 : f->xblocks;
	if (S_ISDIR(ip->d.mode)) {
		ip->d.dir_entries = 0;
		ip->d.size = 0;
	}
	return 0;
}

/* Puts f's records (a batch of the salvaged ones) back into the emptied
 * map: entries under their keys, extents with their blocks counted. */
static int fix_refill(struct fs_repair *r, struct fs_tx *tx,
		      struct fs_inode *ip, const struct rp_fix *f)
{
	const struct fs_dirent_disk *de = f->recs;
	const struct fs_extent_disk *ex = f->recs;
	int err = 0;

	for (size_t i = 0; i < f->nrecs && !err; i++) {
		if (S_ISDIR(ip->d.mode)) {
			err = fs_dir_insert_rec(r->fs, tx, ip, &de[i]);
			continue;
		}
		err = fs_ext_add(r->fs, tx, ip, fs_le64(ex[i].lblk),
				 fs_le64(ex[i].pblk), fs_le32(ex[i].len),
				 fs_le32(ex[i].flags));
		if (!err)
			ip->d.blocks += fs_le32(ex[i].len);
	}
	return err;
}

/* Records put back per transaction: a batch dirties a few blocks each
 * (a leaf, a split), well within any journal's transaction. */
#define REFILL_BATCH 16

/* The map emptied, then rebuilt from what verified (what 4), a batch of
 * records per transaction: each leaves a consistent map; a crash between
 * them loses the records not yet put back (the next run frees their
 * blocks), as an interrupted e2fsck can. */
static int map_fix(struct fs_repair *r, const struct rp_fix *f)
{
	struct rp_fix part = *f;
	int err = with_inode(r, f->ino, fix_map, f);
	size_t rs = sizeof(struct fs_extent_disk);

	if (r->dtype[f->ino] == DT_DIR)
		rs = sizeof(struct fs_dirent_disk);
	for (size_t i = 0; !err && (f->what & 4) && i < f->nrecs;
	     i += REFILL_BATCH) {
		part.recs = (uint8_t *)f->recs + i * rs;
		part.nrecs = f->nrecs - i < REFILL_BATCH ? f->nrecs - i :
			     REFILL_BATCH;
		err = with_inode(r, f->ino, fix_refill, &part);
	}
	return err;
}

static int fix_counts(struct fs_repair *r, struct fs_tx *tx,
		      struct fs_inode *ip, const struct rp_fix *f)
{
	uint64_t ino = ip->ino;
	bool dir = S_ISDIR(ip->d.mode);

	if (!(r->st[ino] & RP_ORPHAN) || r->links[ino])
		ip->d.nlink = dir ? 2 + r->subdirs[ino] : r->links[ino];
	ip->d.blocks = r->nblk[ino];
	if (dir) {
		ip->d.dir_entries = r->entries[ino];
		if (ino != FS_ROOT_INO && r->links[ino])
			ip->d.parent = r->parent_of[ino];
	}
	return 0;
}

static struct fs_bt dir_bt(struct fs *fs, struct fs_inode *dp)
{
	return (struct fs_bt){ fs, &dp->d.map_root, &dp->d.map_depth,
			       sizeof(struct fs_dirent_disk), FS_TREE_DIR,
			       dp->ino, &dp->d.blocks, 0 };
}

static int entry_delete(struct fs_repair *r, struct fs_tx *tx,
			struct fs_inode *dp, const struct rp_fix *f)
{
	struct fs_bt t = dir_bt(r->fs, dp);
	int err;

	err = fs_bt_delete(&t, tx, fs_rec_key(&f->rec));
	if (err)
		return err;
	if (dp->d.dir_entries)
		dp->d.dir_entries--;
	dp->d.size = dp->d.blocks * FS_BSIZE;
	return 0;
}

static int fix_dangling(struct fs_repair *r, struct fs_tx *tx,
			struct fs_inode *dp, const struct rp_fix *f)
{
	return entry_delete(r, tx, dp, f);
}

static int fix_type(struct fs_repair *r, struct fs_tx *tx, struct fs_inode *dp,
		    const struct rp_fix *f)
{
	struct fs_bt t = dir_bt(r->fs, dp);
	struct fs_dirent_disk rec = f->rec;

	rec.type = r->dtype[fs_le64(rec.ino)];
	return fs_bt_update(&t, tx, &rec);
}

static int fix_rekey(struct fs_repair *r, struct fs_tx *tx, struct fs_inode *dp,
		     const struct rp_fix *f)
{
	uint64_t ino = fs_le64(f->rec.ino);
	char name[FS_NAME_MAX + 1];
	int err;

	err = entry_delete(r, tx, dp, f);
	if (err)
		return err;
	memcpy(name, f->rec.name, f->rec.name_len);
	name[f->rec.name_len] = '\0';
	err = fs_dir_add(r->fs, tx, dp, name, ino, r->dtype[ino], NULL);
	/* the same name under its right key already: this was a duplicate */
	return err == -EEXIST ? 0 : err;
}

static int clear_slot(struct fs_repair *r, uint64_t ino)
{
	struct fs *fs = r->fs;
	struct fs_buf *b;
	struct fs_tx *tx;
	int err;

	err = fs_tx_begin(fs, &tx);
	if (err)
		return err;
	err = fs_ichunk_blk(fs, ino) ? bc_read(fs, fs_ichunk_blk(fs, ino),
					       FS_BUF_ITABLE, &b) : -ENOENT;
	/* unreadable: every inode in it was lost; it is written anew, all
	 * free (the scan cleared each in-use one; the chunk map follows) */
	if (err == -EIO) {
		err = bc_new(fs, fs_ichunk_blk(fs, ino), &b);
		if (!err)
			b->kind = FS_BUF_ITABLE;
	}
	if (!err) {
		fs_tx_dirty(fs, tx, b);
		memset(b->data + (ino % FS_INODES_PER_BLOCK) * FS_INODE_SIZE,
		       0, FS_INODE_SIZE);
		bc_put(fs, b);
	}
	fs_tx_end(fs, tx);
	return err;
}

/* The root directory written anew, empty, in its slot (its block written
 * anew too when it cannot be read: the scan cleared every inode in it). */
static int make_root(struct fs_repair *r)
{
	struct fs *fs = r->fs;
	struct timespec now;
	struct fs_buf *b;
	struct fs_tx *tx;
	int err;

	clock_gettime(CLOCK_REALTIME, &now);
	err = fs_tx_begin(fs, &tx);
	if (err)
		return err;
	err = bc_read(fs, fs_ichunk_blk(fs, FS_ROOT_INO), FS_BUF_ITABLE, &b);
	if (err == -EIO || err == -EUCLEAN) {
		err = bc_new(fs, fs_ichunk_blk(fs, FS_ROOT_INO), &b);
		if (!err)
			b->kind = FS_BUF_ITABLE;
	}
	if (!err) {
		fs_tx_dirty(fs, tx, b);
		fs_inode_root_encode(b->data, (uint64_t)now.tv_sec *
				     1000000000ull + (uint64_t)now.tv_nsec);
		bc_put(fs, b);
	}
	fs_tx_end(fs, tx);
	return err;
}

/* ---- lost+found ----------------------------------------------------------- */
/* The lost+found directory's inode, created when missing; 0 if unusable. */
static uint64_t lost_found(struct fs_repair *r)
{
	struct fs_ctx ctx = { .uid = 0, .gid = 0, .umask = 0 };
	struct fs_attr a;
	int err;

	err = fs_lookup(r->fs, FS_ROOT_INO, LOST_FOUND, &a);
	if (err == -ENOENT)
		err = fs_mkdir(r->fs, &ctx, FS_ROOT_INO, LOST_FOUND, 0700, &a);
	if (err) {
		rp_say(r, "/%s cannot be used (%s): unreachable inodes stay "
		       "where they are this round", LOST_FOUND, strerror(-err));
		return 0;
	}
	fs_forget(r->fs, a.ino, 1);
	if (!S_ISDIR(a.mode)) {
		rp_say(r, "/%s is not a directory: unreachable inodes stay "
		       "where they are", LOST_FOUND);
		return 0;
	}
	return a.ino;
}

static int link_lost(struct fs_repair *r, uint64_t lf, uint64_t ino)
{
	struct fs *fs = r->fs;
	struct fs_lockset ls = { .n = 0 };
	struct fs_inode *dp = NULL, *ip = NULL;
	char name[32];
	struct fs_tx *tx;
	int err;

	err = fs_iget(fs, lf, &dp);
	if (!err)
		err = fs_iget(fs, ino, &ip);
	if (err)
		goto out;
	fs_lockset_add(&ls, dp);
	fs_lockset_add(&ls, ip);
	fs_lockset_lock(&ls);
	err = fs_tx_begin(fs, &tx);
	if (!err) {
		snprintf(name, sizeof(name), "#%llu", (unsigned long long)ino);
		err = fs_dir_add(fs, tx, dp, name, ino, rp_dtype(ip->d.mode),
				 NULL);
		if (!err && S_ISDIR(ip->d.mode)) {
			ip->d.parent = lf;
			dp->d.nlink++;
		}
		if (!ip->d.nlink)
			ip->d.nlink = S_ISDIR(ip->d.mode) ? 2 : 1;
		if (!err)
			err = fs_inode_dirty(fs, tx, ip);
		if (!err)
			err = fs_inode_dirty(fs, tx, dp);
		fs_tx_end(fs, tx);
	}
	fs_lockset_unlock(&ls);
out:
	if (ip)
		fs_iput(fs, ip);
	if (dp)
		fs_iput(fs, dp);
	return err;
}

/* ---- the layers ----------------------------------------------------------- */
static int apply_one(struct fs_repair *r, const struct rp_fix *f)
{
	switch (f->kind) {
	case RP_FIX_CLEAR:
		return clear_slot(r, f->ino);
	case RP_FIX_MAP:
		return map_fix(r, f);
	case RP_FIX_DANGLING:
		return with_inode(r, f->ino, fix_dangling, f);
	case RP_FIX_REKEY:
		return with_inode(r, f->ino, fix_rekey, f);
	case RP_FIX_TYPE:
		return with_inode(r, f->ino, fix_type, f);
	case RP_FIX_COUNTS:
		return with_inode(r, f->ino, fix_counts, f);
	case RP_FIX_ROOT:
		return make_root(r);
	case RP_FIX_LOST:
		break;
	}
	return 0;
}

static int apply_inodes(struct fs_repair *r, uint64_t *fixed)
{
	static const enum rp_fix_kind order[] = {
		RP_FIX_CLEAR, RP_FIX_ROOT, RP_FIX_MAP, RP_FIX_DANGLING,
		RP_FIX_REKEY, RP_FIX_TYPE, RP_FIX_COUNTS,
	};
	uint64_t lf = 0;
	size_t i, k;
	int err = 0;

	for (i = 0; i < r->nfix; i++)
		if (r->fix[i].kind == RP_FIX_LOST) {
			lf = lost_found(r);
			break;
		}
	pthread_rwlock_wrlock(&r->fs->ns_lock);
	for (k = 0; k < sizeof(order) / sizeof(order[0]) && !err; k++)
		for (i = 0; i < r->nfix && !err; i++) {
			if (r->fix[i].kind != order[k])
				continue;
			err = apply_one(r, &r->fix[i]);
			*fixed += !err;
		}
	for (i = 0; i < r->nfix && !err && lf; i++) {
		if (r->fix[i].kind != RP_FIX_LOST || r->fix[i].ino == lf)
			continue;
		err = link_lost(r, lf, r->fix[i].ino);
		*fixed += !err;
	}
	pthread_rwlock_unlock(&r->fs->ns_lock);
	return err;
}

int fs_repair_apply(struct fs *fs, struct fs_repair *r, uint64_t *fixed)
{
	*fixed = 0;
	if (fs->rdonly)
		return -EROFS;
	if (r->bbits_wrong + r->ibits_wrong)
		return apply_bitmaps(r, fixed);
	return apply_inodes(r, fixed);
}
