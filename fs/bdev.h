/*
 * bdev: the block device the filesystem is stored on.
 *
 * A small vtable with a context pointer (as littlefs's struct lfs_config),
 * in 4 KiB blocks.  The filesystem calls only these operations; it never
 * sees raidcore members.
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
 * Backends: bdev_array.c (a raidcore array), bdev_dev.c (any raidcore
 * member device: a plain file, or memory through the fault wrapper for the
 * unit tests and their crash simulation).
 */
#ifndef FS_BDEV_H
#define FS_BDEV_H

#include <errno.h>
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#define FS_BDEV_BLOCK_SIZE 4096u

struct fs_bdev;
struct rc_array;
struct rc_dev;

struct fs_bdev_ops {
	int (*read)(struct fs_bdev *b, uint64_t block, uint32_t count,
		    void *buf);
	int (*write)(struct fs_bdev *b, uint64_t block, uint32_t count,
		     const void *buf);
	int (*flush)(struct fs_bdev *b);
	void (*close)(struct fs_bdev *b);       /* frees b */
	/* Optional: a write of blocks whose old contents nothing needs and
	 * that nothing references until the next flush returned (blocks
	 * allocated in an uncommitted transaction): a backend may then skip
	 * its journal copy (raidcore's RC_WRITE_FRESH).  Without it, write. */
	int (*write_fresh)(struct fs_bdev *b, uint64_t block, uint32_t count,
			   const void *buf);
	/* Optional: writes a flush dropped and did not fail for (raidcore:
	 * a row it cannot rebuild, rc_flush_dropping).  dropped counts them
	 * so far; dropped_in says whether one counted after `since` meets
	 * [block, block + count) (true too when it can no longer tell).
	 * Without them nothing is ever dropped. */
	uint64_t (*dropped)(struct fs_bdev *b);
	bool (*dropped_in)(struct fs_bdev *b, uint64_t since, uint64_t block,
			   uint64_t count);
	/* Optional: does block lie where the device disagrees with itself
	 * (raidcore: a stripe a scrub found whose parity disagrees with
	 * data that verifies, rc_block_suspect)?  A repair must not build
	 * on what it read there.  Without it nothing is suspect. */
	bool (*suspect)(struct fs_bdev *b, uint64_t block);
	/* Optional: block as read (in buf) fails the caller's own check,
	 * proves; another reading the device's redundancy gives that
	 * proves itself replaces it in buf (and on the device): 0.
	 * raidcore: rc_block_reconsider.  Without it, -ENODATA. */
	int (*reconsider)(struct fs_bdev *b, uint64_t block,
			  bool (*proves)(void *ctx, const void *data),
			  void *ctx, void *buf);
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

static inline int fs_bdev_write_fresh(struct fs_bdev *b, uint64_t block,
				      uint32_t count, const void *buf)
{
	return b->ops->write_fresh ? b->ops->write_fresh(b, block, count, buf) :
				     b->ops->write(b, block, count, buf);
}

static inline uint64_t fs_bdev_dropped(struct fs_bdev *b)
{
	return b->ops->dropped ? b->ops->dropped(b) : 0;
}

static inline bool fs_bdev_suspect(struct fs_bdev *b, uint64_t block)
{
	return b->ops->suspect && b->ops->suspect(b, block);
}

static inline int fs_bdev_reconsider(struct fs_bdev *b, uint64_t block,
				     bool (*proves)(void *ctx,
						    const void *data),
				     void *ctx, void *buf)
{
	return b->ops->reconsider ?
	       b->ops->reconsider(b, block, proves, ctx, buf) : -ENODATA;
}

static inline bool fs_bdev_dropped_in(struct fs_bdev *b, uint64_t since,
				      uint64_t block, uint64_t count)
{
	return b->ops->dropped_in && b->ops->dropped_in(b, since, block, count);
}

/*
 * The flush of the writes whose caller asks afterwards which of them were
 * dropped (fs_bdev_dropped_in): the journal's commits and checkpoints, an
 * fsync's data.  Every other flush is fs_bdev_flush, which fails when a
 * write was dropped while it ran - whosever it was.
 */
static inline int fs_bdev_flush_asking(struct fs_bdev *b)
{
	return b->ops->flush(b);
}

static inline int fs_bdev_flush(struct fs_bdev *b)
{
	uint64_t n = fs_bdev_dropped(b);
	int err = b->ops->flush(b);

	return err == 0 && fs_bdev_dropped(b) != n ? -EIO : err;
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

/*
 * Adapter over one raidcore device (raidcore.h: rc_dev_open_file,
 * rc_dev_mem_create, rc_fault_wrap...), of dev->size / 4 KiB blocks, with
 * stripe_blocks as the full-write unit (0: 1).  The bdev owns dev: closing
 * it closes dev.  -EINVAL when dev is smaller than one block.
 */
int fs_bdev_from_dev(struct rc_dev *dev, uint32_t stripe_blocks,
		     struct fs_bdev **out);

#endif
