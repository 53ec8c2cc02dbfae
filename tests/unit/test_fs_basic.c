/*
 * test_fs_basic: the filesystem API over a memory device: every namespace
 * operation with its errors, file data, attributes, persistence across
 * unmount/mount.
 */
#include "fs_test_util.h"
#include "fs_int.h"
#include <pthread.h>
#include <sys/stat.h>
#include <xxhash.h>
#include <linux/falloc.h>
#include <unistd.h>

#define ROOT FS_ROOT_INO

static void test_format_mount_root(void **state)
{
	struct tfs *t = *state;
	struct fs_attr a;
	struct fs_info info;

	assert_int_equal(fs_getattr(t->fs, ROOT, &a), 0);
	assert_true(S_ISDIR(a.mode));
	assert_int_equal(a.nlink, 2);
	assert_int_equal(fs_get_info(t->fs, &info), 0);
	assert_string_equal(info.label, "test");
	tfs_remount(t);
	assert_int_equal(fs_get_info(t->fs, &info), 0);
	assert_true(info.was_clean);
	assert_int_equal(info.replayed_txns, 0);
}

static void test_mount_rejects_garbage(void **state)
{
	struct fs_bdev *b;
	struct rc_dev *d;
	struct fs *fs;

	(void)state;
	assert_int_equal(rc_dev_mem_create(4096 * FS_BDEV_BLOCK_SIZE, "fs", &d),
			 0);
	assert_int_equal(fs_bdev_from_dev(d, 1, &b), 0);
	assert_int_equal(fs_mount(b, 0, &fs), -EINVAL);
	fs_bdev_close(b);
}

static void test_create_lookup_errors(void **state)
{
	struct tfs *t = *state;
	char longname[300];
	struct fs_attr a;
	uint64_t fh, f, d;

	f = tfs_create(t, ROOT, "file");
	d = tfs_mkdir(t, ROOT, "dir");
	assert_int_equal(tfs_lookup(t, ROOT, "file"), f);
	assert_int_equal(tfs_lookup(t, ROOT, "dir"), d);
	assert_int_equal(fs_lookup(t->fs, ROOT, "nope", &a), -ENOENT);
	assert_int_equal(fs_lookup(t->fs, f, "x", &a), -ENOTDIR);
	memset(longname, 'a', 256);
	longname[256] = '\0';
	assert_int_equal(fs_lookup(t->fs, ROOT, longname, &a), -ENAMETOOLONG);
	assert_int_equal(fs_mkdir(t->fs, &t->ctx, ROOT, longname, 0755, &a),
			 -ENAMETOOLONG);
	longname[255] = '\0';
	assert_int_equal(fs_mkdir(t->fs, &t->ctx, ROOT, longname, 0755, &a), 0);
	fs_forget(t->fs, a.ino, 1);
	assert_int_equal(fs_mkdir(t->fs, &t->ctx, ROOT, "file", 0755, &a),
			 -EEXIST);
	assert_int_equal(fs_create(t->fs, &t->ctx, ROOT, "file", 0644,
				   O_RDWR | O_CREAT | O_EXCL, &a, &fh), -EEXIST);
	assert_int_equal(fs_create(t->fs, &t->ctx, ROOT, "dir", 0644,
				   O_RDWR | O_CREAT, &a, &fh), -EISDIR);
	assert_int_equal(fs_create(t->fs, &t->ctx, f, "x", 0644, O_RDWR, &a,
				   &fh), -ENOTDIR);
	/* create without O_EXCL opens the existing file */
	assert_int_equal(fs_create(t->fs, &t->ctx, ROOT, "file", 0644,
				   O_RDWR | O_CREAT, &a, &fh), 0);
	assert_int_equal(a.ino, f);
	fs_release(t->fs, f, fh);
	fs_forget(t->fs, f, 1);
	assert_int_equal(fs_lookup(t->fs, d, "..", &a), 0);
	assert_int_equal(a.ino, ROOT);
	fs_forget(t->fs, ROOT, 1);
}

static void test_mode_owner_setgid(void **state)
{
	struct tfs *t = *state;
	struct fs_attr a, in = { 0 };
	uint64_t d;

	d = tfs_mkdir(t, ROOT, "sg");
	in.mode = 02775;
	in.gid = 4242;
	assert_int_equal(fs_setattr(t->fs, d, &in,
				    FS_SET_ATTR_MODE | FS_SET_ATTR_GID, &a), 0);
	assert_int_equal(a.mode & 07777, 02775);
	assert_int_equal(fs_mkdir(t->fs, &t->ctx, d, "sub", 0777, &a), 0);
	fs_forget(t->fs, a.ino, 1);
	assert_int_equal(a.gid, 4242);
	assert_true(a.mode & S_ISGID);
	assert_int_equal(a.mode & 0777, 0755);   /* umask 022 */
	assert_int_equal(a.uid, 1000);
	assert_int_equal(fs_mknod(t->fs, &t->ctx, d, "f", S_IFREG | 0666, 0,
				  &a), 0);
	fs_forget(t->fs, a.ino, 1);
	assert_int_equal(a.gid, 4242);
	assert_false(a.mode & S_ISGID);
	assert_int_equal(fs_mknod(t->fs, &t->ctx, ROOT, "fifo", S_IFIFO | 0600,
				  0, &a), 0);
	fs_forget(t->fs, a.ino, 1);
	assert_true(S_ISFIFO(a.mode));
	assert_int_equal(a.gid, 1000);
	assert_int_equal(fs_mknod(t->fs, &t->ctx, ROOT, "chr", S_IFCHR | 0600,
				  makedev(1, 3), &a), 0);
	fs_forget(t->fs, a.ino, 1);
	assert_int_equal(a.rdev, makedev(1, 3));
	/* Special files are freed like any other (this once looped forever:
	 * they have no blocks to remove). */
	assert_int_equal(fs_unlink(t->fs, ROOT, "fifo"), 0);
	assert_int_equal(fs_unlink(t->fs, ROOT, "chr"), 0);
	assert_int_equal(fs_mknod(t->fs, &t->ctx, ROOT, "sock", S_IFSOCK | 0600,
				  0, &a), 0);
	fs_forget(t->fs, a.ino, 1);
	assert_int_equal(fs_unlink(t->fs, ROOT, "sock"), 0);
	tfs_check(t);
}

static void test_write_read(void **state)
{
	struct tfs *t = *state;
	static uint8_t w[300000], r[300000];
	struct fs_attr a;
	uint64_t f;

	tfs_pattern(w, sizeof(w), 1);
	f = tfs_create(t, ROOT, "data");
	assert_int_equal(fs_write(t->fs, f, 0, 100, w, 0), 100);
	assert_int_equal(fs_write(t->fs, f, 100, sizeof(w) - 100, w + 100, 0),
			 sizeof(w) - 100);
	assert_int_equal(fs_getattr(t->fs, f, &a), 0);
	assert_int_equal(a.size, sizeof(w));
	assert_int_equal(a.blocks, (sizeof(w) + 4095) / 4096 * 8);
	assert_int_equal(fs_read(t->fs, f, 0, sizeof(r), r), sizeof(w));
	assert_memory_equal(w, r, sizeof(w));
	assert_int_equal(fs_read(t->fs, f, 12345, 10, r), 10);
	assert_memory_equal(w + 12345, r, 10);
	assert_int_equal(fs_read(t->fs, f, sizeof(w) - 5, 100, r), 5);
	assert_int_equal(fs_read(t->fs, f, sizeof(w) + 5, 100, r), 0);
	tfs_remount(t);
	memset(r, 0, sizeof(r));
	assert_int_equal(fs_read(t->fs, f, 0, sizeof(r), r), sizeof(w));
	assert_memory_equal(w, r, sizeof(w));
}

static void test_truncate_and_holes(void **state)
{
	struct tfs *t = *state;
	uint8_t w[10000], r[10000], z[10000] = { 0 };
	struct fs_attr a, in = { 0 };
	uint64_t f;

	tfs_pattern(w, sizeof(w), 2);
	f = tfs_create(t, ROOT, "t");
	assert_int_equal(fs_write(t->fs, f, 0, sizeof(w), w, 0), sizeof(w));
	in.size = 5000;
	assert_int_equal(fs_setattr(t->fs, f, &in, FS_SET_ATTR_SIZE, &a), 0);
	assert_int_equal(a.size, 5000);
	assert_int_equal(a.blocks, 16);
	in.size = 10000;
	assert_int_equal(fs_setattr(t->fs, f, &in, FS_SET_ATTR_SIZE, &a), 0);
	assert_int_equal(fs_read(t->fs, f, 0, sizeof(r), r), 10000);
	assert_memory_equal(r, w, 5000);
	assert_memory_equal(r + 5000, z, 5000);
	/* a write far away leaves a hole that reads as zeros */
	assert_int_equal(fs_write(t->fs, f, 1 << 20, 10, w, 0), 10);
	assert_int_equal(fs_read(t->fs, f, 500000, 1000, r), 1000);
	assert_memory_equal(r, z, 1000);
	assert_int_equal(fs_getattr(t->fs, f, &a), 0);
	assert_int_equal(a.blocks, 3 * 8);
	assert_int_equal(fs_lseek(t->fs, f, 0, SEEK_HOLE), 8192);
	assert_int_equal(fs_lseek(t->fs, f, 8192, SEEK_DATA), 1 << 20);
	assert_int_equal(fs_lseek(t->fs, f, (1 << 20) + 20, SEEK_DATA), -ENXIO);
	assert_int_equal(fs_lseek(t->fs, f, (1 << 20) + 2, SEEK_HOLE),
			 (1 << 20) + 10);
}

static void test_unlink_rmdir(void **state)
{
	struct tfs *t = *state;
	struct fs_attr a;
	uint64_t d, f;

	d = tfs_mkdir(t, ROOT, "d");
	f = tfs_create(t, d, "f");
	assert_int_equal(fs_rmdir(t->fs, ROOT, "d"), -ENOTEMPTY);
	assert_int_equal(fs_unlink(t->fs, ROOT, "d"), -EISDIR);
	assert_int_equal(fs_rmdir(t->fs, d, "f"), -ENOTDIR);
	assert_int_equal(fs_unlink(t->fs, d, "nope"), -ENOENT);
	assert_int_equal(fs_unlink(t->fs, d, "f"), 0);
	assert_int_equal(fs_getattr(t->fs, f, &a), -ENOENT);
	assert_int_equal(fs_getattr(t->fs, ROOT, &a), 0);
	assert_int_equal(a.nlink, 3);
	assert_int_equal(fs_rmdir(t->fs, ROOT, "d"), 0);
	assert_int_equal(fs_getattr(t->fs, ROOT, &a), 0);
	assert_int_equal(a.nlink, 2);
	assert_int_equal(tfs_lookup(t, ROOT, "d"), 0);
}

static void test_hard_links(void **state)
{
	struct tfs *t = *state;
	struct fs_attr a;
	uint64_t f, d;

	f = tfs_create(t, ROOT, "f");
	d = tfs_mkdir(t, ROOT, "d");
	assert_int_equal(fs_link(t->fs, f, d, "g", &a), 0);
	fs_forget(t->fs, f, 1);
	assert_int_equal(a.nlink, 2);
	assert_int_equal(fs_link(t->fs, f, d, "g", &a), -EEXIST);
	assert_int_equal(fs_link(t->fs, d, ROOT, "dd", &a), -EPERM);
	assert_int_equal(fs_write(t->fs, f, 0, 5, "hello", 0), 5);
	assert_int_equal(fs_unlink(t->fs, ROOT, "f"), 0);
	assert_int_equal(fs_getattr(t->fs, f, &a), 0);
	assert_int_equal(a.nlink, 1);
	tfs_remount(t);
	assert_int_equal(tfs_lookup(t, d, "g"), f);
	char buf[8];
	assert_int_equal(fs_read(t->fs, f, 0, 8, buf), 5);
	assert_memory_equal(buf, "hello", 5);
}

static void test_open_unlinked(void **state)
{
	struct tfs *t = *state;
	struct fs_attr a;
	struct statvfs s0, s1, s2;
	uint64_t fh, f;
	char buf[6];
	static uint8_t big[1 << 20];

	assert_int_equal(fs_statfs(t->fs, &s0), 0);
	assert_int_equal(fs_create(t->fs, &t->ctx, ROOT, "tmp", 0644, O_RDWR,
				   &a, &fh), 0);
	f = a.ino;
	assert_int_equal(fs_write(t->fs, f, 0, sizeof(big), big, 0), sizeof(big));
	assert_int_equal(fs_write(t->fs, f, 0, 6, "alive", 0), 6);
	assert_int_equal(fs_unlink(t->fs, ROOT, "tmp"), 0);
	assert_int_equal(tfs_lookup(t, ROOT, "tmp"), 0);
	assert_int_equal(fs_read(t->fs, f, 0, 6, buf), 6);
	assert_string_equal(buf, "alive");
	assert_int_equal(fs_statfs(t->fs, &s1), 0);
	assert_true(s1.f_bfree + 256 <= s0.f_bfree);
	fs_release(t->fs, f, fh);
	assert_int_equal(fs_getattr(t->fs, f, &a), 0);   /* still looked up */
	fs_forget(t->fs, f, 1);
	assert_int_equal(fs_getattr(t->fs, f, &a), -ENOENT);
	assert_int_equal(fs_statfs(t->fs, &s2), 0);
	assert_int_equal(s2.f_bfree, s0.f_bfree);
	assert_int_equal(s2.f_ffree, s0.f_ffree);
}

static void test_orphan_freed_at_mount(void **state)
{
	struct tfs *t = *state;
	struct fs_attr a;
	struct statvfs s0, s1;
	struct fs_info info;
	uint64_t fh;
	static uint8_t big[1 << 20];

	assert_int_equal(fs_statfs(t->fs, &s0), 0);
	assert_int_equal(fs_create(t->fs, &t->ctx, ROOT, "tmp", 0644, O_RDWR,
				   &a, &fh), 0);
	assert_int_equal(fs_write(t->fs, a.ino, 0, sizeof(big), big, 0),
			 sizeof(big));
	assert_int_equal(fs_unlink(t->fs, ROOT, "tmp"), 0);
	/* unmount with the file still open: it stays an orphan */
	tfs_remount(t);
	assert_int_equal(fs_get_info(t->fs, &info), 0);
	assert_int_equal(info.orphans_freed, 1);
	assert_int_equal(fs_statfs(t->fs, &s1), 0);
	assert_int_equal(s1.f_bfree, s0.f_bfree);
	assert_int_equal(s1.f_ffree, s0.f_ffree);
}

static void test_symlink(void **state)
{
	struct tfs *t = *state;
	struct fs_attr a;
	char buf[FS_SYMLINK_MAX + 1], target[FS_SYMLINK_MAX + 2];

	assert_int_equal(fs_symlink(t->fs, &t->ctx, "../some/where", ROOT, "l",
				    &a), 0);
	fs_forget(t->fs, a.ino, 1);
	assert_true(S_ISLNK(a.mode));
	assert_int_equal(a.size, 13);
	assert_int_equal(fs_readlink(t->fs, a.ino, buf, sizeof(buf)), 13);
	assert_memory_equal(buf, "../some/where", 13);
	assert_int_equal(fs_readlink(t->fs, ROOT, buf, sizeof(buf)), -EINVAL);
	memset(target, 'x', sizeof(target));
	target[FS_SYMLINK_MAX + 1] = '\0';
	assert_int_equal(fs_symlink(t->fs, &t->ctx, target, ROOT, "l2", &a),
			 -ENAMETOOLONG);
	target[FS_SYMLINK_MAX] = '\0';
	assert_int_equal(fs_symlink(t->fs, &t->ctx, target, ROOT, "l2", &a), 0);
	fs_forget(t->fs, a.ino, 1);
	tfs_remount(t);
	assert_int_equal(fs_readlink(t->fs, a.ino, buf, sizeof(buf)),
			 FS_SYMLINK_MAX);
	assert_memory_equal(buf, target, FS_SYMLINK_MAX);
}

static void test_times(void **state)
{
	struct tfs *t = *state;
	struct fs_attr a, b, in = { 0 };
	uint64_t f;

	f = tfs_create(t, ROOT, "f");
	in.atime.tv_sec = 1000;
	in.atime.tv_nsec = 123456789;
	in.mtime.tv_sec = 2000;
	in.mtime.tv_nsec = 987654321;
	assert_int_equal(fs_setattr(t->fs, f, &in,
				    FS_SET_ATTR_ATIME | FS_SET_ATTR_MTIME, &a), 0);
	tfs_remount(t);
	assert_int_equal(fs_getattr(t->fs, f, &a), 0);
	assert_int_equal(a.atime.tv_sec, 1000);
	assert_int_equal(a.atime.tv_nsec, 123456789);
	assert_int_equal(a.mtime.tv_sec, 2000);
	assert_int_equal(a.mtime.tv_nsec, 987654321);
	assert_int_equal(fs_write(t->fs, f, 0, 1, "x", 0), 1);
	assert_int_equal(fs_getattr(t->fs, f, &b), 0);
	assert_true(b.mtime.tv_sec > 2000);
	assert_true(b.ctime.tv_sec >= a.ctime.tv_sec);
	/* the clock is the kernel's coarse one (fs_now): a create in the
	 * same tick as the last change may leave mtime as it was, so the
	 * directory's mtime is put in the past first */
	assert_int_equal(fs_setattr(t->fs, ROOT, &in, FS_SET_ATTR_MTIME, &a),
			 0);
	tfs_create(t, ROOT, "g");
	assert_int_equal(fs_getattr(t->fs, ROOT, &b), 0);
	assert_true(b.mtime.tv_sec > a.mtime.tv_sec);
}

struct cached_writer {
	struct tfs *t;
	uint64_t ino;
	int id;
};

/* Writes its own 64 blocks of the file, 16 times over, as the page cache
 * writes back. */
static void *cached_writer_main(void *arg)
{
	struct cached_writer *w = arg;
	uint8_t buf[4096];

	for (int round = 0; round < 16; round++) {
		for (int b = 0; b < 64; b++) {
			memset(buf, w->id * 16 + round, sizeof(buf));
			if (fs_write(w->t->fs, w->ino,
				     (uint64_t)(w->id * 64 + b) * 4096,
				     sizeof(buf), buf, FS_WRITE_CACHE) != 4096)
				return (void *)1;
		}
	}
	return NULL;
}

/*
 * FS_WRITE_CACHE over written blocks inside the size: the data lands and
 * survives a remount, and nothing of the inode changes (the kernel owns
 * the times then) - no transaction at all.  Anything else still goes the
 * usual way: a hole gets mapped, the size grows, an unaligned end reads
 * the block around it.  Writers of one file run side by side (under
 * ASan: nothing torn, nothing lost).
 */
static void test_cached_overwrite(void **state)
{
	struct tfs *t = *state;
	static uint8_t w[4 * 64 * 4096], r[sizeof(w)];
	struct cached_writer cw[4];
	pthread_t th[4];
	struct fs_attr a, b, in = { 0 };
	uint64_t f, handles;
	void *ret;

	f = tfs_create(t, ROOT, "f");
	tfs_pattern(w, sizeof(w), 3);
	assert_int_equal(fs_write(t->fs, f, 0, sizeof(w), w, 0), sizeof(w));
	in.mtime.tv_sec = 2000;
	in.ctime.tv_sec = 3000;
	assert_int_equal(fs_setattr(t->fs, f, &in,
				    FS_SET_ATTR_MTIME | FS_SET_ATTR_CTIME, &a), 0);

	handles = t->fs->j.handles_started;
	memset(w + 8192, 0x5a, 8192);
	assert_int_equal(fs_write(t->fs, f, 8192, 8192, w + 8192,
				  FS_WRITE_CACHE), 8192);
	assert_int_equal(t->fs->j.handles_started, handles);
	assert_int_equal(fs_getattr(t->fs, f, &b), 0);
	assert_int_equal(b.mtime.tv_sec, 2000);
	assert_int_equal(b.ctime.tv_sec, 3000);
	assert_int_equal(b.size, sizeof(w));

	/* Without the flag: the times move, in a transaction. */
	assert_int_equal(fs_write(t->fs, f, 0, 4096, w, 0), 4096);
	assert_true(t->fs->j.handles_started > handles);
	assert_int_equal(fs_getattr(t->fs, f, &b), 0);
	assert_true(b.mtime.tv_sec > 2000);

	/* Past the end, unaligned: the usual path, the size follows. */
	assert_int_equal(fs_write(t->fs, f, sizeof(w), 100, w,
				  FS_WRITE_CACHE), 100);
	assert_int_equal(fs_getattr(t->fs, f, &b), 0);
	assert_int_equal(b.size, sizeof(w) + 100);
	/* ... and still leaves the times to the kernel: it sends them when
	 * they moved, and when they did not, the daemon's later stamp would
	 * change them across a remount */
	assert_int_equal(fs_setattr(t->fs, f, &in,
				    FS_SET_ATTR_MTIME | FS_SET_ATTR_CTIME, &a), 0);
	assert_int_equal(fs_write(t->fs, f, sizeof(w) + 100, 100, w,
				  FS_WRITE_CACHE), 100);
	assert_int_equal(fs_getattr(t->fs, f, &b), 0);
	assert_int_equal(b.size, sizeof(w) + 200);
	assert_int_equal(b.mtime.tv_sec, 2000);
	assert_int_equal(b.ctime.tv_sec, 3000);
	assert_int_equal(fs_write(t->fs, f, 4096 + 10, 10, "0123456789",
				  FS_WRITE_CACHE), 10);

	tfs_remount(t);
	assert_int_equal(fs_read(t->fs, f, 0, 4096 + 20, r), 4096 + 20);
	assert_memory_equal(r, w, 4096 + 10);
	assert_memory_equal(r + 4096 + 10, "0123456789", 10);
	assert_int_equal(fs_read(t->fs, f, 8192, 8192, r), 8192);
	assert_memory_equal(r, w + 8192, 8192);

	for (int i = 0; i < 4; i++) {
		cw[i] = (struct cached_writer){ t, f, i };
		assert_int_equal(pthread_create(&th[i], NULL,
						cached_writer_main, &cw[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(th[i], &ret), 0);
		assert_null(ret);
	}
	tfs_remount(t);
	assert_int_equal(fs_read(t->fs, f, 0, sizeof(r), r), sizeof(r));
	for (int i = 0; i < 4; i++)
		for (size_t k = 0; k < 64 * 4096; k++)
			if (r[(size_t)i * 64 * 4096 + k] != i * 16 + 15)
				fail_msg("writer %d byte %zu: %u", i, k,
					 r[(size_t)i * 64 * 4096 + k]);
}

/* Block lblk of file ino: the extent that holds it (found or not). */
static struct fs_extent extent_of(struct tfs *t, uint64_t ino, uint64_t lblk,
				  bool *found)
{
	struct fs_inode *ip;
	struct fs_extent e;

	assert_int_equal(fs_iget(t->fs, ino, &ip), 0);
	assert_int_equal(fs_ext_map(t->fs, ip, lblk, &e, found), 0);
	fs_iput(t->fs, ip);
	return e;
}

/*
 * The cached overwrite's three cases: inside one extent, across two
 * written extents (both without a transaction), and across a written and
 * an unwritten extent, which must take the usual path: the unwritten one
 * reads as zeros until a transaction converts it.
 */
static void test_cached_overwrite_extents(void **state)
{
	struct tfs *t = *state;
	static uint8_t w[6 * 4096], r[sizeof(w)], zero[4096];
	uint64_t f, other, handles;
	struct fs_extent e0, e2, e4;
	bool found;

	f = tfs_create(t, ROOT, "f");
	other = tfs_create(t, ROOT, "other");
	tfs_pattern(w, sizeof(w), 5);
	/* Another file's block between f's two writes: two extents. */
	assert_int_equal(fs_write(t->fs, f, 0, 2 * 4096, w, 0), 2 * 4096);
	assert_int_equal(fs_write(t->fs, other, 0, 4096, w, 0), 4096);
	assert_int_equal(fs_write(t->fs, f, 2 * 4096, 2 * 4096, w + 2 * 4096,
				  0), 2 * 4096);
	assert_int_equal(fs_fallocate(t->fs, f, 0, 4 * 4096, 2 * 4096), 0);
	e0 = extent_of(t, f, 0, &found);
	assert_true(found);
	e2 = extent_of(t, f, 2, &found);
	assert_true(found);
	assert_int_equal(e0.len, 2);
	assert_int_equal(e2.lblk, 2);
	assert_int_not_equal(e2.pblk, e0.pblk + 2);
	e4 = extent_of(t, f, 4, &found);
	assert_true(found && (e4.flags & FS_EXT_UNWRITTEN));

	handles = t->fs->j.handles_started;
	memset(w + 4096, 0x11, 4096);           /* inside the first extent */
	assert_int_equal(fs_write(t->fs, f, 4096, 4096, w + 4096,
				  FS_WRITE_CACHE), 4096);
	memset(w + 4096, 0x22, 2 * 4096);       /* across the first two */
	assert_int_equal(fs_write(t->fs, f, 4096, 2 * 4096, w + 4096,
				  FS_WRITE_CACHE), 2 * 4096);
	assert_int_equal(t->fs->j.handles_started, handles);
	memset(w + 5 * 4096, 0x44, 4096);       /* inside the unwritten one */
	assert_int_equal(fs_write(t->fs, f, 5 * 4096, 4096, w + 5 * 4096,
				  FS_WRITE_CACHE), 4096);
	assert_true(t->fs->j.handles_started > handles);
	assert_int_equal(fs_read(t->fs, f, 4 * 4096, 4096, r), 4096);
	assert_memory_equal(r, zero, 4096);
	handles = t->fs->j.handles_started;
	memset(w + 3 * 4096, 0x33, 2 * 4096);   /* written + unwritten */
	assert_int_equal(fs_write(t->fs, f, 3 * 4096, 2 * 4096, w + 3 * 4096,
				  FS_WRITE_CACHE), 2 * 4096);
	assert_true(t->fs->j.handles_started > handles);
	e4 = extent_of(t, f, 4, &found);
	assert_true(found && !(e4.flags & FS_EXT_UNWRITTEN));
	assert_int_equal(fs_fsync(t->fs, f, 0), 0);

	tfs_remount(t);
	assert_int_equal(fs_read(t->fs, f, 0, sizeof(r), r), sizeof(r));
	assert_memory_equal(r, w, sizeof(w));
	tfs_check(t);
}

/* Error cases not covered elsewhere, as a table over one fixture. */
static void test_errors_table(void **state)
{
	struct tfs *t = *state;
	struct fs_attr a, in = { .size = 0 };
	uint64_t f, d, gone, fifo, fh;
	char buf[16];
	struct {
		const char *what;
		long got, want;
	} c[24];
	int n = 0, i;

	f = tfs_create(t, ROOT, "f");
	d = tfs_mkdir(t, ROOT, "d");
	assert_int_equal(fs_mknod(t->fs, &t->ctx, ROOT, "p", S_IFIFO | 0644, 0,
				  &a), 0);
	fifo = a.ino;
	fs_forget(t->fs, fifo, 1);
	/* a directory removed while the kernel still holds it */
	assert_int_equal(fs_mkdir(t->fs, &t->ctx, ROOT, "gone", 0755, &a), 0);
	gone = a.ino;
	assert_int_equal(fs_rmdir(t->fs, ROOT, "gone"), 0);
#define CASE(w, g, e) c[n++] = (typeof(c[0])){ w, (long)(g), (long)(e) }
	CASE("truncate a directory", fs_setattr(t->fs, d, &in, FS_SET_ATTR_SIZE,
		NULL), -EISDIR);
	CASE("truncate a fifo", fs_setattr(t->fs, fifo, &in, FS_SET_ATTR_SIZE,
		NULL), -EINVAL);
	CASE("open a directory for writing", fs_open(t->fs, d, O_WRONLY, &fh),
	     -EISDIR);
	CASE("read a directory", fs_read(t->fs, d, 0, 1, buf), -EISDIR);
	CASE("write a directory", fs_write(t->fs, d, 0, 1, "x", 0), -EISDIR);
	CASE("readlink a file", fs_readlink(t->fs, f, buf, sizeof(buf)), -EINVAL);
	CASE("create in a removed directory", fs_mknod(t->fs, &t->ctx, gone,
		"x", S_IFREG, 0, &a), -ENOENT);
	CASE("lookup in a removed directory", fs_lookup(t->fs, gone, "x", &a),
	     -ENOENT);
	CASE("rename into a removed directory", fs_rename(t->fs, ROOT, "f",
		gone, "f", 0), -ENOENT);
	CASE("mkdir in a file", fs_mkdir(t->fs, &t->ctx, f, "x", 0755, &a),
	     -ENOTDIR);
	CASE("readdir a file", fs_opendir(t->fs, f, &fh), -ENOTDIR);
	CASE("rmdir .", fs_rmdir(t->fs, d, "."), -EINVAL);
	CASE("rmdir ..", fs_rmdir(t->fs, d, ".."), -ENOTEMPTY);
	CASE("rename ..", fs_rename(t->fs, d, "..", ROOT, "x", 0), -EBUSY);
	CASE("getattr of an unused inode", fs_getattr(t->fs, 999, &a), -ENOENT);
	CASE("getattr of inode 0", fs_getattr(t->fs, 0, &a), -ENOENT);
	CASE("xattr of an unused inode", fs_setxattr(t->fs, &t->ctx, 999, "user.x", "",
		0, 0), -ENOENT);
	CASE("bad xattr flags", fs_setxattr(t->fs, &t->ctx, f, "user.x", "", 0, 7),
	     -EINVAL);
	CASE("fallocate a fifo", fs_fallocate(t->fs, fifo, 0, 0, 10), -ENODEV);
	CASE("fallocate zero length", fs_fallocate(t->fs, f, 0, 0, 0), -EINVAL);
	CASE("seek data past the end", fs_lseek(t->fs, f, 10, SEEK_DATA), -ENXIO);
	CASE("seek hole past the end", fs_lseek(t->fs, f, 0, SEEK_HOLE), -ENXIO);
	CASE("link into a file", fs_link(t->fs, f, f, "x", &a), -ENOTDIR);
	CASE("mknod a directory", fs_mknod(t->fs, &t->ctx, ROOT, "x",
		S_IFDIR | 0755, 0, &a), -EINVAL);
#undef CASE
	for (i = 0; i < n; i++)
		if (c[i].got != c[i].want)
			fail_msg("%s: got %ld, want %ld", c[i].what, c[i].got,
				 c[i].want);
	fs_forget(t->fs, gone, 1);
}

static void test_inodes_run_out(void **state)
{
	struct tfs *t = calloc(1, sizeof(*t));
	struct fs_format_params p = { .inodes = 30 };
	struct fs_attr a;
	struct statvfs st;
	char name[16];
	int i, err = 0;

	(void)state;
	tfs_dev_open(t, 4096, 1);
	assert_int_equal(fs_format(t->bdev, &p), 0);
	tfs_mount(t);
	assert_int_equal(fs_statfs(t->fs, &st), 0);
	for (i = 0; i < 100 && !err; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		err = fs_mknod(t->fs, &t->ctx, ROOT, name, S_IFREG, 0, &a);
		if (!err)
			fs_forget(t->fs, a.ino, 1);
	}
	assert_int_equal(err, -ENOSPC);
	assert_int_equal(i - 1, (int)st.f_ffree);
	assert_int_equal(fs_statfs(t->fs, &st), 0);
	assert_int_equal(st.f_ffree, 0);
	assert_int_equal(fs_unlink(t->fs, ROOT, "f0"), 0);
	assert_int_equal(fs_mknod(t->fs, &t->ctx, ROOT, "again", S_IFREG, 0, &a),
			 0);
	fs_forget(t->fs, a.ino, 1);
	assert_true(a.generation > 1);
	tfs_free(t);
}

/* A damaged metadata block is reported, never used. */
static void test_corruption_detected(void **state)
{
	struct tfs *t = *state;
	struct fs_inode *ip;
	struct fs_attr a;
	uint8_t blk[4096];
	uint64_t d, node;

	d = tfs_mkdir(t, ROOT, "d");
	tfs_create(t, d, "victim");
	assert_int_equal(fs_iget(t->fs, d, &ip), 0);
	node = ip->d.map_root;
	fs_iput(t->fs, ip);
	assert_true(node != 0);
	tfs_umount(t);
	assert_int_equal(fs_bdev_read(t->bdev, node, 1, blk), 0);
	blk[1000] ^= 0x40;
	assert_int_equal(fs_bdev_write(t->bdev, node, 1, blk), 0);
	t->damaged = true;
	tfs_mount(t);
	assert_int_equal(fs_lookup(t->fs, d, "victim", &a), -EUCLEAN);
	/* superblock copy 0 damaged: copy 1 is used, and copy 0 restored */
	tfs_umount(t);
	assert_int_equal(fs_bdev_read(t->bdev, 0, 1, blk), 0);
	blk[200] ^= 1;
	assert_int_equal(fs_bdev_write(t->bdev, 0, 1, blk), 0);
	{
		struct fs *ro;
		uint64_t w0, w1;

		struct fs_info info;

		tfs_stats(t, &w0, NULL, NULL);
		assert_int_equal(fs_mount(t->bdev, FS_MOUNT_RDONLY, &ro), 0);
		assert_int_equal(fs_getattr(ro, d, &a), 0);
		/* said, so fsck counts it (and -y's read-write mount
		 * rewrites it) */
		assert_int_equal(fs_get_info(ro, &info), 0);
		assert_true(info.sb_copy0_damaged);
		assert_int_equal(fs_unmount(ro), 0);
		tfs_stats(t, &w1, NULL, NULL);
		assert_int_equal(w1, w0);
	}
	tfs_mount(t);
	assert_int_equal(fs_getattr(t->fs, d, &a), 0);
	tfs_umount(t);
	/* copy 1 damaged now: copy 0 must be whole again */
	assert_int_equal(fs_bdev_read(t->bdev, 1, 1, blk), 0);
	blk[200] ^= 1;
	assert_int_equal(fs_bdev_write(t->bdev, 1, 1, blk), 0);
	tfs_mount(t);
	assert_int_equal(fs_getattr(t->fs, d, &a), 0);
}

/* fs_check finds what a crash-free filesystem never has. */
static void test_check_finds_damage(void **state)
{
	struct tfs *t = *state;
	struct fs_check_report r;
	struct fs_attr a, in = { .nlink = 0 };
	uint8_t blk[4096];
	uint64_t bb, f;

	f = tfs_create(t, ROOT, "f");
	assert_int_equal(fs_write(t->fs, f, 0, 5, "hello", 0), 5);
	assert_int_equal(fs_check(t->fs, &r), 0);
	assert_int_equal(r.files, 1);
	assert_int_equal(r.dirs, 1);
	/* a leaked block: set a free block's bit in the on-disk bitmap */
	tfs_umount(t);
	bb = 0;
	{
		struct fs_bdev *b = t->bdev;
		uint8_t sb[4096];

		assert_int_equal(fs_bdev_read(b, 0, 1, sb), 0);
		bb = le64toh(*(uint64_t *)(sb + 160));
	}
	assert_int_equal(fs_bdev_read(t->bdev, bb, 1, blk), 0);
	blk[32 + 1250] |= 0x01;         /* block 10000: free, far away */
	*(uint64_t *)(blk + 8) = 0;
	*(uint64_t *)(blk + 8) = htole64(XXH3_64bits_withSeed(blk, 4096, bb));
	assert_int_equal(fs_bdev_write(t->bdev, bb, 1, blk), 0);
	t->damaged = true;
	tfs_mount(t);
	assert_int_equal(fs_check(t->fs, &r), -EUCLEAN);
	assert_int_equal(r.errors, 1);
	assert_non_null(strstr(r.first_error, "unreferenced"));
	(void)a;
	(void)in;
}

/* fsync commits only when the file changed since the last commit;
 * fdatasync only when its size or block map did. */
static void test_fsync_per_file(void **state)
{
	struct tfs *t = *state;
	uint64_t f, g, c0, c1, fl0, fl1;
	uint8_t w[8192];

	tfs_pattern(w, sizeof(w), 21);
	f = tfs_create(t, ROOT, "f");
	g = tfs_create(t, ROOT, "g");
	assert_int_equal(fs_write(t->fs, f, 0, sizeof(w), w, 0), sizeof(w));
	assert_int_equal(fs_fsync(t->fs, f, 0), 0);
	/* g changes, f is only overwritten: fdatasync(f) is a flush */
	assert_int_equal(fs_write(t->fs, g, 0, 10, w, 0), 10);
	tfs_stats(t, &c0, NULL, &fl0);
	assert_int_equal(fs_write(t->fs, f, 0, 4096, w + 4096, 0), 4096);
	assert_int_equal(fs_fsync(t->fs, f, 1), 0);
	tfs_stats(t, &c1, NULL, &fl1);
	assert_int_equal(fl1 - fl0, 1);
	assert_int_equal(c1 - c0, 1);                   /* the data block */
	/* fsync(f) must also make its new mtime durable: a commit (which
	 * also holds g's allocating write: ordered data, two flushes) */
	tfs_stats(t, &c0, NULL, &fl0);
	assert_int_equal(fs_fsync(t->fs, f, 0), 0);
	tfs_stats(t, &c1, NULL, &fl1);
	assert_int_equal(fl1 - fl0, 2);
	/* and once committed, fsync again is a flush */
	tfs_stats(t, &c0, NULL, &fl0);
	assert_int_equal(fs_fsync(t->fs, f, 0), 0);
	tfs_stats(t, &c1, NULL, &fl1);
	assert_int_equal(fl1 - fl0, 1);
	assert_int_equal(c1 - c0, 0);
	/* now f grows: its metadata changed, fsync commits (two flushes) */
	assert_int_equal(fs_write(t->fs, f, 8192, 10, w, 0), 10);
	tfs_stats(t, &c0, NULL, &fl0);
	assert_int_equal(fs_fsync(t->fs, f, 0), 0);
	tfs_stats(t, &c1, NULL, &fl1);
	assert_true(fl1 - fl0 >= 2);
	assert_true(c1 - c0 >= 3);
}

/*
 * Unlinked files wait on the orphan list until their last reference goes;
 * when that list empties and fills again inside one transaction, its one
 * block is reused instead of a fresh block per file, each of which the
 * commit would have journalled and written home.
 */
static void test_unlink_churn_reuses_orphan_block(void **state)
{
	struct tfs *t = *state;
	uint64_t ino[64], n0, n1;
	char name[16];
	int i;

	for (i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		ino[i] = tfs_create(t, ROOT, name);
	}
	assert_int_equal(fs_syncfs(t->fs), 0);
	n0 = t->fs->j.running->nbufs;
	for (i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		assert_int_equal(fs_unlink(t->fs, ROOT, name), 0);
		assert_int_equal(tfs_lookup(t, ROOT, name), 0);
	}
	n1 = t->fs->j.running->nbufs;
	/* the directory, 4 inode blocks, the bitmap, the superblock, a few
	 * tree nodes: not one block per file */
	assert_true(n1 - n0 < 24);
	tfs_remount(t);
	for (i = 0; i < 64; i++)
		assert_int_equal(fs_getattr(t->fs, ino[i], &(struct fs_attr){ 0 }),
				 -ENOENT);
}

/* The orphan list's block of a file that came and went is reused at once,
 * here for file data in the same transaction: the commit must not journal
 * the freed node, or replay would write it over the data. */
static uint64_t orphan_root(struct tfs *t)
{
	struct fs_buf *b;
	uint64_t root;

	assert_int_equal(fs_sb_get(t->fs, &b), 0);
	root = fs_le64(((struct fs_sb_disk *)b->data)->orphan_root);
	bc_put(t->fs, b);
	return root;
}

static void test_forgotten_block_reused_for_data(void **state)
{
	struct tfs *t = *state;
	struct fs_inode *ip;
	struct fs_extent e;
	struct fs_attr a;
	uint64_t keep, fh, node;
	uint8_t w[4096], r[4096];
	bool found;

	tfs_pattern(w, sizeof(w), 7);
	keep = tfs_create(t, ROOT, "keep");
	assert_int_equal(fs_syncfs(t->fs), 0);
	assert_int_equal(fs_create(t->fs, &t->ctx, ROOT, "gone", 0644, O_RDWR,
				   &a, &fh), 0);
	assert_int_equal(fs_unlink(t->fs, ROOT, "gone"), 0);
	node = orphan_root(t);
	assert_int_not_equal(node, 0);
	fs_release(t->fs, a.ino, fh);
	fs_forget(t->fs, a.ino, 1);                     /* freed: list empty */
	assert_int_equal(orphan_root(t), 0);
	assert_int_equal(fs_write(t->fs, keep, 0, sizeof(w), w, 0), sizeof(w));
	assert_int_equal(fs_iget(t->fs, keep, &ip), 0);
	assert_int_equal(fs_ext_map(t->fs, ip, 0, &e, &found), 0);
	fs_iput(t->fs, ip);
	assert_true(found);
	assert_int_equal(e.pblk, node);                 /* the reuse happened */
	assert_int_equal(fs_fsync(t->fs, keep, 0), 0);
	fs_abandon(t->fs);
	tfs_crash(t);
	tfs_mount(t);
	assert_int_equal(fs_read(t->fs, keep, 0, sizeof(r), r), sizeof(r));
	assert_memory_equal(r, w, sizeof(w));
	tfs_check(t);
}

/*
 * fsync after an overwrite commits with one flush (no data depends on the
 * order); what it returned for survives the power cut: the new bytes and
 * the new mtime.  An allocating write's fsync keeps the flush between its
 * data and the commit record.
 */
static void test_fsync_overwrite_one_flush_survives_crash(void **state)
{
	struct tfs *t = *state;
	struct fs_attr in = { .mtime = { 1234567890, 123456789 } }, a;
	uint8_t w[4096], r[4096];
	uint64_t f, fl0, fl1;

	tfs_pattern(w, sizeof(w), 3);
	f = tfs_create(t, ROOT, "f");
	assert_int_equal(fs_write(t->fs, f, 0, sizeof(w), w, 0), sizeof(w));
	tfs_stats(t, NULL, NULL, &fl0);
	assert_int_equal(fs_fsync(t->fs, f, 0), 0);
	tfs_stats(t, NULL, NULL, &fl1);
	assert_int_equal(fl1 - fl0, 2);                 /* ordered data */
	tfs_pattern(w, sizeof(w), 4);
	assert_int_equal(fs_write(t->fs, f, 0, sizeof(w), w, 0), sizeof(w));
	assert_int_equal(fs_setattr(t->fs, f, &in, FS_SET_ATTR_MTIME, &a), 0);
	tfs_stats(t, NULL, NULL, &fl0);
	assert_int_equal(fs_fsync(t->fs, f, 0), 0);
	tfs_stats(t, NULL, NULL, &fl1);
	assert_int_equal(fl1 - fl0, 1);
	fs_abandon(t->fs);
	tfs_crash(t);
	tfs_mount(t);
	assert_int_equal(fs_read(t->fs, f, 0, sizeof(r), r), sizeof(r));
	assert_memory_equal(r, w, sizeof(w));
	assert_int_equal(fs_getattr(t->fs, f, &a), 0);
	assert_int_equal(a.mtime.tv_sec, in.mtime.tv_sec);
	assert_int_equal(a.mtime.tv_nsec, in.mtime.tv_nsec);
	tfs_check(t);
}

/* The commit thread makes changes durable on its own, and stays quiet
 * when there is nothing to commit. */
static void test_background_commit(void **state)
{
	struct fs_mount_opts o = { .commit_interval_ms = 20 };
	struct tfs *t = *state;
	uint64_t fl0, fl1;

	tfs_umount(t);
	assert_int_equal(fs_mount_opts(t->bdev, &o, &t->fs), 0);
	tfs_record(t);
	tfs_create(t, ROOT, "soon");
	usleep(300 * 1000);
	tfs_stats(t, NULL, NULL, &fl0);
	usleep(200 * 1000);
	tfs_stats(t, NULL, NULL, &fl1);
	assert_int_equal(fl1, fl0);                     /* idle: no flush */
	fs_abandon(t->fs);
	tfs_crash(t);
	tfs_mount(t);
	assert_int_not_equal(tfs_lookup(t, ROOT, "soon"), 0);
}

/* A plain file through fs_bdev_from_dev. */
static int file_bdev_open(const char *path, struct fs_bdev **b)
{
	struct rc_dev *d;
	int err = rc_dev_open_file(path, 0, &d);

	if (err)
		return err;
	err = fs_bdev_from_dev(d, 1, b);
	if (err)
		rc_dev_close(d);
	return err;
}

static void test_file_bdev(void **state)
{
	char path[] = "/tmp/raidfs-test-XXXXXX";
	struct fs_bdev *b;
	struct fs *fs;
	struct fs_ctx ctx = { .uid = 0, .gid = 0, .umask = 022 };
	struct fs_attr a;
	uint64_t fh;
	char buf[8];
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 32 << 20), 0);
	close(fd);
	assert_int_equal(file_bdev_open(path, &b), 0);
	assert_int_equal(b->blocks, 8192);
	assert_int_equal(fs_format(b, NULL), 0);
	assert_int_equal(fs_mount(b, 0, &fs), 0);
	assert_int_equal(fs_create(fs, &ctx, ROOT, "x", 0644, O_RDWR, &a, &fh), 0);
	assert_int_equal(fs_write(fs, a.ino, 0, 5, "file!", 0), 5);
	assert_int_equal(fs_unmount(fs), 0);
	fs_bdev_close(b);
	assert_int_equal(file_bdev_open(path, &b), 0);
	assert_int_equal(fs_mount(b, FS_MOUNT_RDONLY, &fs), 0);
	assert_int_equal(fs_lookup(fs, ROOT, "x", &a), 0);
	assert_int_equal(fs_read(fs, a.ino, 0, 8, buf), 5);
	assert_memory_equal(buf, "file!", 5);
	assert_int_equal(fs_write(fs, a.ino, 0, 1, "x", 0), -EROFS);
	assert_int_equal(fs_mkdir(fs, &ctx, ROOT, "d", 0755, &a), -EROFS);
	assert_int_equal(fs_unmount(fs), 0);
	fs_bdev_close(b);
	unlink(path);
	assert_int_equal(file_bdev_open(path, &b), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_format_mount_root, tfs_setup, tfs_teardown),
		cmocka_unit_test(test_mount_rejects_garbage),
		cmocka_unit_test_setup_teardown(test_create_lookup_errors, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_mode_owner_setgid, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_write_read, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_truncate_and_holes, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_unlink_rmdir, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_hard_links, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_open_unlinked, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_orphan_freed_at_mount, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_symlink, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_times, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_cached_overwrite, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_cached_overwrite_extents, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_errors_table, tfs_setup, tfs_teardown),
		cmocka_unit_test(test_inodes_run_out),
		cmocka_unit_test_setup_teardown(test_corruption_detected, tfs_setup, tfs_teardown),
		cmocka_unit_test(test_file_bdev),
		cmocka_unit_test_setup_teardown(test_background_commit, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_fsync_per_file, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_unlink_churn_reuses_orphan_block, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_fsync_overwrite_one_flush_survives_crash, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_forgotten_block_reused_for_data, tfs_setup, tfs_teardown),
		cmocka_unit_test_setup_teardown(test_check_finds_damage, tfs_setup, tfs_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
