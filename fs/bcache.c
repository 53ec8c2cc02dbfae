/*
 * bcache: the metadata buffer cache (xv6's bio.c, with pins for the
 * journal).
 *
 * Usage: bc_read_meta / bc_read / bc_new -> use or modify (inside a
 * transaction) -> bc_put.  A buffer stays cached while it has holders
 * (refs) or while a transaction still needs it (jpins: listed in the
 * running transaction, or committed but not yet written home); only
 * buffers with neither are on the LRU and may be evicted.  The hash and
 * the LRU are common/hcache.h's, under c->lock.
 */
#include <stdlib.h>
#include <string.h>
#include "fs_int.h"

static void buf_free(struct fs_buf *b)
{
	pthread_mutex_destroy(&b->lock);
	free(b->data);
	free(b);
}

static void buf_free_node(struct hc_node *n, void *arg)
{
	buf_free(hc_entry(n, struct fs_buf, node));
}

/* Caller holds c->lock.  Evicts the oldest idle buffers over the limit. */
static void bc_evict(struct fs_bcache *c, size_t limit)
{
	struct hc_node *n;

	while (c->hc.count > limit && (n = hc_lru_oldest(&c->hc))) {
		hc_remove(&c->hc, n);
		buf_free_node(n, NULL);
	}
}

int bc_init(struct fs *fs, size_t limit_bufs)
{
	struct fs_bcache *c = &fs->bc;

	pthread_mutex_init(&c->lock, NULL);
	c->limit = limit_bufs < 256 ? 256 : limit_bufs;
	return hc_init(&c->hc, c->limit / 2 + 1);
}

bool bc_is_ready(const struct fs *fs)
{
	return fs->bc.hc.tab != NULL;
}

void bc_destroy(struct fs *fs)
{
	struct fs_bcache *c = &fs->bc;

	if (!c->hc.tab)
		return;
	hc_fini(&c->hc, buf_free_node, NULL);
	pthread_mutex_destroy(&c->lock);
}

/* A buffer for blk, not yet in the cache: -ENOMEM or 0. */
static int buf_alloc(uint64_t blk, struct fs_buf **out)
{
	struct fs_buf *b = calloc(1, sizeof(*b));

	if (b && posix_memalign((void **)&b->data, 4096, FS_BSIZE)) {
		free(b);
		b = NULL;
	}
	if (!b)
		return -ENOMEM;
	b->blk = blk;
	pthread_mutex_init(&b->lock, NULL);
	*out = b;
	return 0;
}

/* Caller holds c->lock.  The cached buffer of blk with one more
 * reference (off the LRU), or NULL. */
static struct fs_buf *bc_take_locked(struct fs_bcache *c, uint64_t blk)
{
	struct hc_node *n = hc_find(&c->hc, blk);
	struct fs_buf *b;

	if (!n)
		return NULL;
	b = hc_entry(n, struct fs_buf, node);
	hc_lru_del(&c->hc, n);
	b->refs++;
	return b;
}

/* Finds or creates the buffer of blk with one more reference. */
static int bc_get(struct fs *fs, uint64_t blk, struct fs_buf **out)
{
	struct fs_bcache *c = &fs->bc;
	struct fs_buf *b;

	pthread_mutex_lock(&c->lock);
	b = bc_take_locked(c, blk);
	if (!b) {
		if (buf_alloc(blk, &b)) {
			pthread_mutex_unlock(&c->lock);
			return -ENOMEM;
		}
		hc_insert(&c->hc, &b->node, blk);
		b->refs++;
	}
	bc_evict(c, c->limit);
	pthread_mutex_unlock(&c->lock);
	*out = b;
	return 0;
}

struct fs_buf *bc_find(struct fs *fs, uint64_t blk)
{
	struct fs_bcache *c = &fs->bc;
	struct fs_buf *b;

	pthread_mutex_lock(&c->lock);
	b = bc_take_locked(c, blk);
	pthread_mutex_unlock(&c->lock);
	return b;
}

void bc_put(struct fs *fs, struct fs_buf *b)
{
	struct fs_bcache *c = &fs->bc;

	pthread_mutex_lock(&c->lock);
	FS_ASSERT(b->refs > 0);
	if (--b->refs == 0 && b->jpins == 0) {
		if (b->uptodate) {
			hc_lru_add(&c->hc, &b->node);
		} else {
			hc_remove(&c->hc, &b->node);
			buf_free(b);
		}
	}
	pthread_mutex_unlock(&c->lock);
}

int fs_sb_get(struct fs *fs, struct fs_buf **out)
{
	return bc_read(fs, 0, FS_BUF_SB, out);
}

void bc_pin(struct fs *fs, struct fs_buf *b)
{
	pthread_mutex_lock(&fs->bc.lock);
	b->jpins++;
	pthread_mutex_unlock(&fs->bc.lock);
}

void bc_unpin(struct fs *fs, struct fs_buf *b)
{
	struct fs_bcache *c = &fs->bc;

	pthread_mutex_lock(&c->lock);
	FS_ASSERT(b->jpins > 0);
	if (--b->jpins == 0 && b->refs == 0)
		hc_lru_add(&c->hc, &b->node);
	bc_evict(c, c->limit);
	pthread_mutex_unlock(&c->lock);
}

void bc_shrink(struct fs *fs)
{
	pthread_mutex_lock(&fs->bc.lock);
	bc_evict(&fs->bc, 0);
	pthread_mutex_unlock(&fs->bc.lock);
}

static int bc_load(struct fs *fs, struct fs_buf *b, enum fs_buf_kind kind,
		   int type)
{
	int err = 0;

	pthread_mutex_lock(&b->lock);
	if (!b->uptodate) {
		/* A block's kind never changes while it is cached. */
		b->kind = kind;
		err = fs_bdev_read(fs->bdev, b->blk, 1, b->data);
		if (!err)
			b->uptodate = true;
	}
	if (!err && __atomic_load_n(&fs->suspect_watch, __ATOMIC_RELAXED) &&
	    fs_bdev_suspect(fs->bdev, b->blk) &&
	    __atomic_fetch_add(&fs->suspect_reads, 1, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&fs->suspect_first, b->blk, __ATOMIC_RELAXED);
	if (!err && type && !b->verified) {
		err = fs_bhdr_check(b->data, (enum fs_btype)type, b->blk);
		if (err && fs_meta_reconsider(fs->bdev, b->blk,
					      (enum fs_btype)type, b->data) == 0)
			err = 0;
		else if (err)
			fs_log(LOG_ERR, "metadata block %llu (type %d) "
			       "fails its checksum",
			       (unsigned long long)b->blk, type);
		if (!err)
			b->verified = true;
	}
	pthread_mutex_unlock(&b->lock);
	return err;
}

int bc_read(struct fs *fs, uint64_t blk, enum fs_buf_kind kind,
	    struct fs_buf **out)
{
	int err = bc_get(fs, blk, out);

	if (err)
		return err;
	err = bc_load(fs, *out, kind, 0);
	if (err) {
		bc_put(fs, *out);
		*out = NULL;
	}
	return err;
}

int bc_read_meta(struct fs *fs, uint64_t blk, enum fs_btype type,
		 struct fs_buf **out)
{
	int err;

	if (blk < fs_le64(fs->sb.data_start) && type == FS_BT_NODE)
		return -EUCLEAN;
	if (blk >= fs->bdev->blocks)
		return -EUCLEAN;
	err = bc_get(fs, blk, out);
	if (err)
		return err;
	err = bc_load(fs, *out, FS_BUF_HDR, type);
	if (err) {
		bc_put(fs, *out);
		*out = NULL;
	}
	return err;
}

int bc_new(struct fs *fs, uint64_t blk, struct fs_buf **out)
{
	struct fs_buf *b;
	int err = bc_get(fs, blk, &b);

	if (err)
		return err;
	pthread_mutex_lock(&b->lock);
	memset(b->data, 0, FS_BSIZE);
	b->uptodate = true;
	b->verified = true;
	b->kind = FS_BUF_HDR;
	pthread_mutex_unlock(&b->lock);
	*out = b;
	return 0;
}
