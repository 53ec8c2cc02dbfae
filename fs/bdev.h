/*
 * bdev: the block device the filesystem is stored on.
 *
 * A small vtable with a context pointer (as littlefs's struct lfs_config),
 * in 4 KiB blocks.  The filesystem calls only these four operations; it
 * never sees raidcore members.
 *
 * Semantics every backend provides:
 *   read/write   transfer all count blocks or fail; 0 or -errno.  A write
 *                may sit in a volatile cache until the next flush.
 *   flush        durability barrier: every write that completed before
 *                flush was called is durable when flush returns 0.
 *   close        frees the adapter (not what it adapts: see each adapter).
 * All operations are thread-safe (the filesystem calls them from many
 * threads); writes to the same block from two threads are ordered by the
 * caller.
 *
 * Backends: bdev_array.c (raidcore), bdev_mem.c (unit tests; with a
 * crash-simulation mode), bdev_file.c (a plain file, for development).
 */
#ifndef FS_BDEV_H
#define FS_BDEV_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#define FS_BDEV_BLOCK_SIZE 4096u

struct fs_bdev;
struct rc_array;

struct fs_bdev_ops {
	int (*read)(struct fs_bdev *b, uint64_t block, uint32_t count,
		    void *buf);
	int (*write)(struct fs_bdev *b, uint64_t block, uint32_t count,
		     const void *buf);
	int (*flush)(struct fs_bdev *b);
	void (*close)(struct fs_bdev *b);       /* frees b */
};

struct fs_bdev {
	const struct fs_bdev_ops *ops;
	void *ctx;
	uint64_t blocks;                /* capacity in 4 KiB blocks */
	uint32_t stripe_blocks;         /* full-write unit, 1 if none */
};

static inline int fs_bdev_read(struct fs_bdev *b, uint64_t block,
			       uint32_t count, void *buf)
{
	return b->ops->read(b, block, count, buf);
}

static inline int fs_bdev_write(struct fs_bdev *b, uint64_t block,
				uint32_t count, const void *buf)
{
	return b->ops->write(b, block, count, buf);
}

static inline int fs_bdev_flush(struct fs_bdev *b)
{
	return b->ops->flush(b);
}

static inline void fs_bdev_close(struct fs_bdev *b)
{
	if (b)
		b->ops->close(b);
}

/*
 * Adapter over a raidcore array (rc_read / rc_write / rc_flush; geometry
 * from rc_array_info).  Closing the bdev does not close the array: the
 * caller calls rc_array_close() after fs_unmount() and fs_bdev_close().
 */
int fs_bdev_from_array(struct rc_array *a, struct fs_bdev **out);

/* Zero-filled memory device. */
int fs_bdev_mem_create(uint64_t blocks, uint32_t stripe_blocks,
		       struct fs_bdev **out);

/*
 * Crash simulation on a memory device (for tests).  While recording, the
 * device keeps two images: "durable" (as of the last flush) and "volatile"
 * (what reads see).  fs_bdev_mem_crash() makes the durable image current,
 * as if power was cut: every write since the last flush is lost.
 * fs_bdev_mem_set_write_limit(n) makes writes fail with -EIO (and not be
 * stored) after n more block writes; -1 removes the limit.
 */
int fs_bdev_mem_record(struct fs_bdev *b, bool on);
void fs_bdev_mem_crash(struct fs_bdev *b);
void fs_bdev_mem_set_write_limit(struct fs_bdev *b, int64_t blocks);
/* Counters for tests: block writes, write calls, flushes so far. */
void fs_bdev_mem_stats(struct fs_bdev *b, uint64_t *blocks_written,
		       uint64_t *write_calls, uint64_t *flushes);

/* A regular file (or block device) opened read-write; size in whole blocks. */
int fs_bdev_file_open(const char *path, struct fs_bdev **out);

#endif
