/*
 * rc_dev_file: the member backend over a regular file or a block device.
 *
 * Usage: rc_dev_open_file(path, flags, &dev); rc_dev_read / rc_dev_write /
 * rc_dev_sync from any number of threads (pread and pwrite carry their own
 * offset, so there is no shared file position); rc_dev_close(dev).
 *
 * The size is fixed at open time: a regular file by its length, a block
 * device by BLKGETSIZE64.  I/O beyond it is refused, so a member never grows.
 * The size now (size_now: fstat or BLKGETSIZE64 again) tells raidcore that
 * a member shrank under it (a truncated image, a resized device).
 * RC_DEV_EXCL opens a block device with O_EXCL, as mdadm does, so the kernel
 * refuses a second exclusive opener (or a mounted device) with -EBUSY.
 * Every open also takes flock() (shared when read-only), and on a loop
 * device also on the file behind it (dev->back_ino, back_dev): an image
 * file and a loop device over it are one member, and one raidfs program
 * holding it through either name keeps every other out (-EBUSY).
 *
 * A block device is opened with O_DIRECT: what raidcore reads is what the
 * device holds now, never a page the kernel cached from an earlier read or
 * write - a disk that lost its contents, dropped writes or was swapped
 * under the same name would otherwise look intact until memory pressure
 * evicted the pages, and every check of it would verify the cache.
 * (raidcore caches what it needs itself.)  A request whose buffer, offset
 * or length is not aligned goes through an aligned bounce buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <limits.h>
#include <sys/sysmacros.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <linux/major.h>

#include "raidcore.h"

struct dev_file {
	int fd;
	int back_fd;            /* a loop device's backing file, locked; -1 */
	bool rdonly;
	bool direct;            /* O_DIRECT: requests aligned to align */
	uint32_t align;         /* the device's logical block size, >= 512 */
};

#define DEV_FILE_BUF_ALIGN 4096u        /* buffers of direct requests */
#define DEV_FILE_IOV_MAX 64             /* buffers of one preadv (rc_read's
					   spans have 64 pieces at most) */

/* A device handed to raidcore must not have changed since it was checked. */
static bool dev_file_is_same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       (a->st_mode & S_IFMT) == (b->st_mode & S_IFMT);
}

static bool dev_file_in_bounds(const struct rc_dev *dev, size_t len,
			       uint64_t off)
{
	return off <= dev->size && len <= dev->size - off;
}

static int fd_read(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = pread(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			/* The file was truncated under us: read it as a hole. */
			memset(p, 0, len);
			break;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* fd_read into iovcnt buffers (iov is not changed). */
static int fd_readv(int fd, const struct iovec *iov, int iovcnt, uint64_t off)
{
	struct iovec v[DEV_FILE_IOV_MAX];
	int i = 0;
	ssize_t n;

	memcpy(v, iov, (size_t)iovcnt * sizeof(*v));
	while (i < iovcnt) {
		n = preadv(fd, v + i, iovcnt - i, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			/* The file was truncated under us: read it as a hole. */
			for (; i < iovcnt; i++)
				memset(v[i].iov_base, 0, v[i].iov_len);
			break;
		}
		off += (uint64_t)n;
		for (; i < iovcnt && (size_t)n >= v[i].iov_len; i++)
			n -= (ssize_t)v[i].iov_len;
		if (i < iovcnt) {
			v[i].iov_base = (char *)v[i].iov_base + n;
			v[i].iov_len -= (size_t)n;
		}
	}
	return 0;
}

static int fd_write(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = pwrite(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;   /* no progress and no error: do not spin */
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static bool dev_file_aligned(const struct dev_file *df, const void *buf,
			     size_t len, uint64_t off)
{
	return !df->direct ||
	       ((uintptr_t)buf % DEV_FILE_BUF_ALIGN == 0 &&
		len % df->align == 0 && off % df->align == 0);
}

/* [off, off + len) widened to the device's blocks, in an aligned buffer:
 * *b0 its first byte's offset, *blen its length. */
static void *bounce_alloc(const struct dev_file *df, size_t len, uint64_t off,
			  uint64_t *b0, size_t *blen)
{
	void *b;

	*b0 = off / df->align * df->align;
	*blen = (size_t)((off + len + df->align - 1) / df->align * df->align -
			 *b0);
	if (posix_memalign(&b, DEV_FILE_BUF_ALIGN, *blen))
		return NULL;
	return b;
}

static int dev_file_read(struct rc_dev *dev, void *buf, size_t len,
			 uint64_t off)
{
	struct dev_file *df = dev->ctx;
	uint64_t b0;
	size_t blen;
	void *b;
	int ret;

	if (!dev_file_in_bounds(dev, len, off))
		return -EINVAL;
	if (dev_file_aligned(df, buf, len, off))
		return fd_read(df->fd, buf, len, off);
	b = bounce_alloc(df, len, off, &b0, &blen);
	if (!b)
		return -ENOMEM;
	ret = fd_read(df->fd, b, blen, b0);
	if (ret == 0)
		memcpy(buf, (char *)b + (off - b0), len);
	free(b);
	return ret;
}

/* One preadv when every buffer suits the device (O_DIRECT: aligned, whole
 * device blocks); else each buffer on its own, as dev_file_read reads it. */
static int dev_file_readv(struct rc_dev *dev, const struct iovec *iov,
			  int iovcnt, uint64_t off)
{
	struct dev_file *df = dev->ctx;
	bool whole = iovcnt <= DEV_FILE_IOV_MAX;
	size_t len = 0;

	for (int i = 0; i < iovcnt; i++) {
		whole &= dev_file_aligned(df, iov[i].iov_base, iov[i].iov_len,
					  off + len);
		len += iov[i].iov_len;
	}
	if (!dev_file_in_bounds(dev, len, off))
		return -EINVAL;
	return whole ? fd_readv(df->fd, iov, iovcnt, off) :
	       rc_dev_readv_each(dev, iov, iovcnt, off);
}

/* An unaligned write goes through the bounce buffer; a range that is not
 * whole device blocks has the blocks it touches read first and written
 * whole (raidcore writes whole 4 KiB blocks: partial ones come only from
 * tools and tests, never concurrently with writes to the same blocks). */
static int dev_file_write(struct rc_dev *dev, const void *buf, size_t len,
			  uint64_t off)
{
	struct dev_file *df = dev->ctx;
	uint64_t b0;
	size_t blen;
	void *b;
	int ret = 0;

	if (df->rdonly)
		return -EROFS;
	if (!dev_file_in_bounds(dev, len, off))
		return -EINVAL;
	if (dev_file_aligned(df, buf, len, off))
		return fd_write(df->fd, buf, len, off);
	b = bounce_alloc(df, len, off, &b0, &blen);
	if (!b)
		return -ENOMEM;
	if (b0 != off || blen != len)
		ret = fd_read(df->fd, b, blen, b0);
	if (ret == 0) {
		memcpy((char *)b + (off - b0), buf, len);
		ret = fd_write(df->fd, b, blen, b0);
	}
	free(b);
	return ret;
}

static int dev_file_sync(struct rc_dev *dev)
{
	struct dev_file *df = dev->ctx;

	if (fdatasync(df->fd) < 0)
		return -errno;
	return 0;
}

static void dev_file_close(struct rc_dev *dev)
{
	struct dev_file *df = dev->ctx;

	close(df->fd);
	if (df->back_fd >= 0)
		close(df->back_fd);
	free(df);
	free(dev);
}

/* A hole in a file, BLKZEROOUT on a device; -EOPNOTSUPP lets the caller
 * fall back to writing zeros. */
static int dev_file_zero(struct rc_dev *dev, uint64_t off, uint64_t len)
{
	struct dev_file *df = dev->ctx;
	uint64_t range[2] = { off, len };

	if (df->rdonly)
		return -EROFS;
	if (!dev_file_in_bounds(dev, len, off))
		return -EINVAL;
	if (dev->rdev)
		return ioctl(df->fd, BLKZEROOUT, range) < 0 ? -EOPNOTSUPP : 0;
	if (fallocate(df->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)off, (off_t)len) < 0)
		return -EOPNOTSUPP;
	return 0;
}


/* Only regular files and block devices can hold a member. */
static int dev_file_check_type(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (!S_ISREG(st->st_mode) && !S_ISBLK(st->st_mode))
		return -EINVAL;
	return 0;
}

static int dev_file_size_get(int fd, const struct stat *st, uint64_t *size)
{
	if (!S_ISBLK(st->st_mode)) {
		*size = (uint64_t)st->st_size;
		return 0;
	}
	if (ioctl(fd, BLKGETSIZE64, size) < 0)
		return -errno;
	return 0;
}

static int dev_file_size_now(struct rc_dev *dev, uint64_t *bytes)
{
	struct dev_file *df = dev->ctx;
	struct stat st;

	if (fstat(df->fd, &st) < 0)
		return -errno;
	return dev_file_size_get(df->fd, &st, bytes);
}

static const struct rc_dev_ops dev_file_ops = {
	.read = dev_file_read,
	.write = dev_file_write,
	.sync = dev_file_sync,
	.close = dev_file_close,
	.zero = dev_file_zero,
	.size_now = dev_file_size_now,
	.readv = dev_file_readv,
};

/* The lock every raidfs program takes on a member (shared when it only
 * reads): -EBUSY when another holds it. */
static int dev_file_lock(int fd, unsigned flags)
{
	if (flock(fd, ((flags & RC_DEV_RDONLY) ? LOCK_SH : LOCK_EX) | LOCK_NB))
		return errno == EWOULDBLOCK ? -EBUSY : -errno;
	return 0;
}

/*
 * The type is checked with stat() before open() so that a FIFO is never
 * opened (that would block) and so O_EXCL is only used where it means
 * "exclusive", on a block device; fstat() afterwards closes the race.
 */
/* A block device set read-only (losetup -r, a write-protected disk, a
 * read-only partition) opens for writing all the same, and only its
 * writes fail: -EROFS at open instead, for writing. */
static int dev_file_ro_check(int fd, const struct stat *st, unsigned flags)
{
	int ro = 0;

	if ((flags & RC_DEV_RDONLY) || !S_ISBLK(st->st_mode) ||
	    ioctl(fd, BLKROGET, &ro) < 0)
		return 0;
	return ro ? -EROFS : 0;
}

static int dev_file_fd_open(const char *path, unsigned flags, int *fdp,
			    struct stat *st)
{
	struct stat before;
	int oflags = O_CLOEXEC | O_NOCTTY;
	int fd, err;

	if (stat(path, &before) < 0)
		return -errno;
	err = dev_file_check_type(&before);
	if (err)
		return err;
	oflags |= (flags & RC_DEV_RDONLY) ? O_RDONLY : O_RDWR;
	if ((flags & RC_DEV_EXCL) && S_ISBLK(before.st_mode))
		oflags |= O_EXCL;
	fd = open(path, oflags | (S_ISBLK(before.st_mode) ? O_DIRECT : 0));
	if (fd < 0 && errno == EINVAL)  /* a device without direct I/O */
		fd = open(path, oflags);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		err = -errno;
		goto fail;
	}
	if (!dev_file_is_same(&before, st)) {
		err = -EAGAIN;
		goto fail;
	}
	err = dev_file_ro_check(fd, st, flags);
	if (err)
		goto fail;
	err = dev_file_lock(fd, flags);
	if (err)
		goto fail;
	*fdp = fd;
	return 0;
fail:
	close(fd);
	return err;
}

/*
 * A loop device's backing file: its identity goes into dev, and, when the
 * file can be opened by the name the kernel gives
 * (/sys/dev/block/M:N/loop/backing_file) and is the same file, the lock an
 * image file gets (-EBUSY when another opener holds it).  Not a loop
 * device, or its file not reachable by name (deleted, in another mount
 * namespace): 0, nothing more locked.
 */
static int dev_file_loop_lock(int fd, const struct stat *st, unsigned flags,
			      struct rc_dev *dev, int *back_fd)
{
	struct loop_info64 li;
	char sys[96], path[PATH_MAX];
	struct stat bst;
	int b = -1, ret = 0;
	FILE *f;

	*back_fd = -1;
	if (!S_ISBLK(st->st_mode) || major(st->st_rdev) != LOOP_MAJOR ||
	    ioctl(fd, LOOP_GET_STATUS64, &li) < 0)
		return 0;
	dev->back_ino = (ino_t)li.lo_inode;
	dev->back_dev = (dev_t)li.lo_device;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/loop/backing_file",
		 major(st->st_rdev), minor(st->st_rdev));
	f = fopen(sys, "re");
	if (!f)
		return 0;
	if (fgets(path, sizeof(path), f)) {
		path[strcspn(path, "\n")] = '\0';
		b = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	}
	fclose(f);
	if (b < 0)
		return 0;
	if (fstat(b, &bst) < 0 || !S_ISREG(bst.st_mode) ||
	    bst.st_ino != dev->back_ino)
		goto out;
	dev->back_dev = bst.st_dev;     /* the same file, in stat's terms */
	ret = dev_file_lock(b, flags);
	if (ret)
		goto out;
	*back_fd = b;
	return 0;
out:
	close(b);
	return ret;
}

/* Direct I/O if the open gave it, aligned to the logical block size. */
static void dev_file_direct_init(struct dev_file *df)
{
	int fl = fcntl(df->fd, F_GETFL), lbs = 0;

	df->direct = fl >= 0 && (fl & O_DIRECT);
	df->align = 512;
	if (df->direct && ioctl(df->fd, BLKSSZGET, &lbs) == 0 && lbs > 512)
		df->align = (uint32_t)lbs;
}

int rc_dev_open_file(const char *path, unsigned flags, struct rc_dev **out)
{
	struct rc_dev *dev = NULL;
	struct dev_file *df = NULL;
	struct stat st;
	int fd = -1, err;

	*out = NULL;
	err = dev_file_fd_open(path, flags, &fd, &st);
	if (err)
		return err;
	dev = calloc(1, sizeof(*dev));
	df = calloc(1, sizeof(*df));
	if (!dev || !df) {
		err = -ENOMEM;
		goto fail;
	}
	err = dev_file_size_get(fd, &st, &dev->size);
	if (err)
		goto fail;
	err = dev_file_loop_lock(fd, &st, flags, dev, &df->back_fd);
	if (err)
		goto fail;
	df->fd = fd;
	df->rdonly = flags & RC_DEV_RDONLY;
	dev_file_direct_init(df);
	dev->waits = df->direct;
	dev->ops = &dev_file_ops;
	dev->ctx = df;
	snprintf(dev->name, sizeof(dev->name), "%s", path);
	dev->rdev = S_ISBLK(st.st_mode) ? st.st_rdev : 0;
	dev->ino = st.st_ino;
	dev->st_dev = st.st_dev;
	*out = dev;
	return 0;
fail:
	free(df);
	free(dev);
	close(fd);
	return err;
}
