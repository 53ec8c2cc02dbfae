/*
 * fs_test_util: helpers shared by the tests/unit/test_fs_*.c programs
 * (header-only so that other areas' tests do not link them).
 *
 * The device: a sparse memory device (t->mem, the media) seen through the
 * fault wrapper in a power domain of its own (t->power, t->fault), adapted
 * by fs_bdev_from_dev (t->bdev).  The domain's volatile cache makes every
 * write since the last flush losable:
 *   tfs_record(t)            from here on (what was written is made durable)
 *   tfs_write_limit(t, n)    writes fail after n more blocks, the one that
 *                            crosses the limit torn; reads and flushes go on
 *   tfs_crash(t)             the power cut: unflushed writes are lost; the
 *                            device comes back (a new domain over the same
 *                            media) with no limit
 *   tfs_stats(t, ...)        blocks written, write calls, flushes
 */
#ifndef FS_TEST_UTIL_H
#define FS_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include <fcntl.h>
#include <errno.h>
#include <sys/sysmacros.h>
#include <cmocka.h>
#include "fs.h"
#include "bdev.h"
#include "raidcore.h"
#include "rc_fault.h"

struct tfs {
	struct fs_bdev *bdev;
	struct rc_dev *mem;             /* the media */
	struct rc_power *power;         /* t->bdev's power domain */
	struct rc_fault *fault;         /* t->bdev's wrapper */
	struct rc_dev *dev;             /* the wrapper, owned by t->bdev */
	uint32_t stripe;
	struct fs *fs;
	struct fs_ctx ctx;
	bool damaged;           /* the test broke it on purpose: no fs_check */
};

/* A fresh power domain and wrapper over t->mem, and t->bdev over them. */
static inline void tfs_dev_attach(struct tfs *t)
{
	struct rc_dev *view;

	t->power = rc_power_create(RC_POWER_DROP, 1);
	assert_non_null(t->power);
	assert_int_equal(rc_dev_mem_share(t->mem, &view), 0);
	assert_int_equal(rc_fault_wrap(view, t->power, &t->dev, &t->fault), 0);
	assert_int_equal(fs_bdev_from_dev(t->dev, t->stripe, &t->bdev), 0);
}

static inline void tfs_dev_detach(struct tfs *t)
{
	fs_bdev_close(t->bdev);
	rc_power_destroy(t->power);
	t->bdev = NULL;
	t->power = NULL;
	t->fault = NULL;
	t->dev = NULL;
}

/* A zero-filled device of blocks 4 KiB blocks, stripe blocks wide. */
static inline void tfs_dev_open(struct tfs *t, uint64_t blocks,
				uint32_t stripe)
{
	assert_int_equal(rc_dev_mem_create(blocks * FS_BDEV_BLOCK_SIZE, "fs",
					   &t->mem), 0);
	t->stripe = stripe;
	tfs_dev_attach(t);
}

static inline void tfs_dev_close(struct tfs *t)
{
	tfs_dev_detach(t);
	rc_dev_close(t->mem);
	t->mem = NULL;
}

static inline void tfs_record(struct tfs *t)
{
	assert_int_equal(rc_dev_sync(t->dev), 0);
}

static inline void tfs_write_limit(struct tfs *t, int64_t blocks)
{
	rc_power_write_limit(t->power, blocks);
}

static inline void tfs_crash(struct tfs *t)
{
	rc_power_cut(t->power);
	tfs_dev_detach(t);
	tfs_dev_attach(t);
}

/* Counters since the device came back last; any pointer may be NULL. */
static inline void tfs_stats(struct tfs *t, uint64_t *blocks_written,
			     uint64_t *write_calls, uint64_t *flushes)
{
	if (blocks_written)
		*blocks_written = rc_fault_bytes_written(t->fault) /
				  FS_BDEV_BLOCK_SIZE;
	if (write_calls)
		*write_calls = rc_fault_writes(t->fault);
	if (flushes)
		*flushes = rc_fault_syncs(t->fault);
}

/*
 * A power cut after the next limit blocks written: tfs_cut_arm records
 * the durable state and sets the limit (returns the write count so far);
 * the test then changes things, and tfs_cut_fire syncs, cuts the power,
 * mounts and checks, returning whether the cut fell inside what was
 * written (a sweep over limits stops when it did not).
 */
static inline uint64_t tfs_cut_arm(struct tfs *t, int64_t limit);
static inline bool tfs_cut_fire(struct tfs *t, uint64_t w0, int64_t limit);

/* The whole filesystem must be consistent (fs_check). */
static inline void tfs_check(struct tfs *t)
{
	struct fs_check_report r;
	int err = fs_check(t->fs, &r);

	if (err)
		fail_msg("fs_check: %d, %llu errors, first: %s", err,
			 (unsigned long long)r.errors, r.first_error);
}

static inline void tfs_mount(struct tfs *t)
{
	assert_int_equal(fs_mount(t->bdev, 0, &t->fs), 0);
}

static inline void tfs_umount(struct tfs *t)
{
	assert_int_equal(fs_unmount(t->fs), 0);
	t->fs = NULL;
}

static inline void tfs_remount(struct tfs *t)
{
	if (!t->damaged)
		tfs_check(t);
	tfs_umount(t);
	tfs_mount(t);
	if (!t->damaged)
		tfs_check(t);
}

/* A mounted filesystem formatted with p; callers act as uid 1000. */
static inline struct tfs *tfs_new_with(uint64_t blocks, uint32_t stripe,
				       const struct fs_format_params *p)
{
	struct tfs *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	tfs_dev_open(t, blocks, stripe);
	assert_int_equal(fs_format(t->bdev, p), 0);
	tfs_mount(t);
	t->ctx.uid = 1000;
	t->ctx.gid = 1000;
	t->ctx.umask = 022;
	return t;
}

static inline struct tfs *tfs_new(uint64_t blocks, uint32_t stripe)
{
	struct fs_format_params p = { .label = "test" };

	return tfs_new_with(blocks, stripe, &p);
}

static inline void tfs_free(struct tfs *t)
{
	if (t->fs && !t->damaged)
		tfs_check(t);
	if (t->fs)
		tfs_umount(t);
	tfs_dev_close(t);
	free(t);
}

/* Creates a file, returns its inode (the lookup reference is dropped). */
static inline uint64_t tfs_create(struct tfs *t, uint64_t dir, const char *name)
{
	struct fs_attr a;
	uint64_t fh;

	assert_int_equal(fs_create(t->fs, &t->ctx, dir, name, 0644, O_RDWR,
				   &a, &fh), 0);
	fs_release(t->fs, a.ino, fh);
	fs_forget(t->fs, a.ino, 1);
	return a.ino;
}

static inline uint64_t tfs_mkdir(struct tfs *t, uint64_t dir, const char *name)
{
	struct fs_attr a;

	assert_int_equal(fs_mkdir(t->fs, &t->ctx, dir, name, 0755, &a), 0);
	fs_forget(t->fs, a.ino, 1);
	return a.ino;
}

/* Looks name up: its inode, or 0 when absent. */
static inline uint64_t tfs_lookup(struct tfs *t, uint64_t dir, const char *name)
{
	struct fs_attr a;

	if (fs_lookup(t->fs, dir, name, &a))
		return 0;
	fs_forget(t->fs, a.ino, 1);
	return a.ino;
}

static inline void tfs_pattern(uint8_t *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)x;
	}
}

/* cmocka fixtures: a fresh 64 MiB filesystem per test. */
/* Blocks in use that no file owns: the inode chunks and their map. */
static inline uint64_t tfs_inode_blocks(struct tfs *t)
{
	struct fs_info info;

	assert_int_equal(fs_get_info(t->fs, &info), 0);
	return info.inode_blocks;
}

static inline uint64_t tfs_cut_arm(struct tfs *t, int64_t limit)
{
	uint64_t w0;

	assert_int_equal(fs_syncfs(t->fs), 0);
	tfs_record(t);
	tfs_stats(t, &w0, NULL, NULL);
	tfs_write_limit(t, limit);
	return w0;
}

static inline bool tfs_cut_fire(struct tfs *t, uint64_t w0, int64_t limit)
{
	uint64_t w1;

	(void)fs_syncfs(t->fs);
	tfs_stats(t, &w1, NULL, NULL);
	fs_abandon(t->fs);
	tfs_crash(t);
	tfs_mount(t);
	tfs_check(t);
	return (int64_t)(w1 - w0) >= limit;
}

/* Runs one(limit) for limit 0, step, 2 * step, ... until a cut falls past
 * everything one wrote; returns that limit. */
static inline int64_t tfs_cut_sweep(bool (*one)(int64_t limit), int64_t step)
{
	int64_t limit = 0;

	while (one(limit))
		limit += step;
	return limit;
}

static inline int tfs_setup(void **state)
{
	*state = tfs_new(16384, 1);
	return 0;
}

static inline int tfs_teardown(void **state)
{
	tfs_free(*state);
	return 0;
}

/* For tests that make their own filesystem (or several) in *state. */
static inline int tfs_setup_none(void **state)
{
	*state = NULL;
	return 0;
}

static inline int tfs_teardown_any(void **state)
{
	if (*state)
		tfs_free(*state);
	return 0;
}

/* A test that makes its filesystem in *state (teardown frees it). */
#define TFS_OWN(fn) cmocka_unit_test_setup_teardown(fn, tfs_setup_none, \
						    tfs_teardown_any)

#endif
