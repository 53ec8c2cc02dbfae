/*
 * bdev_file: a regular file or block device as the filesystem's device,
 * for development without raidcore.  pread/pwrite/fdatasync.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include "bdev.h"

static int file_fd(struct fs_bdev *b)
{
	return (int)(intptr_t)b->ctx;
}

static int file_xfer(struct fs_bdev *b, uint64_t block, uint32_t count,
		     void *buf, bool write)
{
	size_t len = (size_t)count * FS_BDEV_BLOCK_SIZE;
	off_t off = (off_t)(block * FS_BDEV_BLOCK_SIZE);
	uint8_t *p = buf;
	ssize_t n;

	if (block > b->blocks || count > b->blocks - block)
		return -EIO;
	while (len) {
		n = write ? pwrite(file_fd(b), p, len, off) :
			    pread(file_fd(b), p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		off += n;
		len -= (size_t)n;
	}
	return 0;
}

static int file_read(struct fs_bdev *b, uint64_t block, uint32_t count,
		     void *buf)
{
	return file_xfer(b, block, count, buf, false);
}

static int file_write(struct fs_bdev *b, uint64_t block, uint32_t count,
		      const void *buf)
{
	return file_xfer(b, block, count, (void *)buf, true);
}

static int file_flush(struct fs_bdev *b)
{
	return fdatasync(file_fd(b)) ? -errno : 0;
}

static void file_close(struct fs_bdev *b)
{
	close(file_fd(b));
	free(b);
}

static const struct fs_bdev_ops file_ops = {
	.read = file_read,
	.write = file_write,
	.flush = file_flush,
	.close = file_close,
};

static int file_size(int fd, uint64_t *bytes)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, bytes) ? -errno : 0;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	*bytes = (uint64_t)st.st_size;
	return 0;
}

int fs_bdev_file_open(const char *path, struct fs_bdev **out)
{
	struct fs_bdev *b;
	uint64_t bytes;
	int fd, err;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = file_size(fd, &bytes);
	if (err)
		goto fail;
	err = -EINVAL;
	if (bytes < FS_BDEV_BLOCK_SIZE)
		goto fail;
	err = -ENOMEM;
	b = calloc(1, sizeof(*b));
	if (!b)
		goto fail;
	b->ops = &file_ops;
	b->ctx = (void *)(intptr_t)fd;
	b->blocks = bytes / FS_BDEV_BLOCK_SIZE;
	b->stripe_blocks = 1;
	*out = b;
	return 0;
fail:
	close(fd);
	return err;
}
