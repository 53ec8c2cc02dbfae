/*
 * bdev_mem: an in-memory block device for unit tests, with crash
 * simulation.
 *
 * While recording, the first write to a block after a flush saves the
 * block's durable contents (an undo log); a flush forgets the saved copies;
 * fs_bdev_mem_crash() puts every saved copy back, so everything written
 * since the last flush is lost, as in a power cut.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "bdev.h"

struct bdev_mem {
	pthread_mutex_t lock;
	uint8_t *data;          /* what reads see */
	uint8_t **saved;        /* while recording: durable contents of blocks
				   written since the last flush, or NULL */
	uint64_t *dirty;        /* the blocks with a saved copy */
	uint64_t ndirty;
	int64_t write_limit;    /* blocks still writable, -1: no limit */
	uint64_t blocks_written;
	uint64_t write_calls;
	uint64_t flushes;
};

static struct bdev_mem *mem_of(struct fs_bdev *b)
{
	return b->ctx;
}

static int mem_check(struct fs_bdev *b, uint64_t block, uint32_t count)
{
	if (block > b->blocks || count > b->blocks - block)
		return -EIO;
	return 0;
}

static int mem_read(struct fs_bdev *b, uint64_t block, uint32_t count,
		    void *buf)
{
	struct bdev_mem *m = mem_of(b);
	int err = mem_check(b, block, count);

	if (err)
		return err;
	pthread_mutex_lock(&m->lock);
	memcpy(buf, m->data + block * FS_BDEV_BLOCK_SIZE,
	       (size_t)count * FS_BDEV_BLOCK_SIZE);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

/* Caller holds m->lock.  Saves the durable contents before a write. */
static void mem_save(struct fs_bdev *b, struct bdev_mem *m, uint64_t block,
		     uint32_t count)
{
	uint64_t i;

	for (i = block; i < block + count; i++) {
		if (m->saved[i])
			continue;
		m->saved[i] = malloc(FS_BDEV_BLOCK_SIZE);
		if (!m->saved[i])
			abort();
		memcpy(m->saved[i], m->data + i * FS_BDEV_BLOCK_SIZE,
		       FS_BDEV_BLOCK_SIZE);
		m->dirty[m->ndirty++] = i;
	}
}

/* Caller holds m->lock.  Forgets (flush) or restores (crash) the log. */
static void mem_unlog(struct bdev_mem *m, bool restore)
{
	uint64_t i, k;

	for (k = 0; k < m->ndirty; k++) {
		i = m->dirty[k];
		if (restore)
			memcpy(m->data + i * FS_BDEV_BLOCK_SIZE, m->saved[i],
			       FS_BDEV_BLOCK_SIZE);
		free(m->saved[i]);
		m->saved[i] = NULL;
	}
	m->ndirty = 0;
}

static int mem_write(struct fs_bdev *b, uint64_t block, uint32_t count,
		     const void *buf)
{
	struct bdev_mem *m = mem_of(b);
	int err = mem_check(b, block, count);

	if (err)
		return err;
	pthread_mutex_lock(&m->lock);
	if (m->write_limit >= 0 && m->write_limit < count) {
		/* A torn write: the first blocks land, the rest do not. */
		count = (uint32_t)m->write_limit;
		err = -EIO;
	}
	if (m->write_limit >= 0)
		m->write_limit -= count;
	if (m->saved)
		mem_save(b, m, block, count);
	memcpy(m->data + block * FS_BDEV_BLOCK_SIZE, buf,
	       (size_t)count * FS_BDEV_BLOCK_SIZE);
	m->blocks_written += count;
	m->write_calls++;
	pthread_mutex_unlock(&m->lock);
	return err;
}

static int mem_flush(struct fs_bdev *b)
{
	struct bdev_mem *m = mem_of(b);

	pthread_mutex_lock(&m->lock);
	m->flushes++;
	if (m->saved)
		mem_unlog(m, false);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static void mem_close(struct fs_bdev *b)
{
	struct bdev_mem *m = mem_of(b);

	if (m->saved)
		mem_unlog(m, false);
	pthread_mutex_destroy(&m->lock);
	free(m->data);
	free(m->saved);
	free(m->dirty);
	free(m);
	free(b);
}

static const struct fs_bdev_ops mem_ops = {
	.read = mem_read,
	.write = mem_write,
	.flush = mem_flush,
	.close = mem_close,
};

int fs_bdev_mem_create(uint64_t blocks, uint32_t stripe_blocks,
		       struct fs_bdev **out)
{
	struct fs_bdev *b = calloc(1, sizeof(*b));
	struct bdev_mem *m = calloc(1, sizeof(*m));

	if (!b || !m || !blocks)
		goto fail;
	m->data = calloc(blocks, FS_BDEV_BLOCK_SIZE);
	if (!m->data)
		goto fail;
	pthread_mutex_init(&m->lock, NULL);
	m->write_limit = -1;
	b->ops = &mem_ops;
	b->ctx = m;
	b->blocks = blocks;
	b->stripe_blocks = stripe_blocks ? stripe_blocks : 1;
	*out = b;
	return 0;
fail:
	if (m)
		free(m->data);
	free(m);
	free(b);
	return blocks ? -ENOMEM : -EINVAL;
}

int fs_bdev_mem_record(struct fs_bdev *b, bool on)
{
	struct bdev_mem *m = mem_of(b);
	int err = 0;

	pthread_mutex_lock(&m->lock);
	if (m->saved)
		mem_unlog(m, false);
	free(m->saved);
	free(m->dirty);
	m->saved = NULL;
	m->dirty = NULL;
	if (!on)
		goto out;
	m->saved = calloc(b->blocks, sizeof(*m->saved));
	m->dirty = calloc(b->blocks, sizeof(*m->dirty));
	if (!m->saved || !m->dirty) {
		free(m->saved);
		free(m->dirty);
		m->saved = NULL;
		m->dirty = NULL;
		err = -ENOMEM;
	}
out:
	pthread_mutex_unlock(&m->lock);
	return err;
}

void fs_bdev_mem_crash(struct fs_bdev *b)
{
	struct bdev_mem *m = mem_of(b);

	pthread_mutex_lock(&m->lock);
	if (m->saved)
		mem_unlog(m, true);
	m->write_limit = -1;
	pthread_mutex_unlock(&m->lock);
}

void fs_bdev_mem_set_write_limit(struct fs_bdev *b, int64_t blocks)
{
	struct bdev_mem *m = mem_of(b);

	pthread_mutex_lock(&m->lock);
	m->write_limit = blocks;
	pthread_mutex_unlock(&m->lock);
}

void fs_bdev_mem_stats(struct fs_bdev *b, uint64_t *blocks_written,
		       uint64_t *write_calls, uint64_t *flushes)
{
	struct bdev_mem *m = mem_of(b);

	pthread_mutex_lock(&m->lock);
	if (blocks_written)
		*blocks_written = m->blocks_written;
	if (write_calls)
		*write_calls = m->write_calls;
	if (flushes)
		*flushes = m->flushes;
	pthread_mutex_unlock(&m->lock);
}
