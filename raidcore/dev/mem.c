/*
 * rc_dev_mem: the one member backend in memory, sparse, for tests, for
 * benchmarks and for mkfs's stand-ins (planning an array without writing).
 *
 * Usage:
 *   rc_dev_mem_create(size, "mem0", &dev)     a blank device of its own
 *   rc_dev_mem_create_like(real, size, &dev)  a stand-in: real's name and
 *                                             identity (rdev, ino, st_dev)
 *   rc_dev_mem_share(dev, &view)              a second handle on the same
 *                                             storage, with the same identity
 *   I/O from any number of threads on any handle; rc_dev_close(handle)
 *   frees the storage with the last handle.
 *
 * Sparse: the storage keeps only the 4 KiB blocks that hold something other
 * than zeros, in a hash of blocks (common/hcache.h, the LRU unused).  A block
 * written with zeros, or zeroed (rc_dev_zero, the discard of a member), is
 * freed, so memory follows what was written: a stand-in for a 16 TiB disk
 * costs a few superblocks.  Reads of absent blocks return zeros.
 *
 * There is no cache, so sync has nothing to do: a write is "durable" once
 * it returns.  The size never changes (no size_now: dev->size it is).  Each operation holds the storage's mutex for the copy, so
 * concurrent reads and writes of the same bytes never tear (a disk gives
 * the old or the new sector, never a mix) and are not data races.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hcache.h"
#include "raidcore.h"

/* Enough buckets for short chains on test devices, few for huge stand-ins. */
#define MEM_MAX_BUCKETS (1u << 16)

struct mem_block {
	struct hc_node node;            /* key: block number */
	uint8_t data[RC_BLOCK_SIZE];
};

/* Shared by every handle on one device. */
struct mem_store {
	pthread_mutex_t lock;           /* protects blocks and refs */
	struct hcache blocks;           /* the non-zero blocks */
	int refs;                       /* open handles */
};

/*
 * Two memory devices must never look like the same file to the duplicate
 * check of assembly, so each gets its own inode number (st_dev stays 0,
 * which no real file system uses).  Shared handles keep theirs.
 */
static atomic_ulong mem_next_ino = 1;

static const struct rc_dev_ops mem_ops;

static bool mem_in_bounds(const struct rc_dev *dev, uint64_t len, uint64_t off)
{
	return off <= dev->size && len <= dev->size - off;
}

static bool mem_is_zero(const uint8_t *p, size_t n)
{
	return n == 0 || (p[0] == 0 && !memcmp(p, p + 1, n - 1));
}

/* The part of block b that [off, off + len) covers: [*in, *in + *n). */
static void mem_span(uint64_t b, uint64_t off, uint64_t end, size_t *in,
		     size_t *n)
{
	uint64_t s = b * RC_BLOCK_SIZE > off ? b * RC_BLOCK_SIZE : off;
	uint64_t e = (b + 1) * RC_BLOCK_SIZE < end ? (b + 1) * RC_BLOCK_SIZE :
						     end;

	*in = (size_t)(s - b * RC_BLOCK_SIZE);
	*n = (size_t)(e - s);
}

static struct mem_block *mem_find(struct mem_store *ms, uint64_t b)
{
	struct hc_node *n = hc_find(&ms->blocks, b);

	return n ? hc_entry(n, struct mem_block, node) : NULL;
}

static void mem_drop(struct mem_store *ms, struct mem_block *mb)
{
	hc_remove(&ms->blocks, &mb->node);
	free(mb);
}

/* Caller holds ms->lock.  Stores n bytes at in of block b. */
static int mem_put(struct mem_store *ms, uint64_t b, size_t in,
		   const uint8_t *src, size_t n)
{
	struct mem_block *mb = mem_find(ms, b);

	if (!mb) {
		if (mem_is_zero(src, n))
			return 0;
		mb = calloc(1, sizeof(*mb));
		if (!mb)
			return -ENOMEM;
		hc_insert(&ms->blocks, &mb->node, b);
	}
	memcpy(mb->data + in, src, n);
	if (mem_is_zero(mb->data, RC_BLOCK_SIZE))
		mem_drop(ms, mb);
	return 0;
}

/* Caller holds ms->lock.  Zeroes n bytes at in of block b. */
static void mem_clear(struct mem_store *ms, uint64_t b, size_t in, size_t n)
{
	struct mem_block *mb = mem_find(ms, b);

	if (!mb)
		return;
	memset(mb->data + in, 0, n);
	if (n == RC_BLOCK_SIZE || mem_is_zero(mb->data, RC_BLOCK_SIZE))
		mem_drop(ms, mb);
}

static int mem_read(struct rc_dev *dev, void *buf, size_t len, uint64_t off)
{
	struct mem_store *ms = dev->ctx;
	uint64_t end = off + len;
	struct mem_block *mb;
	uint8_t *p = buf;
	size_t in, n;

	if (!mem_in_bounds(dev, len, off))
		return -EINVAL;
	pthread_mutex_lock(&ms->lock);
	for (uint64_t b = off / RC_BLOCK_SIZE; len && b * RC_BLOCK_SIZE < end;
	     b++, p += n) {
		mem_span(b, off, end, &in, &n);
		mb = mem_find(ms, b);
		if (mb)
			memcpy(p, mb->data + in, n);
		else
			memset(p, 0, n);
	}
	pthread_mutex_unlock(&ms->lock);
	return 0;
}

static int mem_write(struct rc_dev *dev, const void *buf, size_t len,
		     uint64_t off)
{
	struct mem_store *ms = dev->ctx;
	uint64_t end = off + len;
	const uint8_t *p = buf;
	size_t in, n;
	int err = 0;

	if (!mem_in_bounds(dev, len, off))
		return -EINVAL;
	pthread_mutex_lock(&ms->lock);
	for (uint64_t b = off / RC_BLOCK_SIZE;
	     len && !err && b * RC_BLOCK_SIZE < end; b++, p += n) {
		mem_span(b, off, end, &in, &n);
		err = mem_put(ms, b, in, p, n);
	}
	pthread_mutex_unlock(&ms->lock);
	return err;
}

/* Gathers the held blocks of [first, last] for mem_zero's long ranges. */
struct mem_gather {
	uint64_t first, last;
	uint64_t *keys;
	size_t n;
};

static int mem_gather_one(struct hc_node *n, void *arg)
{
	struct mem_gather *g = arg;

	if (n->key >= g->first && n->key <= g->last)
		g->keys[g->n++] = n->key;
	return 0;
}

/*
 * Frees whole blocks in the range; zeroes the parts of the others.  A range
 * longer than what is held (a whole stand-in) is done by visiting the held
 * blocks, not every block number of the range.
 */
static int mem_zero(struct rc_dev *dev, uint64_t off, uint64_t len)
{
	struct mem_store *ms = dev->ctx;
	struct mem_gather g = { .first = off / RC_BLOCK_SIZE };
	uint64_t end = off + len;
	size_t in, n;
	int err = 0;

	if (!mem_in_bounds(dev, len, off))
		return -EINVAL;
	if (!len)
		return 0;
	g.last = (end - 1) / RC_BLOCK_SIZE;
	pthread_mutex_lock(&ms->lock);
	if (g.last - g.first < ms->blocks.count) {
		for (uint64_t b = g.first; b <= g.last; b++) {
			mem_span(b, off, end, &in, &n);
			mem_clear(ms, b, in, n);
		}
		goto out;
	}
	g.keys = malloc((ms->blocks.count + 1) * sizeof(*g.keys));
	if (!g.keys) {
		err = -ENOMEM;
		goto out;
	}
	hc_foreach(&ms->blocks, mem_gather_one, &g);
	for (size_t i = 0; i < g.n; i++) {
		mem_span(g.keys[i], off, end, &in, &n);
		mem_clear(ms, g.keys[i], in, n);
	}
	free(g.keys);
out:
	pthread_mutex_unlock(&ms->lock);
	return err;
}

static int mem_sync(struct rc_dev *dev)
{
	return 0;
}

static void mem_block_free(struct hc_node *n, void *arg)
{
	free(hc_entry(n, struct mem_block, node));
}

static void mem_store_free(struct mem_store *ms)
{
	hc_fini(&ms->blocks, mem_block_free, NULL);
	pthread_mutex_destroy(&ms->lock);
	free(ms);
}

static void mem_close(struct rc_dev *dev)
{
	struct mem_store *ms = dev->ctx;
	bool last;

	pthread_mutex_lock(&ms->lock);
	last = --ms->refs == 0;
	pthread_mutex_unlock(&ms->lock);
	if (last)
		mem_store_free(ms);
	free(dev);
}

static const struct rc_dev_ops mem_ops = {
	.read = mem_read,
	.write = mem_write,
	.sync = mem_sync,
	.close = mem_close,
	.zero = mem_zero,
};

static struct mem_store *mem_store_new(uint64_t size)
{
	uint64_t blocks = size / RC_BLOCK_SIZE + 1;
	struct mem_store *ms = calloc(1, sizeof(*ms));

	if (!ms)
		return NULL;
	if (hc_init(&ms->blocks, blocks < MEM_MAX_BUCKETS ? (size_t)blocks :
		    MEM_MAX_BUCKETS) < 0) {
		free(ms);
		return NULL;
	}
	pthread_mutex_init(&ms->lock, NULL);
	ms->refs = 1;
	return ms;
}

/* size must be non-zero; like NULL: name "mem" and a fresh identity. */
static int mem_create(uint64_t size, const struct rc_dev *like,
		      const char *name, struct rc_dev **out)
{
	struct rc_dev *dev;

	*out = NULL;
	if (size == 0)
		return -EINVAL;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->ctx = mem_store_new(size);
	if (!dev->ctx) {
		free(dev);
		return -ENOMEM;
	}
	dev->ops = &mem_ops;
	dev->size = size;
	if (like) {
		memcpy(dev->name, like->name, sizeof(dev->name));
		dev->rdev = like->rdev;
		dev->ino = like->ino;
		dev->st_dev = like->st_dev;
	} else {
		snprintf(dev->name, sizeof(dev->name), "%s", name ? name : "mem");
		dev->ino = (ino_t)atomic_fetch_add(&mem_next_ino, 1);
	}
	*out = dev;
	return 0;
}

int rc_dev_mem_create(uint64_t size, const char *name, struct rc_dev **out)
{
	return mem_create(size, NULL, name, out);
}

int rc_dev_mem_create_like(const struct rc_dev *real, uint64_t size,
			   struct rc_dev **out)
{
	return mem_create(size, real, NULL, out);
}

int rc_dev_mem_share(struct rc_dev *dev, struct rc_dev **out)
{
	struct mem_store *ms = dev->ctx;
	struct rc_dev *view;

	*out = NULL;
	if (dev->ops != &mem_ops)
		return -EINVAL;
	view = malloc(sizeof(*view));
	if (!view)
		return -ENOMEM;
	*view = *dev;
	pthread_mutex_lock(&ms->lock);
	ms->refs++;
	pthread_mutex_unlock(&ms->lock);
	*out = view;
	return 0;
}

uint64_t rc_dev_mem_blocks_held(struct rc_dev *dev)
{
	struct mem_store *ms = dev->ctx;
	uint64_t n;

	if (dev->ops != &mem_ops)
		return 0;
	pthread_mutex_lock(&ms->lock);
	n = ms->blocks.count;
	pthread_mutex_unlock(&ms->lock);
	return n;
}
