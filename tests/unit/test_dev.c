/*
 * test_dev: the member backends (rc_dev_file, rc_dev_mem, rc_dev_fault) as a
 * specification.
 *
 *   file      round trip through a file under a private temporary directory,
 *             persisted across reopen; bounds; read-only refuses writes; a
 *             directory, a FIFO and a character device are refused; a file
 *             truncated under an open device reads as zeros, and its size
 *             now says so (dev->size stays the size at open).
 *   blockdev  (root with working losetup, else skipped) a loop device opened
 *             with RC_DEV_EXCL has the right size and rdev, and a second
 *             exclusive open fails with -EBUSY; reads return what the media
 *             holds now (O_DIRECT), also through unaligned requests.
 *   mem       round trip, bounds, distinct identities; sparse (only blocks
 *             that are not all zeros are held, zeroing frees them, a device
 *             of a petabyte costs nothing); a stand-in carries a real
 *             device's identity; a shared handle sees the same storage,
 *             which outlives the first handle.
 *   fault     each rule as a script of operations checked against a shadow
 *             copy of the media: transient counts consumed exactly,
 *             persistent rules stay, operations outside a range untouched;
 *             flip-on-read leaves the media intact; corrupt flips exactly
 *             nbits bits, deterministically; lost writes leave old data;
 *             vanish; counters; a shrunk device says its new size and
 *             fails I/O past it; a swapped one answers from another device.
 *   power     writes invisible to lower until sync; a cut across two devices
 *             drops both caches and fails every later operation; synced data
 *             survives; REORDER keeps some whole 4 KiB pieces and never a
 *             mixed one; close writes back while the power is on; a write
 *             limit tears the write that crosses it, fails later ones, and
 *             leaves reads and syncs working; bytes taken are counted.
 *   threads   4 threads on disjoint ranges through the wrapper over mem, with
 *             and without a power domain.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <cmocka.h>
#include "raidcore.h"
#include "rc_fault.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define KiB 1024u
#define BLK RC_BLOCK_SIZE

static char test_tmpdir[PATH_MAX];

/* ---- helpers -------------------------------------------------------------- */

/*
 * Content that depends on the absolute offset, so misplaced data shows;
 * tags differ in every byte (tag is XORed in), so a mixed 4 KiB piece can
 * never pass for one tag.
 */
static uint8_t pat_byte(uint8_t tag, uint64_t pos)
{
	return (uint8_t)(pos ^ ((pos >> 8) * 31) ^ ((pos >> 16) * 17)) ^ tag;
}

static void pat_fill(uint8_t *buf, size_t len, uint64_t off, uint8_t tag)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pat_byte(tag, off + i);
}

static bool pat_is(const uint8_t *buf, size_t len, uint64_t off, uint8_t tag)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != pat_byte(tag, off + i))
			return false;
	return true;
}

static bool buf_is_zero(const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i])
			return false;
	return true;
}

static uint64_t bits_differ(const uint8_t *a, const uint8_t *b, size_t len)
{
	uint64_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += (uint64_t)__builtin_popcount(a[i] ^ b[i]);
	return n;
}

/* Writes [off, off + len) of tag through dev. */
static int dev_write_pat(struct rc_dev *dev, uint64_t off, size_t len,
			 uint8_t tag)
{
	uint8_t *buf = malloc(len ? len : 1);
	int err;

	assert_non_null(buf);
	pat_fill(buf, len, off, tag);
	err = rc_dev_write(dev, buf, len, off);
	free(buf);
	return err;
}

/* Whether [off, off + len) of dev reads as tag (0 with tag 0 means zeros). */
static bool dev_is_pat(struct rc_dev *dev, uint64_t off, size_t len,
		       uint8_t tag)
{
	uint8_t *buf = malloc(len);
	bool ok;

	assert_non_null(buf);
	assert_int_equal(rc_dev_read(dev, buf, len, off), 0);
	ok = tag ? pat_is(buf, len, off, tag) : buf_is_zero(buf, len);
	free(buf);
	return ok;
}

static void tmp_path(char *out, size_t outlen, const char *name)
{
	int n = snprintf(out, outlen, "%s/%s", test_tmpdir, name);

	assert_true(n > 0 && (size_t)n < outlen);
}

static void tmp_file_create(char *out, size_t outlen, const char *name,
			    off_t size)
{
	int fd;

	tmp_path(out, outlen, name);
	fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

static int tmp_rm(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(path);
}

static int group_setup(void **state)
{
	snprintf(test_tmpdir, sizeof(test_tmpdir), "/tmp/test_dev.XXXXXX");
	return mkdtemp(test_tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	return nftw(test_tmpdir, tmp_rm, 16, FTW_DEPTH | FTW_PHYS);
}

static struct rc_dev *mem_new(uint64_t size)
{
	struct rc_dev *dev;

	assert_int_equal(rc_dev_mem_create(size, "mem", &dev), 0);
	return dev;
}

/* ---- file backend --------------------------------------------------------- */

struct io_extent {
	uint64_t off;
	size_t len;
};

/* Disjoint: aligned, unaligned, single byte, crossing blocks, the last byte. */
static const struct io_extent file_extents[] = {
	{ 0, 100 }, { 3 * BLK, 2 * BLK }, { 101, 1 }, { BLK - 7, 300 },
	{ 100 * KiB + 5, 70 * KiB }, { 256 * KiB - 1, 1 },
};

/* A member is locked: one writer, or any number of readers. */
static void test_file_lock(void **state)
{
	char path[PATH_MAX];
	struct rc_dev *w, *r1, *r2, *x;

	tmp_file_create(path, sizeof(path), "lock.img", 64 * KiB);
	assert_int_equal(rc_dev_open_file(path, 0, &w), 0);
	assert_int_equal(rc_dev_open_file(path, 0, &x), -EBUSY);
	assert_int_equal(rc_dev_open_file(path, RC_DEV_RDONLY, &x), -EBUSY);
	rc_dev_close(w);
	assert_int_equal(rc_dev_open_file(path, RC_DEV_RDONLY, &r1), 0);
	assert_int_equal(rc_dev_open_file(path, RC_DEV_RDONLY, &r2), 0);
	assert_int_equal(rc_dev_open_file(path, 0, &x), -EBUSY);
	rc_dev_close(r1);
	rc_dev_close(r2);
}

/* rc_dev_zero: a hole in a file, written zeros elsewhere. */
static void test_zero_range(void **state)
{
	char path[PATH_MAX];
	struct rc_dev *dev, *mem;
	struct stat st;

	tmp_file_create(path, sizeof(path), "zero.img", 4096 * KiB);
	assert_int_equal(rc_dev_open_file(path, 0, &dev), 0);
	assert_int_equal(dev_write_pat(dev, 0, 4096 * KiB, 7), 0);
	assert_int_equal(rc_dev_sync(dev), 0);
	assert_int_equal(rc_dev_zero(dev, 1024 * KiB, 2048 * KiB), 0);
	assert_true(dev_is_pat(dev, 1024 * KiB, 2048 * KiB, 0));
	assert_true(dev_is_pat(dev, 0, 1024 * KiB, 7));
	assert_true(dev_is_pat(dev, 3072 * KiB, 1024 * KiB, 7));
	assert_int_equal(stat(path, &st), 0);
	assert_true((uint64_t)st.st_blocks * 512 <= 2048 * KiB + 64 * KiB);
	assert_int_equal(rc_dev_zero(dev, 4095 * KiB, 2 * KiB), -EINVAL);
	rc_dev_close(dev);
	assert_int_equal(rc_dev_mem_create(64 * KiB, "m", &mem), 0);
	assert_int_equal(dev_write_pat(mem, 0, 64 * KiB, 3), 0);
	assert_int_equal(rc_dev_zero(mem, 4 * KiB, 8 * KiB), 0);
	assert_true(dev_is_pat(mem, 4 * KiB, 8 * KiB, 0));
	assert_true(dev_is_pat(mem, 0, 4 * KiB, 3));
	rc_dev_close(mem);
}

static void test_file_roundtrip(void **state)
{
	char path[PATH_MAX];
	struct rc_dev *dev;
	struct stat st;
	size_t i;

	tmp_file_create(path, sizeof(path), "rt.img", 256 * KiB);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(rc_dev_open_file(path, 0, &dev), 0);
	assert_int_equal(dev->size, 256 * KiB);
	assert_string_equal(dev->name, path);
	assert_true(dev->ino == st.st_ino && dev->st_dev == st.st_dev);
	assert_true(dev->rdev == 0);
	for (i = 0; i < ARRAY_LEN(file_extents); i++)
		assert_int_equal(dev_write_pat(dev, file_extents[i].off,
					       file_extents[i].len, (uint8_t)(i + 1)), 0);
	assert_int_equal(rc_dev_sync(dev), 0);
	rc_dev_close(dev);

	/* What was written is in the file, read back by a fresh open. */
	assert_int_equal(rc_dev_open_file(path, RC_DEV_RDONLY, &dev), 0);
	for (i = 0; i < ARRAY_LEN(file_extents); i++)
		assert_true(dev_is_pat(dev, file_extents[i].off,
				       file_extents[i].len, (uint8_t)(i + 1)));
	assert_true(dev_is_pat(dev, 2 * BLK, BLK, 0));   /* never written */
	rc_dev_close(dev);
	rc_dev_close(NULL);
}

/*
 * rc_dev_readv: a range into several buffers, in order (one preadv on a
 * file); past the end -EINVAL with nothing read; a file truncated under
 * the handle reads as a hole; a memory device, which has no readv of its
 * own, is read buffer by buffer.
 */
static void test_file_readv(void **state)
{
	static const size_t lens[] = { 4 * KiB, 100, 64 * KiB, 12 * KiB + 3 };
	struct iovec iov[ARRAY_LEN(lens)];
	char path[PATH_MAX];
	struct rc_dev *dev, *mem;
	uint64_t off = 8 * KiB + 1, pos;
	size_t i;

	tmp_file_create(path, sizeof(path), "readv.img", 256 * KiB);
	assert_int_equal(rc_dev_open_file(path, 0, &dev), 0);
	assert_int_equal(rc_dev_mem_create(256 * KiB, "m", &mem), 0);
	assert_int_equal(dev_write_pat(dev, 0, 256 * KiB, 5), 0);
	assert_int_equal(dev_write_pat(mem, 0, 256 * KiB, 5), 0);
	for (i = 0; i < ARRAY_LEN(lens); i++) {
		iov[i].iov_base = malloc(lens[i]);
		iov[i].iov_len = lens[i];
		assert_non_null(iov[i].iov_base);
	}
	for (int d = 0; d < 2; d++) {
		for (i = 0; i < ARRAY_LEN(lens); i++)
			memset(iov[i].iov_base, 0, lens[i]);
		assert_int_equal(rc_dev_readv(d ? mem : dev, iov,
					      (int)ARRAY_LEN(lens), off), 0);
		for (i = 0, pos = off; i < ARRAY_LEN(lens); pos += lens[i++])
			assert_true(pat_is(iov[i].iov_base, lens[i], pos, 5));
	}
	assert_int_equal(rc_dev_readv(dev, iov, (int)ARRAY_LEN(lens),
				      256 * KiB - 64 * KiB), -EINVAL);
	assert_int_equal(truncate(path, off + 4 * KiB + 50), 0);
	assert_int_equal(rc_dev_readv(dev, iov, (int)ARRAY_LEN(lens), off), 0);
	assert_true(pat_is(iov[0].iov_base, lens[0], off, 5));
	assert_true(pat_is(iov[1].iov_base, 50, off + lens[0], 5));
	assert_true(buf_is_zero((uint8_t *)iov[1].iov_base + 50, 50));
	assert_true(buf_is_zero(iov[2].iov_base, lens[2]));
	assert_true(buf_is_zero(iov[3].iov_base, lens[3]));
	for (i = 0; i < ARRAY_LEN(lens); i++)
		free(iov[i].iov_base);
	rc_dev_close(dev);
	rc_dev_close(mem);
}

struct bounds_case {
	uint64_t off;
	size_t len;
	int expect;
};

/* For a device of 64 KiB. */
static const struct bounds_case bounds_cases[] = {
	{ 0, 64 * KiB, 0 },
	{ 64 * KiB - 1, 1, 0 },
	{ 64 * KiB, 0, 0 },
	{ 64 * KiB - 1, 2, -EINVAL },
	{ 64 * KiB, 1, -EINVAL },
	{ 64 * KiB + 1, 0, -EINVAL },
	{ UINT64_MAX, 1, -EINVAL },
	{ 1, SIZE_MAX, -EINVAL },
};

static void bounds_check(struct rc_dev *dev)
{
	static uint8_t buf[64 * KiB];
	size_t i, len;

	for (i = 0; i < ARRAY_LEN(bounds_cases); i++) {
		/* Refused lengths may exceed buf: they must not touch it. */
		len = bounds_cases[i].len;
		if (bounds_cases[i].expect == 0)
			assert_true(len <= sizeof(buf));
		assert_int_equal(rc_dev_read(dev, buf, len, bounds_cases[i].off),
				 bounds_cases[i].expect);
		assert_int_equal(rc_dev_write(dev, buf, len, bounds_cases[i].off),
				 bounds_cases[i].expect);
	}
}

static void test_file_bounds(void **state)
{
	char path[PATH_MAX];
	struct rc_dev *dev;
	struct stat st;

	tmp_file_create(path, sizeof(path), "bounds.img", 64 * KiB);
	assert_int_equal(rc_dev_open_file(path, 0, &dev), 0);
	bounds_check(dev);
	rc_dev_close(dev);
	/* The device never grows its file. */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 64 * KiB);
}

static void test_file_rdonly(void **state)
{
	char path[PATH_MAX];
	struct rc_dev *dev;

	tmp_file_create(path, sizeof(path), "ro.img", 64 * KiB);
	assert_int_equal(rc_dev_open_file(path, 0, &dev), 0);
	assert_int_equal(dev_write_pat(dev, 0, 8 * KiB, 1), 0);
	rc_dev_close(dev);

	assert_int_equal(rc_dev_open_file(path, RC_DEV_RDONLY, &dev), 0);
	assert_int_equal(dev_write_pat(dev, 0, BLK, 2), -EROFS);
	assert_int_equal(dev_write_pat(dev, 32 * KiB, 1, 2), -EROFS);
	assert_true(dev_is_pat(dev, 0, 8 * KiB, 1));
	assert_int_equal(rc_dev_sync(dev), 0);
	rc_dev_close(dev);
}

static void test_file_refused(void **state)
{
	char dir[PATH_MAX], fifo[PATH_MAX], missing[PATH_MAX];
	struct rc_dev *dev = (struct rc_dev *)&dev;   /* must be reset */
	static const unsigned flags[] = { 0, RC_DEV_RDONLY, RC_DEV_EXCL };
	size_t i;

	tmp_path(dir, sizeof(dir), "adir");
	tmp_path(fifo, sizeof(fifo), "afifo");
	tmp_path(missing, sizeof(missing), "missing.img");
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	for (i = 0; i < ARRAY_LEN(flags); i++) {
		assert_int_equal(rc_dev_open_file(dir, flags[i], &dev), -EISDIR);
		assert_null(dev);
		/* A FIFO would block the open; it must be refused before. */
		assert_int_equal(rc_dev_open_file(fifo, flags[i], &dev), -EINVAL);
		assert_int_equal(rc_dev_open_file("/dev/null", flags[i], &dev),
				 -EINVAL);
		assert_int_equal(rc_dev_open_file(missing, flags[i], &dev),
				 -ENOENT);
	}
}

/* A file shortened under an open device reads as a hole, not garbage. */
static void test_file_truncated_reads_zeros(void **state)
{
	char path[PATH_MAX];
	struct rc_dev *dev;
	uint8_t buf[2 * BLK];

	tmp_file_create(path, sizeof(path), "trunc.img", 2 * BLK);
	assert_int_equal(rc_dev_open_file(path, 0, &dev), 0);
	assert_int_equal(dev_write_pat(dev, 0, 2 * BLK, 7), 0);
	assert_int_equal(truncate(path, BLK + 100), 0);
	assert_int_equal(rc_dev_read(dev, buf, sizeof(buf), 0), 0);
	assert_true(pat_is(buf, BLK + 100, 0, 7));
	assert_true(buf_is_zero(buf + BLK + 100, BLK - 100));
	rc_dev_close(dev);
}

/* The size now is asked again (fstat), unlike dev->size. */
static void test_file_size_now(void **state)
{
	char path[PATH_MAX];
	struct rc_dev *dev;
	uint64_t now;

	tmp_file_create(path, sizeof(path), "shrink.img", 8 * BLK);
	assert_int_equal(rc_dev_open_file(path, 0, &dev), 0);
	assert_int_equal(rc_dev_size_now(dev, &now), 0);
	assert_int_equal(now, 8 * BLK);
	assert_int_equal(truncate(path, 3 * BLK), 0);
	assert_int_equal(rc_dev_size_now(dev, &now), 0);
	assert_int_equal(now, 3 * BLK);
	assert_int_equal(dev->size, 8 * BLK);
	rc_dev_close(dev);
}

/* ---- block device (loop) -------------------------------------------------- */

struct loop_fixture {
	char img[PATH_MAX];
	char loop[64];           /* "" when no loop device could be made */
	struct rc_dev *devs[2];
};

static int loop_run(const char *cmd, char *out, size_t outlen)
{
	FILE *p = popen(cmd, "r");
	int status;

	if (!p)
		return -1;
	if (out && !fgets(out, (int)outlen, p))
		out[0] = 0;
	status = pclose(p);
	if (out)
		out[strcspn(out, "\n")] = 0;
	return status == 0 ? 0 : -1;
}

static int loop_setup(void **state)
{
	struct loop_fixture *lf = calloc(1, sizeof(*lf));
	char cmd[PATH_MAX + 64];

	if (!lf)
		return -1;
	*state = lf;
	tmp_file_create(lf->img, sizeof(lf->img), "loop.img", 8 * 1024 * KiB);
	if (geteuid() != 0)
		return 0;
	snprintf(cmd, sizeof(cmd), "losetup --find --show '%s' 2>/dev/null",
		 lf->img);
	if (loop_run(cmd, lf->loop, sizeof(lf->loop)) ||
	    strncmp(lf->loop, "/dev/", 5) != 0)
		lf->loop[0] = 0;
	return 0;
}

static int loop_teardown(void **state)
{
	struct loop_fixture *lf = *state;
	char cmd[128];
	int err = 0;

	rc_dev_close(lf->devs[0]);
	rc_dev_close(lf->devs[1]);
	if (lf->loop[0]) {
		snprintf(cmd, sizeof(cmd), "losetup -d '%s'", lf->loop);
		err = loop_run(cmd, NULL, 0);
	}
	unlink(lf->img);
	free(lf);
	return err;
}

static void test_blockdev_excl(void **state)
{
	struct loop_fixture *lf = *state;
	struct stat st;
	uint8_t byte;

	if (!lf->loop[0]) {
		print_message("no loop device (not root, or losetup failed)\n");
		skip();
	}
	assert_int_equal(stat(lf->loop, &st), 0);
	assert_int_equal(rc_dev_open_file(lf->loop, RC_DEV_EXCL, &lf->devs[0]), 0);
	assert_int_equal(lf->devs[0]->size, 8 * 1024 * KiB);
	assert_true(lf->devs[0]->rdev == st.st_rdev);
	assert_string_equal(lf->devs[0]->name, lf->loop);
	assert_int_equal(rc_dev_open_file(lf->loop, RC_DEV_EXCL, &lf->devs[1]),
			 -EBUSY);
	assert_null(lf->devs[1]);
	assert_int_equal(dev_write_pat(lf->devs[0], 4 * 1024 * KiB, 64 * KiB, 9), 0);
	assert_int_equal(rc_dev_sync(lf->devs[0]), 0);
	assert_true(dev_is_pat(lf->devs[0], 4 * 1024 * KiB, 64 * KiB, 9));
	assert_int_equal(rc_dev_read(lf->devs[0], &byte, 1, 8 * 1024 * KiB), -EINVAL);
	rc_dev_close(lf->devs[0]);
	lf->devs[0] = NULL;
	/* The exclusive claim goes with the close. */
	assert_int_equal(rc_dev_open_file(lf->loop, RC_DEV_EXCL | RC_DEV_RDONLY,
					  &lf->devs[1]), 0);
	assert_true(dev_is_pat(lf->devs[1], 4 * 1024 * KiB, 64 * KiB, 9));
}

/*
 * What a block device holds now, not what the kernel cached: the image
 * behind the loop device changes (as a disk's media can), and the next
 * read sees it - with a page cache in between it would return the bytes
 * written earlier.  Unaligned buffers, offsets and lengths go through a
 * bounce buffer and still land exactly.
 */
static void test_blockdev_reads_media(void **state)
{
	struct loop_fixture *lf = *state;
	const uint64_t at = 1024 * KiB;
	uint8_t buf[300], *blk = malloc(64 * KiB);
	int fd;

	if (!lf->loop[0]) {
		print_message("no loop device (not root, or losetup failed)\n");
		free(blk);
		skip();
	}
	assert_int_equal(rc_dev_open_file(lf->loop, RC_DEV_EXCL, &lf->devs[0]), 0);
	assert_int_equal(dev_write_pat(lf->devs[0], at, 64 * KiB, 9), 0);
	assert_int_equal(rc_dev_sync(lf->devs[0]), 0);
	assert_true(dev_is_pat(lf->devs[0], at, 64 * KiB, 9));
	/* the media changes under the open device */
	pat_fill(blk, 64 * KiB, at, 3);
	fd = open(lf->img, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, blk, 64 * KiB, (off_t)at), 64 * KiB);
	assert_int_equal(fsync(fd), 0);
	close(fd);
	assert_true(dev_is_pat(lf->devs[0], at, 64 * KiB, 3));
	/* unaligned: buffer, offset and length */
	assert_int_equal(rc_dev_read(lf->devs[0], buf + 1, 299, at + 7), 0);
	assert_true(pat_is(buf + 1, 299, at + 7, 3));
	pat_fill(buf + 1, 10, at + 4093, 5);
	assert_int_equal(rc_dev_write(lf->devs[0], buf + 1, 10, at + 4093), 0);
	assert_true(dev_is_pat(lf->devs[0], at, 4093, 3));
	assert_true(dev_is_pat(lf->devs[0], at + 4093, 10, 5));
	assert_true(dev_is_pat(lf->devs[0], at + 4103, 64 * KiB - 4103, 3));
	free(blk);
}

/* ---- mem backend ---------------------------------------------------------- */

static void test_mem_roundtrip(void **state)
{
	struct rc_dev *a, *b;
	size_t i;

	assert_int_equal(rc_dev_mem_create(256 * KiB, "mem7", &a), 0);
	assert_int_equal(rc_dev_mem_create(256 * KiB, NULL, &b), 0);
	assert_int_equal(a->size, 256 * KiB);
	assert_string_equal(a->name, "mem7");
	assert_string_equal(b->name, "mem");
	assert_true(a->ino != b->ino || a->st_dev != b->st_dev);
	assert_true(dev_is_pat(a, 0, 256 * KiB, 0));   /* starts zeroed */
	for (i = 0; i < ARRAY_LEN(file_extents); i++)
		assert_int_equal(dev_write_pat(a, file_extents[i].off,
					       file_extents[i].len, (uint8_t)(i + 1)), 0);
	for (i = 0; i < ARRAY_LEN(file_extents); i++)
		assert_true(dev_is_pat(a, file_extents[i].off,
				       file_extents[i].len, (uint8_t)(i + 1)));
	assert_true(dev_is_pat(b, 0, 256 * KiB, 0));   /* no sharing */
	assert_int_equal(rc_dev_sync(a), 0);
	rc_dev_close(a);
	rc_dev_close(b);
}

static void test_mem_bounds(void **state)
{
	struct rc_dev *dev = mem_new(64 * KiB);

	bounds_check(dev);
	rc_dev_close(dev);
	assert_int_equal(rc_dev_mem_create(0, "m", &dev), -EINVAL);
	assert_null(dev);
}

/* Memory follows what was written: non-zero blocks only. */
static void test_mem_sparse(void **state)
{
	const uint64_t huge = 1ull << 50, far = huge - 3 * BLK;
	struct rc_dev *dev;
	uint8_t zeros[2 * BLK] = { 0 };

	assert_int_equal(rc_dev_mem_create(huge, "huge", &dev), 0);
	assert_int_equal(dev->size, huge);
	assert_int_equal(rc_dev_mem_blocks_held(dev), 0);
	assert_int_equal(dev_write_pat(dev, far, BLK, 1), 0);
	assert_int_equal(dev_write_pat(dev, 7 * BLK + 100, BLK, 2), 0);
	assert_int_equal(rc_dev_mem_blocks_held(dev), 3);
	assert_true(dev_is_pat(dev, far, BLK, 1));
	assert_true(dev_is_pat(dev, 7 * BLK + 100, BLK, 2));
	assert_true(dev_is_pat(dev, 7 * BLK, 100, 0));
	assert_true(dev_is_pat(dev, far - BLK, BLK, 0));
	/* Zeros written free what they cover whole... */
	assert_int_equal(rc_dev_write(dev, zeros, BLK, far), 0);
	assert_int_equal(rc_dev_mem_blocks_held(dev), 2);
	assert_int_equal(rc_dev_write(dev, zeros, 2 * BLK, 100 * BLK), 0);
	assert_int_equal(rc_dev_mem_blocks_held(dev), 2);
	/* ... and so does zeroing, while a block with data left stays. */
	assert_int_equal(rc_dev_zero(dev, 7 * BLK + 100, BLK - 100), 0);
	assert_int_equal(rc_dev_mem_blocks_held(dev), 1);
	assert_true(dev_is_pat(dev, 8 * BLK, 100, 2));
	assert_true(dev_is_pat(dev, 7 * BLK, BLK, 0));
	assert_int_equal(rc_dev_zero(dev, 0, huge), 0);
	assert_int_equal(rc_dev_mem_blocks_held(dev), 0);
	assert_int_equal(rc_dev_zero(dev, huge - 1, 2), -EINVAL);
	rc_dev_close(dev);
}

/* A stand-in looks like the device it stands for. */
static void test_mem_like(void **state)
{
	char path[PATH_MAX];
	struct rc_dev *real, *dev;

	tmp_file_create(path, sizeof(path), "real.img", 64 * KiB);
	assert_int_equal(rc_dev_open_file(path, RC_DEV_RDONLY, &real), 0);
	assert_int_equal(rc_dev_mem_create_like(real, 1ull << 40, &dev), 0);
	assert_int_equal(dev->size, 1ull << 40);
	assert_string_equal(dev->name, real->name);
	assert_true(dev->ino == real->ino && dev->st_dev == real->st_dev &&
		    dev->rdev == real->rdev);
	assert_int_equal(dev_write_pat(dev, 0, BLK, 3), 0);
	assert_true(dev_is_pat(real, 0, BLK, 0));       /* never touched */
	rc_dev_close(dev);
	rc_dev_close(real);
}

/* Two handles, one storage; it lives until the last handle goes. */
static void test_mem_share(void **state)
{
	struct rc_dev *a = mem_new(64 * KiB), *b, *w;
	struct rc_fault *f;

	assert_int_equal(rc_dev_mem_share(a, &b), 0);
	assert_ptr_not_equal(a, b);
	assert_int_equal(b->size, a->size);
	assert_string_equal(b->name, a->name);
	assert_true(b->ino == a->ino && b->st_dev == a->st_dev);
	assert_int_equal(dev_write_pat(a, BLK, BLK, 4), 0);
	assert_true(dev_is_pat(b, BLK, BLK, 4));
	assert_int_equal(dev_write_pat(b, 3 * BLK, 10, 5), 0);
	assert_true(dev_is_pat(a, 3 * BLK, 10, 5));
	rc_dev_close(a);
	assert_true(dev_is_pat(b, BLK, BLK, 4));
	assert_int_equal(rc_dev_mem_blocks_held(b), 2);
	/* Only memory devices share. */
	assert_int_equal(rc_fault_wrap(b, NULL, &w, &f), 0);
	assert_int_equal(rc_dev_mem_share(w, &a), -EINVAL);
	assert_null(a);
	assert_int_equal(rc_dev_mem_blocks_held(w), 0);
	rc_dev_close(w);
}

/* ---- fault rules: scripts against a shadow copy ----------------------------- */

#define SCRIPT_DEV (64 * KiB)

struct script_step {
	char op;               /* 'r' or 'w' */
	uint64_t off;
	uint32_t len;
	int expect;
};

struct eio_case {
	const char *name;
	unsigned op;
	uint64_t off, len;
	int count;
	struct script_step steps[12];
};

static const struct eio_case eio_cases[] = {
	{ "read, transient 2", RC_FAULT_READ, BLK, BLK, 2, {
		{ 'r', BLK, BLK, -EIO },
		{ 'w', BLK, BLK, 0 },          /* writes are not affected */
		{ 'r', 0, BLK, 0 },            /* before the range */
		{ 'r', 2 * BLK, BLK, 0 },      /* the end is exclusive */
		{ 'r', BLK, 0, 0 },            /* length 0 touches nothing */
		{ 'r', 0, 2 * BLK, -EIO },     /* touching part of it is enough */
		{ 'r', BLK, 1, 0 },            /* both hits are used up */
		{ 'r', BLK, BLK, 0 },
	} },
	{ "write, persistent", RC_FAULT_WRITE, 0, BLK, RC_FAULT_PERSISTENT, {
		{ 'w', 0, BLK, -EIO },
		{ 'w', 10, 1, -EIO },
		{ 'w', BLK - 1, 2, -EIO },
		{ 'r', 0, BLK, 0 },
		{ 'w', BLK, BLK, 0 },
		{ 'w', 0, 3 * BLK, -EIO },
		{ 'w', 0, BLK, -EIO },
	} },
	{ "both ops, one byte, transient 3", RC_FAULT_READ | RC_FAULT_WRITE,
	  2 * BLK, 1, 3, {
		{ 'r', 2 * BLK, BLK, -EIO },
		{ 'w', 0, 4 * BLK, -EIO },
		{ 'r', 2 * BLK + 1, 100, 0 },
		{ 'w', 2 * BLK - 10, 10, 0 },
		{ 'r', 2 * BLK - 10, 11, -EIO },
		{ 'w', 2 * BLK, 1, 0 },
		{ 'r', 2 * BLK, 1, 0 },
	} },
	{ "whole device, persistent", RC_FAULT_READ | RC_FAULT_WRITE, 0,
	  UINT64_MAX, RC_FAULT_PERSISTENT, {
		{ 'r', 0, 1, -EIO },
		{ 'w', SCRIPT_DEV - 1, 1, -EIO },
		{ 'r', 30 * KiB, 5 * KiB, -EIO },
		{ 'r', 30 * KiB, 0, 0 },
	} },
	{ "end of device, transient 1", RC_FAULT_READ,
	  SCRIPT_DEV - BLK, BLK, 1, {
		{ 'w', SCRIPT_DEV - BLK, BLK, 0 },
		{ 'r', SCRIPT_DEV, 1, -EINVAL },   /* bounds come first... */
		{ 'r', SCRIPT_DEV - 1, 1, -EIO },  /* ...and use no hit */
		{ 'r', SCRIPT_DEV - 1, 1, 0 },
	} },
};

/*
 * Runs steps on a fault device over mem, checking each result, that a
 * successful read returns the shadow, and that the media always equals the
 * shadow (a failed write stores nothing).
 */
static void script_run(struct rc_dev *dev, struct rc_dev *lower,
		       const struct script_step *steps, size_t nsteps)
{
	static uint8_t shadow[SCRIPT_DEV], media[SCRIPT_DEV], buf[SCRIPT_DEV];
	const struct script_step *s;
	size_t i;
	int err;

	assert_int_equal(rc_dev_read(lower, shadow, SCRIPT_DEV, 0), 0);
	for (i = 0; i < nsteps && steps[i].op; i++) {
		s = &steps[i];
		if (s->op == 'w') {
			pat_fill(buf, s->len, s->off, (uint8_t)(i + 1));
			err = rc_dev_write(dev, buf, s->len, s->off);
			if (!err)
				memcpy(shadow + s->off, buf, s->len);
		} else {
			err = rc_dev_read(dev, buf, s->len, s->off);
			if (!err)
				assert_memory_equal(buf, shadow + s->off, s->len);
		}
		if (err != s->expect)
			print_error("step %zu: got %d\n", i, err);
		assert_int_equal(err, s->expect);
		assert_int_equal(rc_dev_read(lower, media, SCRIPT_DEV, 0), 0);
		assert_memory_equal(media, shadow, SCRIPT_DEV);
	}
}

static void test_fault_eio(void **state)
{
	const struct eio_case *c;
	struct rc_dev *lower, *dev;
	struct rc_fault *f;
	size_t i;

	for (i = 0; i < ARRAY_LEN(eio_cases); i++) {
		c = &eio_cases[i];
		print_message("%s\n", c->name);
		lower = mem_new(SCRIPT_DEV);
		assert_int_equal(dev_write_pat(lower, 0, SCRIPT_DEV, 0x55), 0);
		assert_int_equal(rc_fault_wrap(lower, NULL, &dev, &f), 0);
		assert_int_equal(rc_fault_eio(f, c->op, c->off, c->len, c->count), 0);
		script_run(dev, lower, c->steps, ARRAY_LEN(c->steps));
		/* Cleared, the range works whatever hits were left. */
		rc_fault_clear(f);
		script_run(dev, lower, (const struct script_step[]){
			{ 'w', 0, SCRIPT_DEV, 0 }, { 'r', 0, SCRIPT_DEV, 0 } }, 2);
		rc_dev_close(dev);
	}
}

static void test_fault_bad_rules(void **state)
{
	struct rc_dev *lower = mem_new(SCRIPT_DEV), *dev;
	struct rc_fault *f;

	assert_int_equal(rc_fault_wrap(NULL, NULL, &dev, &f), -EINVAL);
	assert_int_equal(rc_fault_wrap(lower, NULL, &dev, &f), 0);
	assert_int_equal(rc_fault_eio(f, RC_FAULT_READ, 0, BLK, 0), -EINVAL);
	assert_int_equal(rc_fault_eio(f, RC_FAULT_READ, 0, BLK, -2), -EINVAL);
	assert_int_equal(rc_fault_eio(f, RC_FAULT_READ, 0, 0, 1), -EINVAL);
	assert_int_equal(rc_fault_eio(f, 0, 0, BLK, 1), -EINVAL);
	assert_int_equal(rc_fault_eio(f, 4, 0, BLK, 1), -EINVAL);
	assert_int_equal(rc_fault_flip_on_read(f, 0, BLK, 0), -EINVAL);
	assert_int_equal(rc_fault_lose_writes(f, 0, 0, 1), -EINVAL);
	/* None of them was added. */
	script_run(dev, lower, (const struct script_step[]){
		{ 'w', 0, SCRIPT_DEV, 0 }, { 'r', 0, SCRIPT_DEV, 0 } }, 2);
	rc_dev_close(dev);
}

/* The wrapper is the lower device as far as identity goes. */
static void test_fault_identity(void **state)
{
	char path[PATH_MAX];
	struct rc_dev *lower, *dev;
	struct rc_fault *f;

	tmp_file_create(path, sizeof(path), "ident.img", 64 * KiB);
	assert_int_equal(rc_dev_open_file(path, 0, &lower), 0);
	assert_int_equal(rc_fault_wrap(lower, NULL, &dev, NULL), 0);
	assert_ptr_not_equal(dev, lower);
	assert_int_equal(dev->size, lower->size);
	assert_string_equal(dev->name, lower->name);
	assert_true(dev->ino == lower->ino && dev->st_dev == lower->st_dev &&
		    dev->rdev == lower->rdev);
	rc_dev_close(dev);

	/* And a clean wrapper is transparent, bounds included. */
	assert_int_equal(rc_dev_mem_create(64 * KiB, "m", &lower), 0);
	assert_int_equal(rc_fault_wrap(lower, NULL, &dev, &f), 0);
	bounds_check(dev);
	rc_dev_close(dev);
}

struct flip_case {
	const char *name;
	uint64_t rule_off, rule_len;
	int count;
	uint64_t read_off;
	uint32_t read_len;
	int reads;                 /* how many times the read is repeated */
	int flipped_reads;         /* how many of them return corrupt data */
	uint32_t bits_per_read;    /* = 4 KiB blocks where read meets rule */
};

static const struct flip_case flip_cases[] = {
	{ "one block, transient 2", BLK, BLK, 2, BLK, BLK, 4, 2, 1 },
	{ "read around the rule", BLK, BLK, 1, 0, 4 * BLK, 2, 1, 1 },
	{ "four blocks, persistent", 0, 16 * BLK, RC_FAULT_PERSISTENT,
	  2 * BLK, 4 * BLK, 3, 3, 4 },
	{ "unaligned read", 0, 16 * BLK, 1, 100, 2 * BLK, 2, 1, 3 },
	{ "partial block rule", BLK + 10, 20, 1, BLK, BLK, 1, 1, 1 },
	{ "outside the rule", 8 * BLK, BLK, 1, 0, 8 * BLK, 3, 0, 0 },
};

/* The flipped bits lie inside the rule and the read, one per block. */
static void flip_check(const struct flip_case *c, const uint8_t *got,
		       const uint8_t *want)
{
	uint64_t pos, blk_bits[SCRIPT_DEV / BLK] = { 0 };
	uint32_t i, total = 0;

	for (i = 0; i < c->read_len; i++) {
		if (got[i] == want[i])
			continue;
		pos = c->read_off + i;
		assert_true(pos >= c->rule_off && pos < c->rule_off + c->rule_len);
		blk_bits[pos / BLK] += (uint64_t)__builtin_popcount(got[i] ^ want[i]);
	}
	for (i = 0; i < ARRAY_LEN(blk_bits); i++) {
		assert_true(blk_bits[i] <= 1);
		total += (uint32_t)blk_bits[i];
	}
	assert_int_equal(total, c->bits_per_read);
}

static void test_fault_flip_on_read(void **state)
{
	static uint8_t got[SCRIPT_DEV], want[SCRIPT_DEV];
	const struct flip_case *c;
	struct rc_dev *lower, *dev;
	struct rc_fault *f;
	int r, flipped;
	size_t i;

	for (i = 0; i < ARRAY_LEN(flip_cases); i++) {
		c = &flip_cases[i];
		print_message("%s\n", c->name);
		lower = mem_new(SCRIPT_DEV);
		assert_int_equal(dev_write_pat(lower, 0, SCRIPT_DEV, 0x33), 0);
		assert_int_equal(rc_fault_wrap(lower, NULL, &dev, &f), 0);
		assert_int_equal(rc_fault_flip_on_read(f, c->rule_off, c->rule_len,
						       c->count), 0);
		pat_fill(want, c->read_len, c->read_off, 0x33);
		for (r = 0, flipped = 0; r < c->reads; r++) {
			assert_int_equal(rc_dev_read(dev, got, c->read_len,
						     c->read_off), 0);
			if (memcmp(got, want, c->read_len) != 0) {
				flip_check(c, got, want);
				flipped++;
			}
		}
		assert_int_equal(flipped, c->flipped_reads);
		/* The media was never touched. */
		assert_true(dev_is_pat(lower, 0, SCRIPT_DEV, 0x33));
		rc_dev_close(dev);
	}
}

/* Two rules over one block flip one bit there, not two (or zero). */
static void test_fault_flip_overlapping_rules(void **state)
{
	struct rc_dev *lower = mem_new(SCRIPT_DEV), *dev;
	uint8_t got[BLK], want[BLK];
	struct rc_fault *f;

	assert_int_equal(rc_fault_wrap(lower, NULL, &dev, &f), 0);
	assert_int_equal(rc_fault_flip_on_read(f, 0, BLK, 1), 0);
	assert_int_equal(rc_fault_flip_on_read(f, 0, BLK, 1), 0);
	memset(want, 0, sizeof(want));
	assert_int_equal(rc_dev_read(dev, got, BLK, 0), 0);
	assert_int_equal(bits_differ(got, want, BLK), 1);
	/* Both fired, both are spent. */
	assert_int_equal(rc_dev_read(dev, got, BLK, 0), 0);
	assert_int_equal(bits_differ(got, want, BLK), 0);
	rc_dev_close(dev);
}

static void test_fault_lose_writes(void **state)
{
	struct rc_dev *lower = mem_new(SCRIPT_DEV), *dev;
	struct rc_fault *f;

	assert_int_equal(dev_write_pat(lower, 0, SCRIPT_DEV, 1), 0);
	assert_int_equal(rc_fault_wrap(lower, NULL, &dev, &f), 0);
	assert_int_equal(rc_fault_lose_writes(f, BLK, BLK, 1), 0);
	assert_int_equal(rc_fault_lose_writes(f, 8 * BLK, 2 * BLK,
					      RC_FAULT_PERSISTENT), 0);

	/* A write around the transient range: acknowledged, the range keeps
	 * its old data, the rest is stored. */
	assert_int_equal(dev_write_pat(dev, 0, 3 * BLK, 2), 0);
	assert_true(dev_is_pat(lower, 0, BLK, 2));
	assert_true(dev_is_pat(lower, BLK, BLK, 1));
	assert_true(dev_is_pat(lower, 2 * BLK, BLK, 2));
	assert_true(dev_is_pat(dev, BLK, BLK, 1));      /* the reader agrees */
	/* Its one hit is spent. */
	assert_int_equal(dev_write_pat(dev, BLK, BLK, 3), 0);
	assert_true(dev_is_pat(lower, BLK, BLK, 3));

	/* The persistent range loses every write, whole or partial. */
	assert_int_equal(dev_write_pat(dev, 8 * BLK, 2 * BLK, 4), 0);
	assert_int_equal(dev_write_pat(dev, 9 * BLK + 5, 100, 4), 0);
	assert_int_equal(dev_write_pat(dev, 7 * BLK, 4 * BLK, 4), 0);
	assert_true(dev_is_pat(lower, 7 * BLK, BLK, 4));
	assert_true(dev_is_pat(lower, 8 * BLK, 2 * BLK, 1));
	assert_true(dev_is_pat(lower, 10 * BLK, BLK, 4));
	/* Untouched elsewhere. */
	assert_true(dev_is_pat(lower, 3 * BLK, 4 * BLK, 1));
	assert_true(dev_is_pat(lower, 11 * BLK, SCRIPT_DEV - 11 * BLK, 1));
	assert_int_equal(rc_fault_writes(f), 5);
	rc_fault_clear(f);
	assert_int_equal(dev_write_pat(dev, 8 * BLK, 2 * BLK, 5), 0);
	assert_true(dev_is_pat(lower, 8 * BLK, 2 * BLK, 5));
	rc_dev_close(dev);
}

struct corrupt_case {
	uint64_t off, len;
	int nbits;
	uint64_t seed;
};

static const struct corrupt_case corrupt_cases[] = {
	{ 0, SCRIPT_DEV, 1, 1 },
	{ 1000, 5000, 17, 2 },
	{ 3 * BLK, BLK, 300, 3 },
	{ 100, 2, 16, 4 },                     /* every bit */
	{ SCRIPT_DEV - 1, 1, 8, 5 },
	{ 5 * BLK + 7, 9 * BLK, 1000, 6 },
};

/* Applies c to a fresh device of tag 0x5a; returns the media. */
static void corrupt_apply(const struct corrupt_case *c, uint8_t *media)
{
	static uint8_t seen[SCRIPT_DEV];
	struct rc_dev *lower = mem_new(SCRIPT_DEV), *dev;
	struct rc_fault *f;

	assert_int_equal(dev_write_pat(lower, 0, SCRIPT_DEV, 0x5a), 0);
	assert_int_equal(rc_fault_wrap(lower, NULL, &dev, &f), 0);
	assert_int_equal(rc_fault_corrupt(f, c->off, c->len, c->nbits, c->seed), 0);
	assert_int_equal(rc_dev_read(lower, media, SCRIPT_DEV, 0), 0);
	/* It is on the media, so readers of the device see it, and it is not
	 * an operation of the device. */
	assert_int_equal(rc_dev_read(dev, seen, SCRIPT_DEV, 0), 0);
	assert_memory_equal(seen, media, SCRIPT_DEV);
	assert_int_equal(rc_fault_reads(f), 1);
	assert_int_equal(rc_fault_writes(f), 0);
	rc_dev_close(dev);
}

static void test_fault_corrupt(void **state)
{
	static uint8_t want[SCRIPT_DEV], got[SCRIPT_DEV], again[SCRIPT_DEV];
	const struct corrupt_case *c;
	struct corrupt_case other;
	size_t i;

	pat_fill(want, SCRIPT_DEV, 0, 0x5a);
	for (i = 0; i < ARRAY_LEN(corrupt_cases); i++) {
		c = &corrupt_cases[i];
		corrupt_apply(c, got);
		assert_int_equal(bits_differ(got, want, SCRIPT_DEV), c->nbits);
		/* Outside the range nothing changed. */
		assert_memory_equal(got, want, c->off);
		assert_memory_equal(got + c->off + c->len, want + c->off + c->len,
				    SCRIPT_DEV - c->off - c->len);
		/* The seed decides everything. */
		corrupt_apply(c, again);
		assert_memory_equal(got, again, SCRIPT_DEV);
		if ((uint64_t)c->nbits < c->len * 8) {
			other = *c;
			other.seed = c->seed + 1000;
			corrupt_apply(&other, again);
			assert_memory_not_equal(got, again, SCRIPT_DEV);
		}
	}
}

static void test_fault_corrupt_bad(void **state)
{
	struct rc_dev *lower = mem_new(SCRIPT_DEV), *dev;
	struct rc_fault *f;

	assert_int_equal(rc_fault_wrap(lower, NULL, &dev, &f), 0);
	assert_int_equal(rc_fault_corrupt(f, 0, 2, 17, 1), -EINVAL);
	assert_int_equal(rc_fault_corrupt(f, SCRIPT_DEV - 1, 2, 1, 1), -EINVAL);
	assert_int_equal(rc_fault_corrupt(f, 0, BLK, -1, 1), -EINVAL);
	assert_int_equal(rc_fault_corrupt(f, 0, BLK, 0, 1), 0);
	assert_true(dev_is_pat(lower, 0, SCRIPT_DEV, 0));
	rc_dev_close(dev);
}

static void test_fault_vanish_and_counters(void **state)
{
	struct rc_dev *lower = mem_new(SCRIPT_DEV), *dev;
	struct rc_fault *f;
	uint8_t buf[BLK];

	assert_int_equal(rc_fault_wrap(lower, NULL, &dev, &f), 0);
	assert_int_equal(dev_write_pat(dev, 0, BLK, 1), 0);
	assert_int_equal(rc_dev_read(dev, buf, BLK, 0), 0);
	assert_int_equal(rc_dev_sync(dev), 0);
	rc_fault_vanish(f);
	assert_int_equal(rc_dev_read(dev, buf, BLK, 0), -ENXIO);
	assert_int_equal(dev_write_pat(dev, 0, BLK, 2), -ENXIO);
	assert_int_equal(rc_dev_sync(dev), -ENXIO);
	assert_int_equal(rc_dev_read(dev, buf, 1, SCRIPT_DEV - 1), -ENXIO);
	assert_true(dev_is_pat(lower, 0, BLK, 1));
	/* Every call counts, failed or not. */
	assert_int_equal(rc_fault_reads(f), 3);
	assert_int_equal(rc_fault_writes(f), 2);
	assert_int_equal(rc_fault_syncs(f), 2);
	rc_fault_clear(f);
	assert_true(dev_is_pat(dev, 0, BLK, 1));
	assert_int_equal(rc_dev_sync(dev), 0);
	assert_int_equal(rc_fault_reads(f), 4);
	assert_int_equal(rc_fault_syncs(f), 3);
	rc_dev_close(dev);
}

/* A shrunk device keeps dev->size, says its new size, fails past it. */
static void test_fault_shrink(void **state)
{
	struct rc_dev *lower = mem_new(SCRIPT_DEV), *dev;
	struct rc_fault *f;
	uint8_t buf[BLK];
	uint64_t now;

	assert_int_equal(rc_fault_wrap(lower, NULL, &dev, &f), 0);
	assert_int_equal(rc_dev_size_now(dev, &now), 0);
	assert_int_equal(now, SCRIPT_DEV);
	rc_fault_shrink(f, 4 * BLK);
	assert_int_equal(rc_dev_size_now(dev, &now), 0);
	assert_int_equal(now, 4 * BLK);
	assert_int_equal(dev->size, SCRIPT_DEV);
	assert_int_equal(rc_dev_read(dev, buf, BLK, 3 * BLK), 0);
	assert_int_equal(rc_dev_read(dev, buf, BLK, 4 * BLK), -EIO);
	assert_int_equal(rc_dev_read(dev, buf, 2, 4 * BLK - 1), -EIO);
	assert_int_equal(dev_write_pat(dev, 4 * BLK, BLK, 1), -EIO);
	assert_int_equal(dev_write_pat(dev, 0, BLK, 1), 0);
	rc_fault_clear(f);
	assert_int_equal(rc_dev_size_now(dev, &now), 0);
	assert_int_equal(now, SCRIPT_DEV);
	assert_int_equal(rc_dev_read(dev, buf, BLK, 4 * BLK), 0);
	rc_dev_close(dev);
}

/* A swapped device answers from the other one, and closes both. */
static void test_fault_swap(void **state)
{
	struct rc_dev *lower = mem_new(SCRIPT_DEV), *other = mem_new(SCRIPT_DEV);
	struct rc_dev *small = mem_new(BLK), *dev;
	struct rc_fault *f;

	assert_int_equal(rc_fault_wrap(lower, NULL, &dev, &f), 0);
	assert_int_equal(dev_write_pat(dev, 0, 2 * BLK, 1), 0);
	assert_int_equal(dev_write_pat(other, 0, 2 * BLK, 2), 0);
	assert_int_equal(rc_fault_swap(f, small), -EINVAL);
	rc_dev_close(small);
	assert_int_equal(rc_fault_swap(f, other), 0);
	assert_int_equal(rc_fault_swap(f, other), -EBUSY);
	assert_true(dev_is_pat(dev, 0, 2 * BLK, 2));
	assert_int_equal(dev_write_pat(dev, 0, BLK, 3), 0);
	assert_true(dev_is_pat(other, 0, BLK, 3));
	assert_true(dev_is_pat(lower, 0, 2 * BLK, 1));
	assert_int_equal(rc_fault_corrupt(f, 0, BLK, 8, 1), 0);
	assert_false(dev_is_pat(other, 0, BLK, 3));
	assert_true(dev_is_pat(lower, 0, 2 * BLK, 1));
	assert_string_equal(dev->name, lower->name);
	rc_dev_close(dev);
}

/* ---- power ------------------------------------------------------------------ */

struct domain_dev {
	struct rc_dev *lower, *dev;
	struct rc_fault *f;
};

static void domain_dev_new(struct domain_dev *d, struct rc_power *p,
			   uint64_t size)
{
	d->lower = mem_new(size);
	assert_int_equal(rc_fault_wrap(d->lower, p, &d->dev, &d->f), 0);
}

static void test_power_cache_until_sync(void **state)
{
	struct rc_power *p = rc_power_create(RC_POWER_DROP, 1);
	struct domain_dev d;

	assert_non_null(p);
	domain_dev_new(&d, p, SCRIPT_DEV);
	assert_int_equal(dev_write_pat(d.dev, BLK, BLK, 1), 0);
	assert_int_equal(dev_write_pat(d.dev, BLK + 1000, 2 * BLK, 2), 0);
	assert_int_equal(rc_power_writes(p), 2);
	/* The media has none of it; the device has all of it, newest on top. */
	assert_true(dev_is_pat(d.lower, 0, SCRIPT_DEV, 0));
	assert_true(dev_is_pat(d.dev, BLK, 1000, 1));
	assert_true(dev_is_pat(d.dev, BLK + 1000, 2 * BLK, 2));
	assert_true(dev_is_pat(d.dev, 3 * BLK + 1000, BLK, 0));
	assert_int_equal(rc_dev_sync(d.dev), 0);
	assert_true(dev_is_pat(d.lower, BLK, 1000, 1));
	assert_true(dev_is_pat(d.lower, BLK + 1000, 2 * BLK, 2));
	assert_true(dev_is_pat(d.lower, 0, BLK, 0));
	assert_false(rc_power_is_off(p));
	rc_dev_close(d.dev);
	rc_power_destroy(p);
}

/* A cut across two devices; each row is a write, a sync, or the cut. */
static void test_power_cut_after_two_devices(void **state)
{
	struct rc_power *p = rc_power_create(RC_POWER_DROP, 1);
	struct domain_dev a, b;
	uint8_t buf[BLK];
	int i;

	domain_dev_new(&a, p, SCRIPT_DEV);
	domain_dev_new(&b, p, SCRIPT_DEV);
	assert_int_equal(dev_write_pat(a.dev, 0, BLK, 1), 0);
	assert_int_equal(dev_write_pat(b.dev, 0, BLK, 1), 0);
	assert_int_equal(rc_dev_sync(a.dev), 0);
	assert_int_equal(rc_dev_sync(b.dev), 0);
	/* Arming and disarming changes nothing. */
	rc_power_cut_after(p, 1);
	rc_power_cut_after(p, 0);
	assert_int_equal(dev_write_pat(a.dev, 2 * BLK, BLK, 2), 0);
	assert_int_equal(rc_power_writes(p), 3);

	rc_power_cut_after(p, 3);
	assert_int_equal(dev_write_pat(a.dev, 3 * BLK, BLK, 3), 0);   /* 1st */
	assert_int_equal(dev_write_pat(b.dev, 3 * BLK, BLK, 3), 0);   /* 2nd */
	assert_false(rc_power_is_off(p));
	assert_int_equal(dev_write_pat(b.dev, 4 * BLK, BLK, 3), -EIO);/* 3rd */
	assert_true(rc_power_is_off(p));
	assert_int_equal(rc_power_writes(p), 6);

	/* The media holds exactly what was synced. */
	assert_true(dev_is_pat(a.lower, 0, BLK, 1));
	assert_true(dev_is_pat(b.lower, 0, BLK, 1));
	assert_true(dev_is_pat(a.lower, BLK, SCRIPT_DEV - BLK, 0));
	assert_true(dev_is_pat(b.lower, BLK, SCRIPT_DEV - BLK, 0));
	/* And nothing works any more, on either device. */
	for (i = 0; i < 2; i++) {
		struct rc_dev *dev = i ? b.dev : a.dev;

		assert_int_equal(rc_dev_read(dev, buf, BLK, 0), -EIO);
		assert_int_equal(dev_write_pat(dev, 0, BLK, 4), -EIO);
		assert_int_equal(rc_dev_sync(dev), -EIO);
	}
	assert_int_equal(rc_power_writes(p), 6);
	assert_true(dev_is_pat(a.lower, BLK, SCRIPT_DEV - BLK, 0));
	rc_power_destroy(p);     /* before the devices: they keep it alive */
	rc_dev_close(a.dev);
	rc_dev_close(b.dev);
}

static void test_power_cut_now(void **state)
{
	struct rc_power *p = rc_power_create(RC_POWER_DROP, 1);
	struct domain_dev d;

	domain_dev_new(&d, p, SCRIPT_DEV);
	assert_int_equal(dev_write_pat(d.dev, 0, BLK, 1), 0);
	assert_int_equal(rc_dev_sync(d.dev), 0);
	assert_int_equal(dev_write_pat(d.dev, 0, 2 * BLK, 2), 0);
	rc_power_cut(p);
	assert_true(rc_power_is_off(p));
	assert_true(dev_is_pat(d.lower, 0, BLK, 1));
	assert_true(dev_is_pat(d.lower, BLK, BLK, 0));
	assert_int_equal(dev_write_pat(d.dev, 0, BLK, 3), -EIO);
	rc_power_cut(p);        /* again: harmless */
	rc_dev_close(d.dev);
	rc_power_destroy(p);
}

#define REORDER_WRITES 64
#define REORDER_DEV (REORDER_WRITES * 16 * KiB)

/* Non-overlapping, unaligned writes of 1 to 3 pieces each. */
static void reorder_extent(int i, uint64_t *off, size_t *len)
{
	*off = (uint64_t)i * 16 * KiB + ((uint64_t)i * 517) % BLK;
	*len = BLK + ((size_t)i * 1231) % (2 * BLK);
}

/*
 * Writes REORDER_WRITES extents of tag 2 over tag 1 media, syncs the first
 * 8, cuts, and records per piece whether it survived; each piece must be
 * wholly old or wholly new.  Counts the unsynced pieces kept and the writes
 * that were kept in part.  Returns the number of pieces.
 */
static int reorder_run(uint64_t seed, bool *kept, int *nkept, int *nsplit)
{
	struct rc_power *p = rc_power_create(RC_POWER_REORDER, seed);
	static uint8_t media[REORDER_DEV];
	uint64_t off, s, e, end;
	struct domain_dev d;
	int i, n = 0, first;
	size_t len;

	domain_dev_new(&d, p, REORDER_DEV);
	assert_int_equal(dev_write_pat(d.lower, 0, REORDER_DEV, 1), 0);
	for (i = 0; i < REORDER_WRITES; i++) {
		reorder_extent(i, &off, &len);
		assert_int_equal(dev_write_pat(d.dev, off, len, 2), 0);
		if (i == 7)
			assert_int_equal(rc_dev_sync(d.dev), 0);
	}
	rc_power_cut(p);
	assert_int_equal(rc_dev_read(d.lower, media, REORDER_DEV, 0), 0);
	*nkept = *nsplit = 0;
	for (i = 0; i < REORDER_WRITES; i++) {
		reorder_extent(i, &off, &len);
		end = off + len;
		first = n;
		for (s = off; s < end; s = e, n++) {
			e = (s / BLK + 1) * BLK < end ? (s / BLK + 1) * BLK : end;
			kept[n] = pat_is(media + s, e - s, s, 2);
			assert_true(kept[n] || pat_is(media + s, e - s, s, 1));
			if (i < 8)
				assert_true(kept[n]);
			else
				*nkept += kept[n];
			*nsplit += n > first && kept[n] != kept[first] &&
				   kept[n - 1] == kept[first];
		}
		/* Between the writes the media was never touched. */
		e = (uint64_t)(i + 1) * 16 * KiB;
		assert_true(pat_is(media + end, e - end, end, 1));
	}
	rc_dev_close(d.dev);
	rc_power_destroy(p);
	return n;
}

static void test_power_reorder(void **state)
{
	bool kept[REORDER_WRITES * 3], again[REORDER_WRITES * 3];
	int i, n, nkept, nkept2, nsplit, nsplit2, unsynced;
	uint64_t off;
	size_t len;

	n = reorder_run(42, kept, &nkept, &nsplit);
	assert_int_equal(reorder_run(42, again, &nkept2, &nsplit2), n);
	unsynced = n;
	for (i = 0; i < 8; i++) {
		reorder_extent(i, &off, &len);
		unsynced -= (int)((off + len - 1) / BLK - off / BLK + 1);
	}
	print_message("pieces %d, unsynced %d, kept %d, writes kept in part %d\n",
		      n, unsynced, nkept, nsplit);
	assert_true(nkept > 0 && nkept < unsynced);
	/* Pieces, not writes, are the unit: some writes survive in part. */
	assert_true(nsplit > 0);
	/* The seed decides which. */
	assert_int_equal(nkept2, nkept);
	assert_memory_equal(kept, again, (size_t)n * sizeof(bool));
	reorder_run(43, again, &nkept2, &nsplit2);
	assert_memory_not_equal(kept, again, (size_t)n * sizeof(bool));
}

/* Closing with the power on writes the cache back; with it off, not. */
static void test_power_close(void **state)
{
	char path[PATH_MAX];
	struct rc_power *p;
	struct rc_dev *lower, *dev;
	int off;

	tmp_file_create(path, sizeof(path), "power.img", 64 * KiB);
	for (off = 0; off < 2; off++) {
		p = rc_power_create(RC_POWER_DROP, 9);
		assert_int_equal(rc_dev_open_file(path, 0, &lower), 0);
		assert_int_equal(rc_fault_wrap(lower, p, &dev, NULL), 0);
		assert_int_equal(dev_write_pat(dev, (uint64_t)off * BLK, BLK, 1), 0);
		assert_true(dev_is_pat(lower, (uint64_t)off * BLK, BLK, 0));
		if (off)
			rc_power_cut(p);
		rc_dev_close(dev);
		rc_power_destroy(p);
	}
	assert_int_equal(rc_dev_open_file(path, RC_DEV_RDONLY, &dev), 0);
	assert_true(dev_is_pat(dev, 0, BLK, 1));
	assert_true(dev_is_pat(dev, BLK, BLK, 0));
	rc_dev_close(dev);
}

/* Rules and power together: a lost write is counted but never cached. */
static void test_power_with_rules(void **state)
{
	struct rc_power *p = rc_power_create(RC_POWER_DROP, 1);
	struct domain_dev d;

	domain_dev_new(&d, p, SCRIPT_DEV);
	assert_int_equal(rc_fault_lose_writes(d.f, 0, BLK, 1), 0);
	assert_int_equal(rc_fault_eio(d.f, RC_FAULT_WRITE, 4 * BLK, BLK, 1), 0);
	assert_int_equal(dev_write_pat(d.dev, 0, 2 * BLK, 1), 0);
	assert_int_equal(dev_write_pat(d.dev, 4 * BLK, BLK, 1), -EIO);
	assert_int_equal(rc_power_writes(p), 1);
	assert_true(dev_is_pat(d.dev, 0, BLK, 0));
	assert_true(dev_is_pat(d.dev, BLK, BLK, 1));
	assert_int_equal(rc_dev_sync(d.dev), 0);
	assert_true(dev_is_pat(d.lower, 0, BLK, 0));
	assert_true(dev_is_pat(d.lower, BLK, BLK, 1));
	rc_fault_vanish(d.f);
	rc_power_cut(p);
	assert_int_equal(rc_dev_sync(d.dev), -ENXIO);   /* vanish comes first */
	rc_dev_close(d.dev);
	rc_power_destroy(p);
}

/* A write limit: the crossing write torn, later ones refused, the rest on. */
static void test_power_write_limit(void **state)
{
	struct rc_power *p = rc_power_create(RC_POWER_DROP, 1);
	struct domain_dev d;
	uint8_t buf[BLK];

	domain_dev_new(&d, p, SCRIPT_DEV);
	assert_int_equal(dev_write_pat(d.dev, 0, BLK, 1), 0);
	assert_int_equal(rc_dev_sync(d.dev), 0);
	rc_power_write_limit(p, 3);
	assert_int_equal(dev_write_pat(d.dev, BLK, 2 * BLK, 2), 0);
	assert_int_equal(dev_write_pat(d.dev, 4 * BLK, 3 * BLK, 3), -EIO);
	assert_int_equal(dev_write_pat(d.dev, 8 * BLK, BLK, 4), -EIO);
	assert_int_equal(rc_fault_bytes_written(d.f), 4 * BLK);
	assert_int_equal(rc_fault_writes(d.f), 4);
	/* Reads see what was taken; the torn write kept its first block. */
	assert_true(dev_is_pat(d.dev, BLK, 2 * BLK, 2));
	assert_true(dev_is_pat(d.dev, 4 * BLK, BLK, 3));
	assert_true(dev_is_pat(d.dev, 5 * BLK, 4 * BLK, 0));
	/* A sync still makes it durable; the cut then loses nothing more. */
	assert_int_equal(rc_dev_sync(d.dev), 0);
	assert_true(dev_is_pat(d.lower, 4 * BLK, BLK, 3));
	rc_power_cut(p);
	assert_true(dev_is_pat(d.lower, 0, BLK, 1));
	assert_true(dev_is_pat(d.lower, BLK, 2 * BLK, 2));
	assert_true(dev_is_pat(d.lower, 5 * BLK, 4 * BLK, 0));
	assert_int_equal(rc_dev_read(d.dev, buf, BLK, 0), -EIO);
	rc_dev_close(d.dev);
	rc_power_destroy(p);

	/* Unsynced writes before the limit go with the cut; -1 lifts it. */
	p = rc_power_create(RC_POWER_DROP, 1);
	domain_dev_new(&d, p, SCRIPT_DEV);
	rc_power_write_limit(p, 0);
	assert_int_equal(dev_write_pat(d.dev, 0, BLK, 1), -EIO);
	rc_power_write_limit(p, -1);
	assert_int_equal(dev_write_pat(d.dev, 0, BLK, 2), 0);
	assert_int_equal(rc_fault_bytes_written(d.f), BLK);
	rc_power_cut(p);
	assert_true(dev_is_pat(d.lower, 0, SCRIPT_DEV, 0));
	rc_dev_close(d.dev);
	rc_power_destroy(p);
}

/* ---- threads ---------------------------------------------------------------- */

#define THREADS 4
#define THREAD_BLOCKS 128

struct thread_arg {
	struct rc_dev *dev;
	int idx;
	int errors;
};

static void *thread_main(void *p)
{
	struct thread_arg *t = p;
	uint64_t base = (uint64_t)t->idx * THREAD_BLOCKS * BLK, off;
	uint8_t buf[BLK];
	int b;

	for (b = 0; b < THREAD_BLOCKS; b++) {
		off = base + (uint64_t)b * BLK;
		pat_fill(buf, BLK, off, (uint8_t)(t->idx + 1));
		t->errors += rc_dev_write(t->dev, buf, BLK, off) != 0;
		t->errors += rc_dev_read(t->dev, buf, BLK, off) != 0;
		t->errors += !pat_is(buf, BLK, off, (uint8_t)(t->idx + 1));
		if (b % 16 == 15)
			t->errors += rc_dev_sync(t->dev) != 0;
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct thread_arg args[THREADS];
	pthread_t tids[THREADS];
	struct rc_power *p;
	struct domain_dev d;
	int i, with_power;

	for (with_power = 0; with_power < 2; with_power++) {
		p = with_power ? rc_power_create(RC_POWER_DROP, 3) : NULL;
		domain_dev_new(&d, p, THREADS * THREAD_BLOCKS * BLK);
		for (i = 0; i < THREADS; i++) {
			args[i] = (struct thread_arg){ d.dev, i, 0 };
			assert_int_equal(pthread_create(&tids[i], NULL, thread_main,
							&args[i]), 0);
		}
		for (i = 0; i < THREADS; i++) {
			assert_int_equal(pthread_join(tids[i], NULL), 0);
			assert_int_equal(args[i].errors, 0);
		}
		assert_int_equal(rc_fault_writes(d.f), THREADS * THREAD_BLOCKS);
		assert_int_equal(rc_fault_reads(d.f), THREADS * THREAD_BLOCKS);
		if (p)
			assert_int_equal(rc_power_writes(p), THREADS * THREAD_BLOCKS);
		for (i = 0; i < THREADS; i++)
			assert_true(dev_is_pat(d.lower,
					       (uint64_t)i * THREAD_BLOCKS * BLK,
					       THREAD_BLOCKS * BLK, (uint8_t)(i + 1)));
		rc_dev_close(d.dev);
		rc_power_destroy(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_roundtrip),
		cmocka_unit_test(test_file_readv),
		cmocka_unit_test(test_file_lock),
		cmocka_unit_test(test_zero_range),
		cmocka_unit_test(test_file_bounds),
		cmocka_unit_test(test_file_rdonly),
		cmocka_unit_test(test_file_refused),
		cmocka_unit_test(test_file_truncated_reads_zeros),
		cmocka_unit_test(test_file_size_now),
		cmocka_unit_test_setup_teardown(test_blockdev_excl, loop_setup,
						loop_teardown),
		cmocka_unit_test_setup_teardown(test_blockdev_reads_media,
						loop_setup, loop_teardown),
		cmocka_unit_test(test_mem_roundtrip),
		cmocka_unit_test(test_mem_bounds),
		cmocka_unit_test(test_mem_sparse),
		cmocka_unit_test(test_mem_like),
		cmocka_unit_test(test_mem_share),
		cmocka_unit_test(test_fault_eio),
		cmocka_unit_test(test_fault_bad_rules),
		cmocka_unit_test(test_fault_identity),
		cmocka_unit_test(test_fault_flip_on_read),
		cmocka_unit_test(test_fault_flip_overlapping_rules),
		cmocka_unit_test(test_fault_lose_writes),
		cmocka_unit_test(test_fault_corrupt),
		cmocka_unit_test(test_fault_corrupt_bad),
		cmocka_unit_test(test_fault_vanish_and_counters),
		cmocka_unit_test(test_fault_shrink),
		cmocka_unit_test(test_fault_swap),
		cmocka_unit_test(test_power_cache_until_sync),
		cmocka_unit_test(test_power_cut_after_two_devices),
		cmocka_unit_test(test_power_cut_now),
		cmocka_unit_test(test_power_reorder),
		cmocka_unit_test(test_power_close),
		cmocka_unit_test(test_power_with_rules),
		cmocka_unit_test(test_power_write_limit),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
