/*
 * alloc: block allocation over the on-disk block bitmap (inode numbers are
 * ichunk.c's).
 *
 * The bitmap is loaded whole into memory at mount (bmap: one bit a block,
 * 1 = in use).  Allocation sets the in-memory bit and the
 * on-disk bit (in a journalled bitmap block) together.  A free clears only
 * the on-disk bit; the in-memory bit stays set until the journal says the
 * block may be reused (alloc_release, the journal's release callback): data
 * blocks once the freeing transaction committed, metadata blocks once it
 * was checkpointed.
 *
 * Placement: runs of a stripe or more start on a stripe boundary (full
 * stripe writes, no read-modify-write in raidcore) and are searched from
 * cursor_large; small files and metadata are packed from cursor_small.
 * The last `reserve` blocks are for metadata only, so an operation that got
 * its data blocks can always finish its metadata changes.
 *
 * Locking: alloc.lock guards everything here; it is taken inside a handle
 * and before the journal's lock.
 */
#include <stdlib.h>
#include <string.h>
#include "fs_int.h"

#define BIT_GET(m, i) (((m)[(i) >> 6] >> ((i) & 63)) & 1)
#define BIT_SET(m, i) ((m)[(i) >> 6] |= 1ull << ((i) & 63))
#define BIT_CLR(m, i) ((m)[(i) >> 6] &= ~(1ull << ((i) & 63)))

/* First index in [from, limit) whose bit equals val, or limit. */
static uint64_t map_find(const uint64_t *m, uint64_t from, uint64_t limit,
			 int val)
{
	uint64_t i = from, w;

	while (i < limit) {
		w = m[i >> 6];
		if (!val)
			w = ~w;
		w &= ~0ull << (i & 63);
		if (w) {
			i = (i & ~63ull) + (uint64_t)__builtin_ctzll(w);
			return i < limit ? i : limit;
		}
		i = (i & ~63ull) + 64;
	}
	return limit;
}

/* Sets or clears bits [blk, blk+len) in the on-disk bitmap blocks. */
static int disk_bits(struct fs *fs, struct fs_tx *tx, uint64_t start,
		     enum fs_btype type, uint64_t blk, uint64_t len, bool set)
{
	struct fs_buf *b = NULL;
	uint64_t cur = UINT64_MAX, bi, bit;
	uint8_t *byte;
	int err = 0;

	for (bi = blk; bi < blk + len; bi++) {
		if (bi / FS_BITS_PER_BITMAP != cur) {
			if (b)
				bc_put(fs, b);
			cur = bi / FS_BITS_PER_BITMAP;
			err = bc_read_meta(fs, start + cur, type, &b);
			if (err)
				return err;
			fs_tx_dirty(fs, tx, b);
		}
		bit = bi % FS_BITS_PER_BITMAP;
		byte = &b->data[FS_BITMAP_HDR + bit / 8];
		if (set)
			*byte |= (uint8_t)(1u << (bit % 8));
		else
			*byte &= (uint8_t)~(1u << (bit % 8));
	}
	if (b)
		bc_put(fs, b);
	return err;
}

/*
 * Loads a whole bitmap.  A bitmap block's 4064 bytes are exactly 508
 * little-endian words of the in-memory map (bit i is byte i/8, bit i%8).
 */
static int load_map(struct fs *fs, uint64_t start, uint64_t nblocks,
		    enum fs_btype type, uint64_t bits, uint64_t **out,
		    uint64_t *nfree)
{
	const uint64_t wpb = (FS_BSIZE - FS_BITMAP_HDR) / 8;
	uint64_t words = nblocks * wpb + 1, i, k;
	uint64_t *m = calloc(words, sizeof(*m));
	struct fs_buf *b;
	int err = 0;

	if (!m)
		return -ENOMEM;
	for (i = 0; i < nblocks && !err; i++) {
		err = bc_read_meta(fs, start + i, type, &b);
		/* fsck's mount: an unreadable block's bits all used */
		if ((err == -EIO || err == -EUCLEAN) && fs->repair_mount) {
			fs_log(LOG_WARNING, "bitmap block %llu cannot be read: its "
			       "blocks are taken as used until the repair "
			       "rewrites it", (unsigned long long)(start + i));
			memset(m + i * wpb, 0xff, wpb * 8);
			err = 0;
			continue;
		}
		if (err)
			break;
		memcpy(m + i * wpb, b->data + FS_BITMAP_HDR, wpb * 8);
		bc_put(fs, b);
	}
	for (k = 0; k < words; k++)
		m[k] = le64toh(m[k]);
	for (i = bits; i < words * 64; i++)
		BIT_SET(m, i);
	*nfree = 0;
	for (k = 0; k < words; k++)
		*nfree += 64 - (uint64_t)__builtin_popcountll(m[k]);
	if (err) {
		free(m);
		return err;
	}
	*out = m;
	return 0;
}

/* The journal's release callback: frees that may now be reused. */
static void alloc_release(struct fs *fs, const struct fs_extlist *l)
{
	struct fs_alloc *a = &fs->alloc;
	size_t i;
	uint64_t k;

	pthread_mutex_lock(&a->lock);
	for (i = 0; i < l->n; i++) {
		for (k = l->v[i].blk; k < l->v[i].blk + l->v[i].len; k++)
			BIT_CLR(a->bmap, k);
		a->free_blocks += l->v[i].len;
		a->pending_blocks -= l->v[i].len;
		if (l->v[i].blk < a->cursor_small)
			a->cursor_small = l->v[i].blk;
	}
	pthread_mutex_unlock(&a->lock);
}

int fs_alloc_load(struct fs *fs)
{
	struct fs_alloc *a = &fs->alloc;
	uint64_t blocks = fs_le64(fs->sb.blocks);
	uint64_t data = fs_le64(fs->sb.data_start);
	int err;

	pthread_mutex_init(&a->lock, NULL);
	err = load_map(fs, fs_le64(fs->sb.bbitmap_start),
		       fs_le64(fs->sb.bbitmap_blocks), FS_BT_BBITMAP, blocks,
		       &a->bmap, &a->free_blocks);
	if (err)
		return err;
	a->reserve = (blocks - data) / 200;
	if (a->reserve < 64)
		a->reserve = 64;
	if (a->reserve > 65536)
		a->reserve = 65536;
	a->cursor_small = data;
	a->cursor_large = data + (blocks - data) / 8;
	a->cursor_large -= a->cursor_large % fs->stripe;
	if (a->cursor_large < data)
		a->cursor_large = data;
	fs->j.release = alloc_release;
	return 0;
}

void fs_alloc_destroy(struct fs *fs)
{
	free(fs->alloc.bmap);
	fs->alloc.bmap = NULL;
	pthread_mutex_destroy(&fs->alloc.lock);
}

/* Length of the free run at blk, at most max. */
static uint64_t run_len(struct fs *fs, uint64_t blk, uint64_t max)
{
	uint64_t end = fs_le64(fs->sb.blocks);

	if (blk + max < end)
		end = blk + max;
	return map_find(fs->alloc.bmap, blk, end, 1) - blk;
}

/* First free block at or after from, wrapping to the data area once. */
static uint64_t find_free(struct fs *fs, uint64_t from)
{
	uint64_t end = fs_le64(fs->sb.blocks), data = fs_le64(fs->sb.data_start);
	uint64_t b;

	if (from < data || from >= end)
		from = data;
	b = map_find(fs->alloc.bmap, from, end, 0);
	if (b < end)
		return b;
	b = map_find(fs->alloc.bmap, data, from, 0);
	return b < from ? b : end;
}

/* A stripe-aligned start of `need` free blocks, or 0. */
static uint64_t find_aligned(struct fs *fs, uint64_t need)
{
	struct fs_alloc *a = &fs->alloc;
	uint64_t end = fs_le64(fs->sb.blocks), data = fs_le64(fs->sb.data_start);
	uint64_t s = fs->stripe, p, q, from = a->cursor_large;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		p = from;
		while (p + need <= end) {
			p = map_find(a->bmap, p, end, 0);
			p = (p + s - 1) / s * s;
			if (p + need > end)
				break;
			q = map_find(a->bmap, p, p + need, 1);
			if (q == p + need)
				return p;
			p = q + 1;
		}
		from = data;
	}
	return 0;
}

static int take(struct fs *fs, struct fs_tx *tx, uint64_t blk, uint64_t len)
{
	struct fs_alloc *a = &fs->alloc;
	uint64_t i;

	for (i = blk; i < blk + len; i++) {
		FS_ASSERT(!BIT_GET(a->bmap, i));
		BIT_SET(a->bmap, i);
	}
	a->free_blocks -= len;
	return disk_bits(fs, tx, fs_le64(fs->sb.bbitmap_start), FS_BT_BBITMAP,
			 blk, len, true);
}

int fs_alloc_data(struct fs *fs, struct fs_tx *tx, uint64_t goal,
		  uint64_t want, uint64_t *blk, uint64_t *got)
{
	struct fs_alloc *a = &fs->alloc;
	uint64_t end = fs_le64(fs->sb.blocks), b = 0, n = 0;
	int err = -ENOSPC;

	pthread_mutex_lock(&a->lock);
	if (a->free_blocks <= a->reserve)
		goto out;
	if (want > a->free_blocks - a->reserve)
		want = a->free_blocks - a->reserve;
	if (goal >= fs_le64(fs->sb.data_start) && goal < end &&
	    !BIT_GET(a->bmap, goal)) {
		b = goal;
		n = run_len(fs, b, want);
	}
	if (!n && want >= fs->stripe && fs->stripe > 1) {
		uint64_t need = want - want % fs->stripe;

		b = find_aligned(fs, need);
		if (!b && need > fs->stripe)
			b = find_aligned(fs, fs->stripe);
		if (b) {
			n = run_len(fs, b, want);
			a->cursor_large = b + n;
		}
	}
	if (!n) {
		b = find_free(fs, a->cursor_small);
		if (b >= end)
			goto out;
		n = run_len(fs, b, want);
		a->cursor_small = b + n;
	}
	err = take(fs, tx, b, n);
	fs_tx_ordered(tx);
	*blk = b;
	*got = n;
out:
	pthread_mutex_unlock(&a->lock);
	return err;
}

int fs_alloc_meta(struct fs *fs, struct fs_tx *tx, uint64_t goal,
		  uint64_t *blk)
{
	struct fs_alloc *a = &fs->alloc;
	uint64_t end = fs_le64(fs->sb.blocks), b;
	int err = -ENOSPC;

	pthread_mutex_lock(&a->lock);
	if (!a->free_blocks)
		goto out;
	if (goal >= fs_le64(fs->sb.data_start) && goal < end &&
	    !BIT_GET(a->bmap, goal))
		b = goal;
	else
		b = find_free(fs, a->cursor_small);
	if (b >= end)
		goto out;
	a->cursor_small = b + 1;
	err = take(fs, tx, b, 1);
	*blk = b;
out:
	pthread_mutex_unlock(&a->lock);
	return err;
}

/*
 * A metadata block the running transaction itself allocated is free at
 * once (fs_tx_forget says why that is safe); every other block waits for
 * the journal (the commit, or the checkpoint for metadata).
 */
void fs_free_blocks(struct fs *fs, struct fs_tx *tx, uint64_t blk,
		    uint64_t len, bool meta)
{
	struct fs_alloc *a = &fs->alloc;
	bool now = meta && len == 1 && fs_tx_forget(fs, tx, blk);
	uint64_t i;
	int err;

	pthread_mutex_lock(&a->lock);
	for (i = blk; i < blk + len; i++)
		FS_ASSERT(BIT_GET(a->bmap, i));
	err = disk_bits(fs, tx, fs_le64(fs->sb.bbitmap_start), FS_BT_BBITMAP,
			blk, len, false);
	FS_ASSERT(!err);
	if (now) {
		BIT_CLR(a->bmap, blk);
		a->free_blocks++;
		if (blk < a->cursor_small)
			a->cursor_small = blk;
	} else {
		a->pending_blocks += len;
	}
	pthread_mutex_unlock(&a->lock);
	if (!now)
		fs_tx_free(fs, tx, blk, len, meta);
}

bool fs_alloc_has_space(struct fs *fs, uint64_t want, bool cache)
{
	bool ok;

	pthread_mutex_lock(&fs->alloc.lock);
	if (!cache)
		want += fs->alloc.keep;
	ok = fs->alloc.free_blocks > fs->alloc.reserve &&
	     fs->alloc.free_blocks - fs->alloc.reserve >= want;
	pthread_mutex_unlock(&fs->alloc.lock);
	return ok;
}

/* Is the floor there, and (low) is free space near its end? */
static bool meta_room(struct fs *fs, uint64_t floor, bool *low)
{
	struct fs_alloc *a = &fs->alloc;
	bool ok;

	pthread_mutex_lock(&a->lock);
	ok = a->free_blocks >= floor;
	*low = a->free_blocks < floor + a->reserve + a->keep;
	pthread_mutex_unlock(&a->lock);
	return ok;
}

/*
 * Near the end of free space, blocks freed but waiting for the journal (a
 * file just deleted: its blocks come back once the freeing commit or
 * checkpoint is through) are brought back first, by a checkpoint, as the
 * data path does (fs_space_reserve) and ext4 retries an allocation after
 * a commit: before, a create, mkdir, rename or symlink failed with ENOSPC
 * for up to 3 s after an rm, with df already showing the space (a
 * tester's find).  Also for the inode chunk a create may need (ich_new,
 * inside the handle, cannot wait for a checkpoint).  Called with no
 * handle (fs_tx_held), under name and inode locks, as a write is.
 */
int fs_meta_check(struct fs *fs, uint64_t floor)
{
	bool low, ok = meta_room(fs, floor, &low);
	int err;

	if (ok && !low)
		return 0;
	if (!fs_alloc_pending(fs) || fs_tx_held())
		return ok ? 0 : -ENOSPC;
	err = fs_journal_checkpoint(fs);
	if (err)
		return err;
	return meta_room(fs, floor, &low) ? 0 : -ENOSPC;
}

uint64_t fs_alloc_pending(struct fs *fs)
{
	uint64_t n;

	pthread_mutex_lock(&fs->alloc.lock);
	n = fs->alloc.pending_blocks;
	pthread_mutex_unlock(&fs->alloc.lock);
	return n;
}

/* Writes a bitmap: bits below used_below and at or above bits are set. */
int fs_bitmap_format(struct fs_bdev *bdev, uint64_t start, uint64_t nblocks,
		     uint64_t bits, enum fs_btype type, uint64_t used_below)
{
	uint8_t *b;
	uint64_t i, k, bit;
	int err = 0;

	if (posix_memalign((void **)&b, 4096, FS_BSIZE))
		return -ENOMEM;
	for (i = 0; i < nblocks && !err; i++) {
		memset(b, 0, FS_BSIZE);
		fs_bhdr_init(b, type, start + i, 0);
		for (k = 0; k < FS_BITS_PER_BITMAP; k++) {
			bit = i * FS_BITS_PER_BITMAP + k;
			if (bit < used_below || bit >= bits)
				b[FS_BITMAP_HDR + k / 8] |=
					(uint8_t)(1u << (k % 8));
		}
		fs_bhdr_seal(b);
		err = fs_bdev_write(bdev, start + i, 1, b);
	}
	free(b);
	return err;
}

int fs_free_runs(struct fs *fs, int (*fn)(void *ctx, uint64_t blk,
					  uint64_t len), void *ctx)
{
	struct fs_alloc *al = &fs->alloc;
	uint64_t nblocks = fs_le64(fs->sb.blocks), at = 0, end;
	int ret = 0;

	pthread_mutex_lock(&al->lock);
	while (ret == 0 && at < nblocks) {
		at = map_find(al->bmap, at, nblocks, 0);
		if (at >= nblocks)
			break;
		end = map_find(al->bmap, at, nblocks, 1);
		ret = fn(ctx, at, end - at);
		at = end;
	}
	pthread_mutex_unlock(&al->lock);
	return ret;
}
