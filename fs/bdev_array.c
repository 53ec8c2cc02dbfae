/*
 * bdev_array: the filesystem's device over a raidcore array.  The stripe
 * width from rc_array_info becomes stripe_blocks so the allocator can hand
 * large files whole stripes (full-stripe writes, no read-modify-write).
 */
#include <errno.h>
#include <stdlib.h>
#include "bdev.h"
#include "fs_int.h"
#include "raidcore.h"

static struct rc_array *array_of(struct fs_bdev *b)
{
	return b->ctx;
}

static int array_read(struct fs_bdev *b, uint64_t block, uint32_t count,
		      void *buf)
{
	return rc_read(array_of(b), block, count, buf);
}

static int array_write(struct fs_bdev *b, uint64_t block, uint32_t count,
		       const void *buf)
{
	return rc_write(array_of(b), block, count, buf);
}

static int array_write_fresh(struct fs_bdev *b, uint64_t block,
			     uint32_t count, const void *buf)
{
	return rc_write_flags(array_of(b), block, count, buf, RC_WRITE_FRESH);
}

static int array_flush(struct fs_bdev *b)
{
	return rc_flush_dropping(array_of(b));
}

static uint64_t array_dropped(struct fs_bdev *b)
{
	return rc_write_failures(array_of(b));
}

static bool array_dropped_in(struct fs_bdev *b, uint64_t since,
			     uint64_t block, uint64_t count)
{
	return rc_write_failed(array_of(b), since, block, count);
}

static bool array_suspect(struct fs_bdev *b, uint64_t block)
{
	return rc_block_suspect(array_of(b), block);
}

static int array_reconsider(struct fs_bdev *b, uint64_t block,
			    bool (*proves)(void *ctx, const void *data),
			    void *ctx, void *buf)
{
	return rc_block_reconsider(array_of(b), block, proves, ctx, buf);
}

static void array_close(struct fs_bdev *b)
{
	free(b);
}

static const struct fs_bdev_ops array_ops = {
	.read = array_read,
	.write = array_write,
	.flush = array_flush,
	.close = array_close,
	.write_fresh = array_write_fresh,
	.dropped = array_dropped,
	.dropped_in = array_dropped_in,
	.suspect = array_suspect,
	.reconsider = array_reconsider,
};

/* raidcore's question about a block it cannot verify (rc_array_set_vouch). */
static enum rc_vouch array_vouch(void *ctx, uint64_t block, const void *data)
{
	const struct fs_bhdr *h = data;

	(void)ctx;
	if (fs_block_proves(data, block))
		return RC_VOUCH_HERE;
	/* a header that names this block, its checksum failing */
	if (fs_le32(h->magic) == FS_BLK_MAGIC && fs_le64(h->blocknr) == block)
		return RC_VOUCH_DAMAGED;
	return fs_inode_block_proves(data) ? RC_VOUCH_SELF : RC_VOUCH_NO;
}

int fs_bdev_from_array(struct rc_array *a, struct fs_bdev **out)
{
	struct rc_info info;
	struct fs_bdev *b;
	int err;

	err = rc_array_info(a, &info);
	if (err)
		return err;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->ops = &array_ops;
	b->ctx = a;
	b->blocks = info.blocks;
	b->stripe_blocks = info.stripe_blocks ? info.stripe_blocks : 1;
	rc_array_set_vouch(a, array_vouch, NULL);
	*out = b;
	return 0;
}
