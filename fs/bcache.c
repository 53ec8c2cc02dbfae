/*
 * bcache: the metadata buffer cache (xv6's bio.c, with pins for the
 * journal).
 *
 * Usage: bc_read_meta / bc_read / bc_new -> use or modify (inside a
 * transaction) -> bc_put.  A buffer stays cached while it has holders
 * (refs) or while a transaction still needs it (jpins: listed in the
 * running transaction, or committed but not yet written home); only
 * buffers with neither are on the LRU and may be evicted.
 */
#include <stdlib.h>
#include <string.h>
#include "fs_int.h"

static size_t bc_slot(struct fs_bcache *c, uint64_t blk)
{
	return (size_t)((blk * 0x9e3779b97f4a7c15ull) >> 20) % c->nhash;
}

static void lru_unlink(struct fs_buf *b)
{
	if (!b->lru_next)
		return;
	b->lru_prev->lru_next = b->lru_next;
	b->lru_next->lru_prev = b->lru_prev;
	b->lru_next = b->lru_prev = NULL;
}

static void lru_append(struct fs_bcache *c, struct fs_buf *b)
{
	b->lru_prev = c->lru.lru_prev;
	b->lru_next = &c->lru;
	c->lru.lru_prev->lru_next = b;
	c->lru.lru_prev = b;
}

static void buf_free(struct fs_buf *b)
{
	pthread_mutex_destroy(&b->lock);
	free(b->data);
	free(b);
}

static void hash_remove(struct fs_bcache *c, struct fs_buf *b)
{
	struct fs_buf **pp = &c->hash[bc_slot(c, b->blk)];

	while (*pp != b)
		pp = &(*pp)->hnext;
	*pp = b->hnext;
	c->count--;
}

/* Caller holds c->lock.  Evicts the oldest idle buffers over the limit. */
static void bc_evict(struct fs_bcache *c, size_t limit)
{
	struct fs_buf *b;

	while (c->count > limit && c->lru.lru_next != &c->lru) {
		b = c->lru.lru_next;
		lru_unlink(b);
		hash_remove(c, b);
		buf_free(b);
	}
}

int bc_init(struct fs *fs, size_t limit_bufs)
{
	struct fs_bcache *c = &fs->bc;

	pthread_mutex_init(&c->lock, NULL);
	c->limit = limit_bufs < 256 ? 256 : limit_bufs;
	c->nhash = c->limit / 2 + 1;
	c->hash = calloc(c->nhash, sizeof(*c->hash));
	c->lru.lru_next = c->lru.lru_prev = &c->lru;
	return c->hash ? 0 : -ENOMEM;
}

void bc_destroy(struct fs *fs)
{
	struct fs_bcache *c = &fs->bc;
	struct fs_buf *b, *n;
	size_t i;

	if (!c->hash)
		return;
	for (i = 0; i < c->nhash; i++) {
		for (b = c->hash[i]; b; b = n) {
			n = b->hnext;
			buf_free(b);
		}
	}
	free(c->hash);
	c->hash = NULL;
	pthread_mutex_destroy(&c->lock);
}

/* Finds or creates the buffer of blk with one more reference. */
static int bc_get(struct fs *fs, uint64_t blk, struct fs_buf **out)
{
	struct fs_bcache *c = &fs->bc;
	struct fs_buf *b;
	size_t s;

	pthread_mutex_lock(&c->lock);
	s = bc_slot(c, blk);
	for (b = c->hash[s]; b; b = b->hnext)
		if (b->blk == blk)
			break;
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (b && posix_memalign((void **)&b->data, 4096, FS_BSIZE)) {
			free(b);
			b = NULL;
		}
		if (!b) {
			pthread_mutex_unlock(&c->lock);
			return -ENOMEM;
		}
		b->blk = blk;
		pthread_mutex_init(&b->lock, NULL);
		b->hnext = c->hash[s];
		c->hash[s] = b;
		c->count++;
	}
	lru_unlink(b);
	b->refs++;
	bc_evict(c, c->limit);
	pthread_mutex_unlock(&c->lock);
	*out = b;
	return 0;
}

void bc_put(struct fs *fs, struct fs_buf *b)
{
	struct fs_bcache *c = &fs->bc;

	pthread_mutex_lock(&c->lock);
	FS_ASSERT(b->refs > 0);
	if (--b->refs == 0 && b->jpins == 0) {
		if (b->uptodate) {
			lru_append(c, b);
		} else {
			hash_remove(c, b);
			buf_free(b);
		}
	}
	pthread_mutex_unlock(&c->lock);
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
		lru_append(c, b);
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
	if (!err && type && !b->verified) {
		err = fs_bhdr_check(b->data, (enum fs_btype)type, b->blk);
		if (err)
			fprintf(stderr, "raidfs: metadata block %llu (type %d) "
				"fails its checksum\n",
				(unsigned long long)b->blk, type);
		else
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
