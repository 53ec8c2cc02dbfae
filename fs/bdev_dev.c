/*
 * bdev_dev: the filesystem's device over any raidcore member device
 * (struct rc_dev: a file, a block device, sparse memory, a fault-injecting
 * wrapper), for tests and development without an array.  Blocks become
 * byte ranges; flush is the device's sync.
 *
 * The unit tests run the filesystem on a memory device through the fault
 * wrapper: its power domain gives them the volatile cache, the write limit
 * with a torn write and the power cut, and its counters the writes and
 * flushes (tests/unit/fs_test_util.h).
 */
#include <errno.h>
#include <stdlib.h>
#include "bdev.h"
#include "raidcore.h"

static struct rc_dev *dev_of(struct fs_bdev *b)
{
	return b->ctx;
}

/* Out of range is an I/O error to the filesystem, as on a disk. */
static bool dev_range_ok(struct fs_bdev *b, uint64_t block, uint32_t count)
{
	return block <= b->blocks && count <= b->blocks - block;
}

static int dev_read(struct fs_bdev *b, uint64_t block, uint32_t count,
		    void *buf)
{
	if (!dev_range_ok(b, block, count))
		return -EIO;
	return rc_dev_read(dev_of(b), buf, (size_t)count * FS_BDEV_BLOCK_SIZE,
			   block * FS_BDEV_BLOCK_SIZE);
}

static int dev_write(struct fs_bdev *b, uint64_t block, uint32_t count,
		     const void *buf)
{
	if (!dev_range_ok(b, block, count))
		return -EIO;
	return rc_dev_write(dev_of(b), buf, (size_t)count * FS_BDEV_BLOCK_SIZE,
			    block * FS_BDEV_BLOCK_SIZE);
}

static int dev_flush(struct fs_bdev *b)
{
	return rc_dev_sync(dev_of(b));
}

static void dev_close(struct fs_bdev *b)
{
	rc_dev_close(dev_of(b));
	free(b);
}

static const struct fs_bdev_ops dev_ops = {
	.read = dev_read,
	.write = dev_write,
	.flush = dev_flush,
	.close = dev_close,
};

int fs_bdev_from_dev(struct rc_dev *dev, uint32_t stripe_blocks,
		     struct fs_bdev **out)
{
	struct fs_bdev *b;

	if (dev->size < FS_BDEV_BLOCK_SIZE)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->ops = &dev_ops;
	b->ctx = dev;
	b->blocks = dev->size / FS_BDEV_BLOCK_SIZE;
	b->stripe_blocks = stripe_blocks ? stripe_blocks : 1;
	*out = b;
	return 0;
}
