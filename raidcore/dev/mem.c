/*
 * rc_dev_mem: a member backend in memory, for tests and benchmarks.
 *
 * Usage: rc_dev_mem_create(size, "mem0", &dev); I/O from any number of
 * threads; rc_dev_close(dev) frees the contents.  There is no cache, so
 * sync has nothing to do: a write is "durable" once it returns.
 *
 * Each operation holds the device's mutex for the copy, so concurrent reads
 * and writes of the same bytes never tear (a disk gives the old or the new
 * sector, never a mix) and are not data races.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raidcore.h"

struct dev_mem {
	pthread_mutex_t lock;    /* protects data */
	unsigned char *data;     /* dev->size bytes */
};

/*
 * Two memory devices must never look like the same file to the duplicate
 * check of assembly, so each gets its own inode number (st_dev stays 0,
 * which no real file system uses).
 */
static atomic_ulong dev_mem_next_ino = 1;

static bool dev_mem_in_bounds(const struct rc_dev *dev, size_t len,
			      uint64_t off)
{
	return off <= dev->size && len <= dev->size - off;
}

static int dev_mem_read(struct rc_dev *dev, void *buf, size_t len,
			uint64_t off)
{
	struct dev_mem *dm = dev->ctx;

	if (!dev_mem_in_bounds(dev, len, off))
		return -EINVAL;
	pthread_mutex_lock(&dm->lock);
	memcpy(buf, dm->data + off, len);
	pthread_mutex_unlock(&dm->lock);
	return 0;
}

static int dev_mem_write(struct rc_dev *dev, const void *buf, size_t len,
			 uint64_t off)
{
	struct dev_mem *dm = dev->ctx;

	if (!dev_mem_in_bounds(dev, len, off))
		return -EINVAL;
	pthread_mutex_lock(&dm->lock);
	memcpy(dm->data + off, buf, len);
	pthread_mutex_unlock(&dm->lock);
	return 0;
}

static int dev_mem_sync(struct rc_dev *dev)
{
	return 0;
}

static void dev_mem_close(struct rc_dev *dev)
{
	struct dev_mem *dm = dev->ctx;

	pthread_mutex_destroy(&dm->lock);
	free(dm->data);
	free(dm);
	free(dev);
}

static const struct rc_dev_ops dev_mem_ops = {
	.read = dev_mem_read,
	.write = dev_mem_write,
	.sync = dev_mem_sync,
	.close = dev_mem_close,
};

/* size must be non-zero and addressable; name NULL means "mem". */
int rc_dev_mem_create(uint64_t size, const char *name, struct rc_dev **out)
{
	struct rc_dev *dev = NULL;
	struct dev_mem *dm = NULL;
	int err = -ENOMEM;

	*out = NULL;
	if (size == 0 || size > SIZE_MAX)
		return -EINVAL;
	dev = calloc(1, sizeof(*dev));
	dm = calloc(1, sizeof(*dm));
	if (!dev || !dm)
		goto fail;
	dm->data = calloc(1, (size_t)size);
	if (!dm->data)
		goto fail;
	err = -pthread_mutex_init(&dm->lock, NULL);
	if (err)
		goto fail;
	dev->ops = &dev_mem_ops;
	dev->ctx = dm;
	dev->size = size;
	snprintf(dev->name, sizeof(dev->name), "%s", name ? name : "mem");
	dev->ino = (ino_t)atomic_fetch_add(&dev_mem_next_ino, 1);
	*out = dev;
	return 0;
fail:
	if (dm)
		free(dm->data);
	free(dm);
	free(dev);
	return err;
}
