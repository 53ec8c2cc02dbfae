/*
 * check: a full consistency check of a mounted, idle filesystem (tests
 * after every simulated crash; fsck can call it too).
 *
 * It walks the tree from the root and the orphan list, reading every inode,
 * extent, tree node, xattr record and value block, and requires:
 *   - every block is used by exactly one owner, and the on-disk block
 *     bitmap marks exactly the used blocks (no leak, no double use);
 *   - the inode chunk map names chunks 0 .. n-1 in order, each block used
 *     once, and its in-use bits mark exactly the reachable and orphan
 *     inodes;
 *   - link counts: a file's nlink is the number of entries naming it, a
 *     directory's is 2 + its subdirectories, and it has one name;
 *   - each inode's block count, each directory's entry count and parent;
 *   - directory keys match their names' hashes, entry types the inodes;
 *   - B+tree keys sorted and within their parents' bounds (fs_bt_walk);
 *   - xattr records keyed by their names' hashes, value chains whole and
 *     matching the checksums their records hold.
 * Problems are counted and the first one is described in the report.
 */
#include <dirent.h>
#include <stdarg.h>
#include <string.h>
#include "fs_int.h"

struct chk {
	struct fs *fs;
	struct fs_check_report *r;
	uint8_t *used;                  /* one bit per block */
	uint32_t *links;                /* entries naming each inode */
	uint32_t *subdirs;              /* per directory inode */
	uint64_t *parent_of;            /* directory inode: where it was found */
	uint64_t *queue;                /* directories to visit */
	size_t nqueue, qcap;
	uint64_t cur_dir;               /* directory being scanned */
	uint64_t cur_count;             /* its entries */
	uint64_t owner_blocks;          /* blocks counted for the inode */
	uint64_t ninodes;               /* inode numbers with a slot */
	uint16_t *ibits;                /* the chunk map's in-use bits */
	uint64_t nchunks;               /* chunk records seen */
};

static void chk_fail(struct chk *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void chk_fail(struct chk *c, const char *fmt, ...)
{
	va_list ap;

	if (c->r->errors++ == 0) {
		va_start(ap, fmt);
		vsnprintf(c->r->first_error, sizeof(c->r->first_error), fmt, ap);
		va_end(ap);
	}
}

/* Marks blk used; a second use is an error. */
static void chk_use(struct chk *c, uint64_t blk, uint64_t owner)
{
	if (blk >= fs_le64(c->fs->sb.blocks)) {
		chk_fail(c, "inode %llu uses block %llu past the end",
			 (unsigned long long)owner, (unsigned long long)blk);
		return;
	}
	if (c->used[blk / 8] & (1u << (blk % 8)))
		chk_fail(c, "block %llu used twice (inode %llu)",
			 (unsigned long long)blk, (unsigned long long)owner);
	c->used[blk / 8] |= (uint8_t)(1u << (blk % 8));
	c->r->blocks_used++;
}

static int chk_node(void *arg, uint64_t blk)
{
	struct chk *c = arg;

	chk_use(c, blk, c->cur_dir);
	c->owner_blocks++;
	return 0;
}

static int chk_extent(void *arg, const void *rec)
{
	const struct fs_extent_disk *d = rec;
	struct chk *c = arg;
	uint64_t i, p = fs_le64(d->pblk), n = fs_le32(d->len);

	if (!n || p < fs_le64(c->fs->sb.data_start))
		chk_fail(c, "inode %llu: bad extent at file block %llu",
			 (unsigned long long)c->cur_dir,
			 (unsigned long long)fs_le64(d->lblk));
	for (i = 0; i < n; i++)
		chk_use(c, p + i, c->cur_dir);
	c->owner_blocks += n;
	return 0;
}

static int chk_queue(struct chk *c, uint64_t ino)
{
	void *q;

	if (c->nqueue == c->qcap) {
		q = realloc(c->queue, (c->qcap * 2 + 64) * sizeof(*c->queue));
		if (!q)
			return -ENOMEM;
		c->queue = q;
		c->qcap = c->qcap * 2 + 64;
	}
	c->queue[c->nqueue++] = ino;
	return 0;
}

static int chk_dirent(void *arg, const void *rec)
{
	const struct fs_dirent_disk *d = rec;
	struct chk *c = arg;
	uint64_t ino = fs_le64(d->ino), key = fs_rec_key(d);
	uint64_t base = fs_csum(d->name, d->name_len,
				fs_le64(c->fs->sb.hash_seed)) &
			fs_dir_hash_mask;

	if (base < 0x100)
		base = 0x100;
	if (!d->name_len || (key & ~0xffull) != base)
		chk_fail(c, "directory %llu: entry key does not match its name",
			 (unsigned long long)c->cur_dir);
	if (!ino || ino >= c->ninodes) {
		chk_fail(c, "directory %llu: entry names inode %llu",
			 (unsigned long long)c->cur_dir,
			 (unsigned long long)ino);
		return 0;
	}
	c->cur_count++;
	if (d->type == DT_DIR)
		c->subdirs[c->cur_dir]++;
	if (c->links[ino]++)
		return 0;
	c->parent_of[ino] = c->cur_dir;
	return chk_queue(c, ino);
}

static int chk_xvalue_block(void *arg, uint64_t blk)
{
	struct chk *c = arg;

	chk_use(c, blk, c->cur_dir);
	c->owner_blocks++;
	return 0;
}

/* One attribute: a well-formed record, its value chain whole. */
static int chk_xattr(void *arg, const void *rec)
{
	const struct fs_xattr_rec_disk *r = rec;
	struct chk *c = arg;
	int err;

	err = fs_xattr_rec_check(c->fs, r);
	if (!err && (r->flags & FS_XREC_EXTERNAL))
		err = fs_xattr_chain_read(c->fs, c->cur_dir, r, NULL,
					  chk_xvalue_block, c);
	if (err == -ENOMEM)
		return err;
	if (err)
		chk_fail(c, "inode %llu: xattr '%.*s' is damaged",
			 (unsigned long long)c->cur_dir, r->name_len, r->name);
	return 0;
}

static int chk_xattrs(struct chk *c, struct fs_inode *ip)
{
	struct fs_bt t = { c->fs, &ip->d.xattr_root, &ip->d.xattr_depth,
			   sizeof(struct fs_xattr_rec_disk), FS_TREE_XATTR,
			   ip->ino, NULL, 0 };

	return fs_bt_walk(&t, chk_node, chk_xattr, c);
}

/* The blocks of one inode: extents, trees, xattr tree and values. */
static int chk_inode_blocks(struct chk *c, struct fs_inode *ip)
{
	struct fs_bt t;
	uint32_t i;
	int err = 0;

	c->cur_dir = ip->ino;
	c->owner_blocks = 0;
	if (S_ISDIR(ip->d.mode)) {
		c->cur_count = 0;
		t = (struct fs_bt){ c->fs, &ip->d.map_root, &ip->d.map_depth,
				    sizeof(struct fs_dirent_disk), FS_TREE_DIR,
				    ip->ino, NULL, 0 };
		err = fs_bt_walk(&t, chk_node, chk_dirent, c);
		if (!err && c->cur_count != ip->d.dir_entries)
			chk_fail(c, "directory %llu: %llu entries, says %llu",
				 (unsigned long long)ip->ino,
				 (unsigned long long)c->cur_count,
				 (unsigned long long)ip->d.dir_entries);
	} else if (ip->d.flags & FS_IFLAG_EXTENT_TREE) {
		t = (struct fs_bt){ c->fs, &ip->d.map_root, &ip->d.map_depth,
				    sizeof(struct fs_extent_disk),
				    FS_TREE_EXTENT, ip->ino, NULL, 0 };
		err = fs_bt_walk(&t, chk_node, chk_extent, c);
	} else {
		for (i = 0; i < ip->d.nextents; i++) {
			struct fs_extent_disk d = {
				fs_cpu64(ip->d.ext[i].lblk),
				fs_cpu64(ip->d.ext[i].pblk),
				fs_cpu32(ip->d.ext[i].len),
				fs_cpu32(ip->d.ext[i].flags) };

			chk_extent(c, &d);
		}
	}
	if (!err)
		err = chk_xattrs(c, ip);
	if (!err && c->owner_blocks != ip->d.blocks)
		chk_fail(c, "inode %llu: %llu blocks found, says %llu",
			 (unsigned long long)ip->ino,
			 (unsigned long long)c->owner_blocks,
			 (unsigned long long)ip->d.blocks);
	return err;
}

static int chk_orphan(void *arg, const void *rec)
{
	struct chk *c = arg;
	uint64_t ino = fs_rec_key(rec);

	if (!ino || ino >= c->ninodes)
		chk_fail(c, "orphan list names inode %llu",
			 (unsigned long long)ino);
	else if (c->links[ino] == 0)
		return chk_queue(c, ino);
	return 0;
}

static int chk_orphans(struct chk *c)
{
	struct fs_sb_disk *sb;
	struct fs_buf *b;
	uint64_t root;
	uint32_t depth;
	struct fs_bt t;
	int err;

	err = fs_sb_get(c->fs, &b);
	if (err)
		return err;
	sb = (struct fs_sb_disk *)b->data;
	root = fs_le64(sb->orphan_root);
	depth = fs_le32(sb->orphan_depth);
	bc_put(c->fs, b);
	t = (struct fs_bt){ c->fs, &root, &depth, sizeof(struct fs_orphan_disk),
			    FS_TREE_ORPHAN, 0, NULL, 0 };
	c->cur_dir = 0;
	return fs_bt_walk(&t, chk_node, chk_orphan, c);
}

/* Link count, parent and type of one inode against what the walk found. */
static void chk_inode_links(struct chk *c, struct fs_inode *ip)
{
	uint64_t ino = ip->ino;

	if (S_ISDIR(ip->d.mode)) {
		c->r->dirs++;
		if (ip->d.nlink && ip->d.nlink != 2 + c->subdirs[ino])
			chk_fail(c, "directory %llu: nlink %u, %u subdirectories",
				 (unsigned long long)ino, ip->d.nlink,
				 c->subdirs[ino]);
		if (ino != FS_ROOT_INO && c->links[ino] > 1)
			chk_fail(c, "directory %llu has %u names",
				 (unsigned long long)ino, c->links[ino]);
		if (ino != FS_ROOT_INO && c->links[ino] &&
		    ip->d.parent != c->parent_of[ino])
			chk_fail(c, "directory %llu: parent %llu, found in %llu",
				 (unsigned long long)ino,
				 (unsigned long long)ip->d.parent,
				 (unsigned long long)c->parent_of[ino]);
	} else {
		c->r->files++;
		if (ip->d.nlink != c->links[ino])
			chk_fail(c, "inode %llu: nlink %u, %u names",
				 (unsigned long long)ino, ip->d.nlink,
				 c->links[ino]);
	}
}

static int chk_visit(struct chk *c, uint64_t ino)
{
	struct fs_inode *ip;
	int err;

	err = fs_iget(c->fs, ino, &ip);
	if (err) {
		chk_fail(c, "inode %llu cannot be read (%d)",
			 (unsigned long long)ino, err);
		return err == -ENOMEM ? err : 0;
	}
	pthread_rwlock_rdlock(&ip->lock);
	c->r->inodes++;
	err = chk_inode_blocks(c, ip);
	pthread_rwlock_unlock(&ip->lock);
	fs_iput(c->fs, ip);
	if (err && err != -ENOMEM) {
		chk_fail(c, "inode %llu: damaged tree (%d)",
			 (unsigned long long)ino, err);
		err = 0;
	}
	return err;
}

/* Link counts are known only after the whole walk. */
static int chk_links(struct chk *c)
{
	struct fs_inode *ip;
	size_t i;
	int err;

	for (i = 0; i < c->nqueue; i++) {
		err = fs_iget(c->fs, c->queue[i], &ip);
		if (err)
			continue;
		pthread_rwlock_rdlock(&ip->lock);
		chk_inode_links(c, ip);
		pthread_rwlock_unlock(&ip->lock);
		fs_iput(c->fs, ip);
	}
	return 0;
}

/* The on-disk bitmaps against what the walk found. */
static int chk_bitmap(struct chk *c, uint64_t start, uint64_t nblocks,
		      enum fs_btype type, uint64_t bits, const uint8_t *want,
		      const char *what)
{
	struct fs_buf *b;
	uint64_t i, k, bit;
	bool on, ok;
	int err;

	for (i = 0; i < nblocks; i++) {
		err = bc_read_meta(c->fs, start + i, type, &b);
		if (err)
			return err;
		for (k = 0; k < FS_BITS_PER_BITMAP; k++) {
			bit = i * FS_BITS_PER_BITMAP + k;
			if (bit >= bits)
				break;
			on = b->data[FS_BITMAP_HDR + k / 8] & (1u << (k % 8));
			ok = !!(want[bit / 8] & (1u << (bit % 8)));
			if (on != ok)
				chk_fail(c, "%s %llu is %s in the bitmap but %s",
					 what, (unsigned long long)bit,
					 on ? "used" : "free",
					 on ? "unreferenced" : "in use");
		}
		bc_put(c->fs, b);
	}
	return 0;
}

/* ---- the inode chunk map -------------------------------------------------- */
static int chk_ichunk(void *arg, const void *rec)
{
	const struct fs_ichunk_disk *d = rec;
	struct chk *c = arg;
	uint64_t k = fs_rec_key(d), p = fs_le64(d->pblk);

	if (k != c->nchunks || k >= c->ninodes / 16 ||
	    p < fs_le64(c->fs->sb.data_start)) {
		chk_fail(c, "inode chunk map: chunk %llu (block %llu) out of "
			 "place", (unsigned long long)k, (unsigned long long)p);
		return -EUCLEAN;
	}
	chk_use(c, p, 0);
	c->ibits[k] = fs_le16(d->used);
	c->nchunks++;
	return 0;
}

static int chk_ichunks(struct chk *c)
{
	struct fs_ichunks *ic = &c->fs->ichunks;
	struct fs_bt t = { c->fs, &ic->root, &ic->depth,
			   sizeof(struct fs_ichunk_disk), FS_TREE_ICHUNK, 0,
			   NULL, 0 };
	int err;

	c->cur_dir = 0;
	err = fs_bt_walk(&t, chk_node, chk_ichunk, c);
	if (err && err != -ENOMEM)
		chk_fail(c, "the inode chunk map is damaged (%d)", err);
	if (!err && c->nchunks * 16 != c->ninodes)
		chk_fail(c, "the inode chunk map has %llu chunks, %llu in "
			 "memory", (unsigned long long)c->nchunks,
			 (unsigned long long)c->ninodes / 16);
	return err == -ENOMEM ? err : 0;
}

/* Every chunk's in-use bits against the inodes the walk found. */
static void chk_ichunk_bits(struct chk *c, const uint8_t *want)
{
	uint64_t ino;
	bool on, ok;

	for (ino = 0; ino < c->nchunks * 16; ino++) {
		on = c->ibits[ino / 16] >> (ino % 16) & 1;
		ok = want[ino / 8] >> (ino % 8) & 1;
		if (on != ok)
			chk_fail(c, "inode %llu is %s in the chunk map but %s",
				 (unsigned long long)ino, on ? "used" : "free",
				 on ? "unreferenced" : "in use");
	}
}

static int chk_alloc(struct chk *c, uint64_t blocks, uint64_t inodes)
{
	c->ibits = calloc(inodes / 16 + 1, sizeof(*c->ibits));
	c->used = calloc(blocks / 8 + 1, 1);
	c->links = calloc(inodes, sizeof(*c->links));
	c->subdirs = calloc(inodes, sizeof(*c->subdirs));
	c->parent_of = calloc(inodes, sizeof(*c->parent_of));
	return c->used && c->links && c->subdirs && c->parent_of && c->ibits ?
	       0 : -ENOMEM;
}

static int chk_run(struct chk *c)
{
	uint64_t blocks = fs_le64(c->fs->sb.blocks), i;
	uint64_t inodes = c->ninodes = fs_ichunk_inodes(c->fs);
	uint8_t *imap;
	size_t done = 0;
	int err;

	err = chk_alloc(c, blocks, inodes);
	if (err)
		return err;
	for (i = 0; i < fs_le64(c->fs->sb.data_start); i++)
		c->used[i / 8] |= (uint8_t)(1u << (i % 8));
	c->r->blocks_used = 0;
	err = chk_ichunks(c);
	if (!err)
		err = chk_queue(c, FS_ROOT_INO);
	c->links[FS_ROOT_INO] = 1;
	while (!err && done < c->nqueue)
		err = chk_visit(c, c->queue[done++]);
	if (!err)
		err = chk_orphans(c);
	while (!err && done < c->nqueue)
		err = chk_visit(c, c->queue[done++]);
	c->links[FS_ROOT_INO] = 0;
	if (!err)
		err = chk_links(c);
	if (!err)
		err = chk_bitmap(c, fs_le64(c->fs->sb.bbitmap_start),
				 fs_le64(c->fs->sb.bbitmap_blocks),
				 FS_BT_BBITMAP, blocks, c->used, "block");
	if (err)
		return err;
	imap = calloc(inodes / 8 + 1, 1);
	if (!imap)
		return -ENOMEM;
	imap[0] |= 1;                   /* inode 0 is never used */
	for (i = 0; i < c->nqueue; i++)
		imap[c->queue[i] / 8] |= (uint8_t)(1u << (c->queue[i] % 8));
	chk_ichunk_bits(c, imap);
	free(imap);
	return 0;
}

int fs_check(struct fs *fs, struct fs_check_report *r)
{
	struct chk c = { .fs = fs, .r = r };
	int err;

	memset(r, 0, sizeof(*r));
	pthread_rwlock_wrlock(&fs->ns_lock);
	err = chk_run(&c);
	pthread_rwlock_unlock(&fs->ns_lock);
	free(c.used);
	free(c.links);
	free(c.subdirs);
	free(c.parent_of);
	free(c.ibits);
	free(c.queue);
	if (err)
		return err;
	return r->errors ? -EUCLEAN : 0;
}
