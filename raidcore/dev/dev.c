/*
 * rc_dev: what every member backend shares - closing a device, making a
 * range read as zeros whether or not the backend can do it cheaply,
 * reading a range into several buffers whether or not the backend can do
 * it in one request, and asking a device its size now.
 *
 * The backends themselves are one per file: file.c (file or block device),
 * mem.c (sparse memory), fault.c (fault injection, tests only).
 */
#include <errno.h>
#include <stdlib.h>

#include "raidcore.h"

int rc_dev_zero(struct rc_dev *dev, uint64_t off, uint64_t len)
{
	const uint64_t step = 1 << 20;
	uint8_t *z;
	int ret;

	if (dev->ops->zero) {
		ret = dev->ops->zero(dev, off, len);
		if (ret != -EOPNOTSUPP)
			return ret;
	}
	z = calloc(1, step);
	if (!z)
		return -ENOMEM;
	for (ret = 0; len && ret == 0;) {
		uint64_t n = len < step ? len : step;

		ret = rc_dev_write(dev, z, n, off);
		off += n;
		len -= n;
	}
	free(z);
	return ret;
}

int rc_dev_readv_each(struct rc_dev *dev, const struct iovec *iov,
		      int iovcnt, uint64_t off)
{
	int ret = 0;

	for (int i = 0; i < iovcnt && ret == 0; i++) {
		ret = rc_dev_read(dev, iov[i].iov_base, iov[i].iov_len, off);
		off += iov[i].iov_len;
	}
	return ret;
}

int rc_dev_readv(struct rc_dev *dev, const struct iovec *iov, int iovcnt,
		 uint64_t off)
{
	if (dev->ops->readv)
		return dev->ops->readv(dev, iov, iovcnt, off);
	return rc_dev_readv_each(dev, iov, iovcnt, off);
}

int rc_dev_size_now(struct rc_dev *dev, uint64_t *bytes)
{
	if (dev->ops->size_now)
		return dev->ops->size_now(dev, bytes);
	*bytes = dev->size;
	return 0;
}

/* Every backend's close frees its device, so this is all there is. */
/* d is the regular file (st_dev, ino). */
static bool dev_is_file(const struct rc_dev *d, dev_t st_dev, ino_t ino)
{
	return ino && !d->rdev && d->st_dev == st_dev && d->ino == ino;
}

bool rc_dev_same(const struct rc_dev *a, const struct rc_dev *b)
{
	if (a->rdev && a->rdev == b->rdev)
		return true;
	if (!a->rdev && !b->rdev)
		return dev_is_file(b, a->st_dev, a->ino);
	return (a->back_ino && dev_is_file(b, a->back_dev, a->back_ino)) ||
	       (b->back_ino && dev_is_file(a, b->back_dev, b->back_ino)) ||
	       (a->back_ino && a->back_ino == b->back_ino &&
		a->back_dev == b->back_dev);
}

void rc_dev_close(struct rc_dev *dev)
{
	if (dev)
		dev->ops->close(dev);
}
