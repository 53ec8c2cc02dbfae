/*
 * ichunk: inode numbers and where inodes live - chunks of 16 inodes (one
 * 4 KiB block each) allocated from the data area on demand, as XFS and
 * btrfs allocate inodes, so the filesystem runs out of inodes only when it
 * runs out of space (or reaches the limit mkfs set, sb.inodes).
 *
 * The chunk map is a B+tree (kind FS_TREE_ICHUNK, root in the superblock)
 * of struct fs_ichunk_disk: chunk number -> block, and the chunk's in-use
 * bits (what format 1's inode bitmap said).  Chunks are numbered densely
 * and never moved: inode n is always slot n % 16 of chunk n / 16, so inode
 * numbers (and file handles) stay stable, and a free slot keeps its
 * generation for the next inode to take it.  The last chunks, once empty,
 * are given back (ich_trim): their block returns to free space, as XFS
 * frees an empty inode chunk; a slot never used (a chunk made again
 * later) starts 32 random bits above every generation this mount has seen
 * (gen_hi, inode.c fs_inode_new), so neither an inode the kernel may
 * still hold nor a file handle saved before a remount matches a new one.  The map is loaded whole at
 * mount (ic->v); every change writes the record (and the root, when it
 * moves) in the caller's transaction.
 *
 * Usage: fs_alloc_inode / fs_free_inode inside a transaction (inode.c);
 * fs_ichunk_blk to find an inode's table block.
 *
 * Locking: ic->lock guards ic and the chunk map; it is taken inside a
 * handle, before alloc.lock (a new chunk allocates blocks) and the buffer
 * cache's locks.
 */
#include <string.h>
#include "fs_int.h"

#define ICH_ALL 0xffffu

static struct fs_bt ich_tree(struct fs *fs)
{
	struct fs_ichunks *ic = &fs->ichunks;

	return (struct fs_bt){ fs, &ic->root, &ic->depth,
			       sizeof(struct fs_ichunk_disk), FS_TREE_ICHUNK,
			       0, &ic->nodes, 0 };
}

/* ---- load ----------------------------------------------------------------- */
static int ich_grow(struct fs_ichunks *ic)
{
	struct fs_ichunk *v;
	uint64_t cap = ic->cap * 2 + 64;

	v = realloc(ic->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	ic->v = v;
	ic->cap = cap;
	return 0;
}

static int ich_count_node(void *arg, uint64_t blk)
{
	struct fs *fs = arg;

	fs->ichunks.nodes++;
	return 0;
}

static int ich_load_one(void *arg, const void *rec)
{
	const struct fs_ichunk_disk *d = rec;
	struct fs *fs = arg;
	struct fs_ichunks *ic = &fs->ichunks;
	uint64_t p = fs_le64(d->pblk);
	int err;

	if (fs_rec_key(d) != ic->n || p < fs_le64(fs->sb.data_start) ||
	    p >= fs_le64(fs->sb.blocks) || (ic->n + 1) * 16 > ic->limit)
		return -EUCLEAN;
	if (ic->n == ic->cap && (err = ich_grow(ic)))
		return err;
	ic->v[ic->n].pblk = p;
	ic->v[ic->n].used = fs_le16(d->used);
	ic->used += (uint64_t)__builtin_popcount(ic->v[ic->n].used);
	ic->n++;
	return 0;
}

int fs_ichunk_load(struct fs *fs)
{
	struct fs_ichunks *ic = &fs->ichunks;
	struct fs_bt t = ich_tree(fs);
	int err;

	pthread_mutex_init(&ic->lock, NULL);
	ic->root = fs_le64(fs->sb.ichunk_root);
	ic->depth = fs_le32(fs->sb.ichunk_depth);
	ic->limit = fs_le64(fs->sb.inodes);
	err = fs_bt_walk(&t, ich_count_node, ich_load_one, fs);
	if (!err && (!ic->n || !(ic->v[0].used & 1)))
		err = -EUCLEAN;
	if (err == -EUCLEAN)
		fs_log(LOG_ERR, "the inode chunk map is damaged");
	ic->used--;                     /* inode 0 */
	return err;
}

void fs_ichunk_destroy(struct fs *fs)
{
	free(fs->ichunks.v);
	fs->ichunks.v = NULL;
	pthread_mutex_destroy(&fs->ichunks.lock);
}

/* ---- records -------------------------------------------------------------- */
/* Caller holds ic->lock: the superblock's copy of the chunk map's root,
 * when a change of the map moved it from root, depth. */
static int ich_root_note(struct fs *fs, struct fs_tx *tx, uint64_t root,
			 uint32_t depth)
{
	struct fs_ichunks *ic = &fs->ichunks;
	struct fs_sb_disk *sb;
	struct fs_buf *b;
	int err;

	if (root == ic->root && depth == ic->depth)
		return 0;
	err = fs_sb_get(fs, &b);
	if (err)
		return err;
	fs_tx_dirty(fs, tx, b);
	sb = (struct fs_sb_disk *)b->data;
	sb->ichunk_root = fs_cpu64(ic->root);
	sb->ichunk_depth = fs_cpu32(ic->depth);
	bc_put(fs, b);
	return 0;
}

/* Caller holds ic->lock: writes chunk c's record (insert: a new chunk). */
static int ich_store(struct fs *fs, struct fs_tx *tx, uint64_t c, bool insert)
{
	struct fs_ichunks *ic = &fs->ichunks;
	struct fs_ichunk_disk d = { fs_cpu64(c), fs_cpu64(ic->v[c].pblk),
				    fs_cpu16(ic->v[c].used), 0, 0 };
	struct fs_bt t = ich_tree(fs);
	uint64_t root = ic->root;
	uint32_t depth = ic->depth;
	int err;

	err = insert ? fs_bt_insert(&t, tx, &d) : fs_bt_update(&t, tx, &d);
	return err ? err : ich_root_note(fs, tx, root, depth);
}

/*
 * Caller holds ic->lock: the last chunks, while empty, leave the map and
 * their blocks are freed, in the transaction that freed their last inode
 * (chunk 0, the root's, stays).  Without it every inode ever in use at
 * once kept 1/16 of a block for good: 60,000 files made and deleted left
 * 14 MiB of a 185 MiB filesystem used (a tester's find, W1).  Only the
 * end of the map is trimmed: numbers stay dense (fs_check walks chunks
 * 0 .. n-1), and allocation takes the lowest free number first, so a
 * filesystem emptied gives back all but what its remaining files hold.
 */
static int ich_trim(struct fs *fs, struct fs_tx *tx)
{
	struct fs_ichunks *ic = &fs->ichunks;
	struct fs_bt t = ich_tree(fs);
	uint64_t root = ic->root;
	uint32_t depth = ic->depth;
	int err = 0;

	while (ic->n > 1 && !ic->v[ic->n - 1].used && !err) {
		err = fs_bt_delete(&t, tx, ic->n - 1);
		if (err)
			break;
		fs_free_blocks(fs, tx, ic->v[ic->n - 1].pblk, 1, true);
		ic->n--;
		__atomic_store_n(&ic->trimmed, true, __ATOMIC_RELEASE);
	}
	if (ic->cursor >= ic->n)
		ic->cursor = 0;
	return err ? err : ich_root_note(fs, tx, root, depth);
}

/* Caller holds ic->lock: chunk ic->n, its block zeroed, in the map. */
static int ich_new(struct fs *fs, struct fs_tx *tx, uint64_t *c)
{
	struct fs_ichunks *ic = &fs->ichunks;
	struct fs_buf *b;
	uint64_t blk;
	int err;

	if ((ic->n + 1) * 16 > ic->limit || !fs_alloc_has_space(fs, 1, false))
		return -ENOSPC;
	if (ic->n == ic->cap && (err = ich_grow(ic)))
		return err;
	err = fs_alloc_meta(fs, tx, ic->n ? ic->v[ic->n - 1].pblk + 1 : 0,
			    &blk);
	if (err)
		return err;
	err = bc_new(fs, blk, &b);
	if (err)
		goto fail;
	b->kind = FS_BUF_ITABLE;
	fs_tx_dirty(fs, tx, b);
	bc_put(fs, b);
	ic->v[ic->n].pblk = blk;
	ic->v[ic->n].used = 0;
	err = ich_store(fs, tx, ic->n, true);
	if (err)
		goto fail;
	*c = ic->n++;
	return 0;
fail:
	fs_free_blocks(fs, tx, blk, 1, true);
	return err;
}

/* Caller holds ic->lock: a chunk with a free slot, from the cursor on. */
static uint64_t ich_find_free(struct fs_ichunks *ic)
{
	uint64_t i, c;

	if (ic->used + 1 == ic->n * 16)
		return ic->n;
	for (i = 0; i < ic->n; i++) {
		c = (ic->cursor + i) % ic->n;
		if (ic->v[c].used != ICH_ALL)
			return c;
	}
	return ic->n;
}

int fs_alloc_inode(struct fs *fs, struct fs_tx *tx, uint64_t *ino)
{
	struct fs_ichunks *ic = &fs->ichunks;
	uint64_t c;
	unsigned slot;
	int err = 0;

	pthread_mutex_lock(&ic->lock);
	c = ich_find_free(ic);
	if (c == ic->n)
		err = ich_new(fs, tx, &c);
	if (err)
		goto out;
	slot = (unsigned)__builtin_ctz(~ic->v[c].used & ICH_ALL);
	ic->v[c].used |= (uint16_t)(1u << slot);
	err = ich_store(fs, tx, c, false);
	if (err) {
		ic->v[c].used &= (uint16_t)~(1u << slot);
		goto out;
	}
	ic->used++;
	ic->cursor = c;
	*ino = c * 16 + slot;
out:
	pthread_mutex_unlock(&ic->lock);
	return err;
}

int fs_free_inode(struct fs *fs, struct fs_tx *tx, uint64_t ino)
{
	struct fs_ichunks *ic = &fs->ichunks;
	uint64_t c = ino / 16;
	uint16_t bit = (uint16_t)(1u << (ino % 16));
	int err;

	pthread_mutex_lock(&ic->lock);
	FS_ASSERT(c < ic->n && (ic->v[c].used & bit) && ino > FS_ROOT_INO);
	ic->v[c].used &= (uint16_t)~bit;
	ic->used--;
	if (c < ic->cursor)
		ic->cursor = c;
	/* the last chunk emptied leaves the map: no record to update */
	err = c == ic->n - 1 && !ic->v[c].used ? ich_trim(fs, tx) :
	      ich_store(fs, tx, c, false);
	pthread_mutex_unlock(&ic->lock);
	return err;
}

/* Every inode load passes here: a maximum kept without ic->lock. */
void fs_ichunk_gen_note(struct fs *fs, uint64_t gen)
{
	uint64_t *hi = &fs->ichunks.gen_hi;
	uint64_t cur = __atomic_load_n(hi, __ATOMIC_RELAXED);

	while (gen > cur && !__atomic_compare_exchange_n(hi, &cur, gen, true,
							 __ATOMIC_RELAXED,
							 __ATOMIC_RELAXED))
		;
}

uint64_t fs_ichunk_gen_floor(struct fs *fs)
{
	struct fs_ichunks *ic = &fs->ichunks;

	return __atomic_load_n(&ic->trimmed, __ATOMIC_ACQUIRE) ?
	       __atomic_load_n(&ic->gen_hi, __ATOMIC_RELAXED) : 0;
}

bool fs_ichunk_find(struct fs *fs, uint64_t c, uint64_t *pblk, uint16_t *used)
{
	struct fs_ichunks *ic = &fs->ichunks;
	bool found;

	pthread_mutex_lock(&ic->lock);
	found = c < ic->n;
	if (found) {
		*pblk = ic->v[c].pblk;
		*used = ic->v[c].used;
	}
	pthread_mutex_unlock(&ic->lock);
	return found;
}

bool fs_inode_is_allocated(struct fs *fs, uint64_t ino)
{
	struct fs_ichunks *ic = &fs->ichunks;
	bool used;

	pthread_mutex_lock(&ic->lock);
	used = ino / 16 < ic->n && (ic->v[ino / 16].used >> (ino % 16) & 1);
	pthread_mutex_unlock(&ic->lock);
	return used;
}

uint64_t fs_ichunk_blk(struct fs *fs, uint64_t ino)
{
	struct fs_ichunks *ic = &fs->ichunks;
	uint64_t blk = 0;

	pthread_mutex_lock(&ic->lock);
	if (ino / 16 < ic->n)
		blk = ic->v[ino / 16].pblk;
	pthread_mutex_unlock(&ic->lock);
	return blk;
}

uint64_t fs_ichunk_inodes(struct fs *fs)
{
	uint64_t n;

	pthread_mutex_lock(&fs->ichunks.lock);
	n = fs->ichunks.n * 16;
	pthread_mutex_unlock(&fs->ichunks.lock);
	return n;
}

uint64_t fs_ichunk_blocks(struct fs *fs)
{
	uint64_t n;

	pthread_mutex_lock(&fs->ichunks.lock);
	n = fs->ichunks.n + fs->ichunks.nodes;
	pthread_mutex_unlock(&fs->ichunks.lock);
	return n;
}

void fs_ichunk_counts(struct fs *fs, uint64_t avail_blocks, uint64_t *files,
		      uint64_t *ffree)
{
	struct fs_ichunks *ic = &fs->ichunks;
	uint64_t can;

	pthread_mutex_lock(&ic->lock);
	/* every free block could become a chunk, up to the limit */
	can = ic->n * 16 - 1 + avail_blocks * 16;
	if (can > ic->limit - 1)
		can = ic->limit - 1;
	*files = can;
	*ffree = can - ic->used;
	pthread_mutex_unlock(&ic->lock);
}

int fs_ichunk_set_used(struct fs *fs, struct fs_tx *tx, uint64_t c,
		       uint16_t used)
{
	struct fs_ichunks *ic = &fs->ichunks;
	int err = -ENOENT;

	pthread_mutex_lock(&ic->lock);
	if (c < ic->n) {
		if (c == 0)
			used |= 1;
		ic->used += (uint64_t)__builtin_popcount(used);
		ic->used -= (uint64_t)__builtin_popcount(ic->v[c].used);
		ic->v[c].used = used;
		err = ich_store(fs, tx, c, false);
	}
	pthread_mutex_unlock(&ic->lock);
	return err;
}

/* ---- format --------------------------------------------------------------- */
int fs_ichunk_format(struct fs_bdev *bdev, uint64_t leaf, uint64_t chunk0)
{
	struct fs_ichunk_disk d = { 0, fs_cpu64(chunk0), fs_cpu16(3), 0, 0 };
	struct fs_node_disk *n;
	uint8_t *b;
	int err;

	if (posix_memalign((void **)&b, 4096, FS_BSIZE))
		return -ENOMEM;
	memset(b, 0, FS_BSIZE);
	n = (struct fs_node_disk *)b;
	fs_bhdr_init(n, FS_BT_NODE, leaf, 0);
	n->level = 0;
	n->count = fs_cpu16(1);
	n->rec_size = fs_cpu16(sizeof(d));
	n->tree = fs_cpu16(FS_TREE_ICHUNK);
	memcpy(b + FS_NODE_HDR, &d, sizeof(d));     /* inodes 0 and 1 */
	fs_bhdr_seal(b);
	err = fs_bdev_write(bdev, leaf, 1, b);
	free(b);
	return err;
}
