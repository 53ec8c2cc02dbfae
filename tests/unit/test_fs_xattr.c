/*
 * fs extended attributes at Linux's limits (fs/xattr.c, format 2): values
 * up to XATTR_SIZE_MAX in value chains, thousands of attributes on one
 * inode in its xattr B+tree, every change one journalled transaction (also
 * with the smallest journal, also when the power goes mid-way), space
 * given back on removal, fs_check verifying records and chains.
 */
#include <sys/xattr.h>
#include <linux/limits.h>
#include "fs_test_util.h"
#include "fs_int.h"

#define ROOT FS_ROOT_INO
#define NMANY 10000

static void value_expect(struct tfs *t, uint64_t ino, const char *name,
			 size_t len, uint64_t seed)
{
	uint8_t *want = malloc(len + 1), *got = malloc(XATTR_SIZE_MAX);

	assert_non_null(want);
	assert_non_null(got);
	tfs_pattern(want, len + 1, seed);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, ino, name, NULL, 0),
			 (ssize_t)len);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, ino, name, got,
				     XATTR_SIZE_MAX), (ssize_t)len);
	assert_memory_equal(got, want, len);
	free(want);
	free(got);
}

static int value_set(struct tfs *t, uint64_t ino, const char *name, size_t len,
		     uint64_t seed)
{
	uint8_t *v = malloc(len + 1);
	int err;

	assert_non_null(v);
	tfs_pattern(v, len + 1, seed);
	err = fs_setxattr(t->fs, &t->ctx, ino, name, v, len, 0);
	free(v);
	return err;
}

static uint64_t blocks_of(struct tfs *t, uint64_t ino)
{
	struct fs_attr a;

	assert_int_equal(fs_getattr(t->fs, ino, &a), 0);
	return a.blocks / 8;
}

/* 64 KiB round-trips, survives a remount, and its blocks are counted. */
static void test_value_64k(void **state)
{
	struct tfs *t = *state = tfs_new(16384, 1);
	uint64_t f = tfs_create(t, ROOT, "f");
	uint8_t small[16];

	assert_int_equal(value_set(t, f, "user.big", XATTR_SIZE_MAX, 1), 0);
	assert_int_equal(value_set(t, f, "user.big2", XATTR_SIZE_MAX + 1, 1),
			 -E2BIG);
	value_expect(t, f, "user.big", XATTR_SIZE_MAX, 1);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, f, "user.big", small,
				     sizeof(small)), -ERANGE);
	/* 17 value blocks of 4048 bytes, one tree leaf */
	assert_int_equal(blocks_of(t, f), 17 + 1);
	tfs_remount(t);
	value_expect(t, f, "user.big", XATTR_SIZE_MAX, 1);
	/* replaced by an inline value, then by one of two blocks */
	assert_int_equal(value_set(t, f, "user.big", FS_XATTR_INLINE, 2), 0);
	assert_int_equal(blocks_of(t, f), 1);
	value_expect(t, f, "user.big", FS_XATTR_INLINE, 2);
	assert_int_equal(value_set(t, f, "user.big", 5000, 3), 0);
	assert_int_equal(blocks_of(t, f), 2 + 1);
	tfs_remount(t);
	value_expect(t, f, "user.big", 5000, 3);
	assert_int_equal(fs_removexattr(t->fs, &t->ctx, f, "user.big"), 0);
	assert_int_equal(blocks_of(t, f), 0);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, f, "user.big", NULL, 0),
			 -ENODATA);
}

static void many_name(char *buf, size_t len, int i)
{
	snprintf(buf, len, "user.attr.%05d", i);
}

/* The whole list: every name once, nothing else. */
static void many_list_expect(struct tfs *t, uint64_t f, int n)
{
	ssize_t len = fs_listxattr(t->fs, &t->ctx, f, NULL, 0);
	char *buf, *p, name[32];
	uint8_t *seen = calloc(NMANY, 1);
	int count = 0, i;

	assert_true(len == (ssize_t)n * 16);
	buf = malloc((size_t)len);
	assert_non_null(buf);
	assert_non_null(seen);
	assert_int_equal(fs_listxattr(t->fs, &t->ctx, f, buf, (size_t)len - 1),
			 -ERANGE);
	assert_int_equal(fs_listxattr(t->fs, &t->ctx, f, buf, (size_t)len), len);
	for (p = buf; p < buf + len; p += strlen(p) + 1) {
		assert_int_equal(sscanf(p, "user.attr.%05d", &i), 1);
		many_name(name, sizeof(name), i);
		assert_string_equal(p, name);
		assert_false(seen[i]);
		seen[i] = 1;
		count++;
	}
	assert_int_equal(count, n);
	free(buf);
	free(seen);
}

/* Removes every other attribute, from first on. */
static void many_remove(struct tfs *t, uint64_t f, int first)
{
	char name[32];
	int i;

	for (i = first; i < NMANY; i += 2) {
		many_name(name, sizeof(name), i);
		assert_int_equal(fs_removexattr(t->fs, &t->ctx, f, name), 0);
	}
}

/* Value sizes: mostly inline, every seventh in a chain. */
static size_t many_len(int i)
{
	return i % 7 ? (size_t)(i % 50) : 300 + (size_t)i % 4000;
}

/* 10,000 attributes on one file: listed, read back, removed, space back. */
static void test_many_attributes(void **state)
{
	struct tfs *t = *state = tfs_new(32768, 1);
	uint64_t f = tfs_create(t, ROOT, "f");
	struct statvfs s0, s1;
	char name[32];
	int i;

	assert_int_equal(fs_syncfs(t->fs), 0);
	assert_int_equal(fs_statfs(t->fs, &s0), 0);
	for (i = 0; i < NMANY; i++) {
		many_name(name, sizeof(name), i);
		assert_int_equal(value_set(t, f, name, many_len(i), (uint64_t)i),
				 0);
	}
	assert_int_equal(fs_statfs(t->fs, &s1), 0);
	assert_true(s1.f_bfree < s0.f_bfree - NMANY / 10);
	many_list_expect(t, f, NMANY);
	tfs_remount(t);
	for (i = 0; i < NMANY; i++) {
		many_name(name, sizeof(name), i);
		value_expect(t, f, name, many_len(i), (uint64_t)i);
	}
	many_remove(t, f, 0);
	many_list_expect(t, f, NMANY / 2);
	tfs_remount(t);
	many_remove(t, f, 1);
	assert_int_equal(fs_listxattr(t->fs, &t->ctx, f, NULL, 0), 0);
	assert_int_equal(blocks_of(t, f), 0);
	assert_int_equal(fs_statfs(t->fs, &s1), 0);
	assert_int_equal(s1.f_bfree, s0.f_bfree);
}

/* Unlinking a file with large attributes frees every value block. */
static void test_unlink_frees(void **state)
{
	struct tfs *t = *state = tfs_new(16384, 1);
	uint64_t f = tfs_create(t, ROOT, "f");
	struct statvfs s0, s1;
	char name[32];
	int i;

	(void)tfs_create(t, ROOT, "keeps the root's name tree");
	assert_int_equal(fs_syncfs(t->fs), 0);
	assert_int_equal(fs_statfs(t->fs, &s0), 0);
	for (i = 0; i < 40; i++) {
		many_name(name, sizeof(name), i);
		assert_int_equal(value_set(t, f, name, XATTR_SIZE_MAX / (i + 1),
					   (uint64_t)i), 0);
	}
	assert_int_equal(fs_unlink(t->fs, ROOT, "f"), 0);
	assert_int_equal(fs_syncfs(t->fs), 0);
	assert_int_equal(fs_statfs(t->fs, &s1), 0);
	assert_int_equal(s1.f_bfree, s0.f_bfree);
	assert_int_equal(s1.f_ffree, s0.f_ffree + 1);
}

/* The smallest journal (64 blocks) takes 64 KiB sets on several files. */
static void test_small_journal(void **state)
{
	struct tfs *t = *state = tfs_new_with(8192, 1, &(struct fs_format_params){ .journal_blocks = 64 });
	uint64_t f[4];
	char name[16];
	int i, round;

	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		f[i] = tfs_create(t, ROOT, name);
	}
	for (round = 0; round < 3; round++)
		for (i = 0; i < 4; i++)
			assert_int_equal(value_set(t, f[i], "user.v",
						   XATTR_SIZE_MAX - round,
						   (uint64_t)(round * 4 + i)), 0);
	tfs_remount(t);
	for (i = 0; i < 4; i++)
		value_expect(t, f[i], "user.v", XATTR_SIZE_MAX - 2,
			     (uint64_t)(8 + i));
}

/* Power cut while a 64 KiB value replaces another: old or new, whole. */
static bool crash_replace_at(int64_t limit)
{
	struct tfs *t = tfs_new(8192, 1);
	uint64_t f = tfs_create(t, ROOT, "f"), w0;
	uint8_t *got = malloc(XATTR_SIZE_MAX), *v = malloc(XATTR_SIZE_MAX + 1);
	ssize_t n;
	bool cut;

	assert_non_null(got);
	assert_non_null(v);
	assert_int_equal(value_set(t, f, "user.v", XATTR_SIZE_MAX, 1), 0);
	w0 = tfs_cut_arm(t, limit);
	(void)value_set(t, f, "user.v", XATTR_SIZE_MAX - 1, 2);
	cut = tfs_cut_fire(t, w0, limit);
	n = fs_getxattr(t->fs, &t->ctx, f, "user.v", got, XATTR_SIZE_MAX);
	assert_true(n == XATTR_SIZE_MAX || n == XATTR_SIZE_MAX - 1);
	tfs_pattern(v, XATTR_SIZE_MAX + 1, n == XATTR_SIZE_MAX ? 1 : 2);
	assert_memory_equal(got, v, (size_t)n);
	free(got);
	free(v);
	tfs_free(t);
	return cut;
}

static void test_crash_replace(void **state)
{
	/* the cuts covered the whole commit */
	assert_true(tfs_cut_sweep(crash_replace_at, 3) > 20);
}

/* fs_check finds a value block that does not match its record. */
static void test_check_finds_damage(void **state)
{
	struct tfs *t = *state = tfs_new(8192, 1);
	uint64_t f = tfs_create(t, ROOT, "f");
	struct fs_check_report r;
	struct fs_xattr_rec_disk rec;
	struct fs_inode *ip;
	uint8_t blk[FS_BSIZE], *big;
	uint64_t vb, root;

	assert_int_equal(value_set(t, f, "user.v", 9000, 1), 0);
	assert_int_equal(fs_iget(t->fs, f, &ip), 0);
	root = ip->d.xattr_root;
	fs_iput(t->fs, ip);
	tfs_umount(t);
	assert_int_equal(fs_bdev_read(t->bdev, root, 1, blk), 0);
	/* the root is the only leaf: its first record is user.v */
	memcpy(&rec, blk + FS_NODE_HDR, sizeof(rec));
	assert_int_equal(rec.name_len, 6);
	assert_true(rec.flags & FS_XREC_EXTERNAL);
	vb = fs_le64(rec.v.ext.first);
	assert_int_equal(fs_bdev_read(t->bdev, vb, 1, blk), 0);
	blk[FS_XVALUE_HDR + 100] ^= 1;  /* valid block, wrong value */
	fs_bhdr_seal(blk);
	assert_int_equal(fs_bdev_write(t->bdev, vb, 1, blk), 0);
	tfs_mount(t);
	t->damaged = true;
	assert_int_equal(fs_check(t->fs, &r), -EUCLEAN);
	assert_non_null(strstr(r.first_error, "xattr 'user.v' is damaged"));
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, f, "user.v", NULL, 0),
			 9000);
	big = malloc(9000);
	assert_non_null(big);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, f, "user.v", big, 9000),
			 -EUCLEAN);
	free(big);
	/* it can still be removed: its blocks leak until fsck frees them */
	assert_int_equal(fs_removexattr(t->fs, &t->ctx, f, "user.v"), 0);
	assert_int_equal(fs_getxattr(t->fs, &t->ctx, f, "user.v", NULL, 0),
			 -ENODATA);
	assert_int_equal(fs_check(t->fs, &r), -EUCLEAN);
	assert_non_null(strstr(r.first_error, "in the bitmap but unreferenced"));
}

/* A format 1 filesystem (one xattr block per inode) is refused, never
 * misread: both superblock copies say 1.0. */
static void test_format1_refused(void **state)
{
	struct tfs *t = *state = tfs_new(2048, 1);
	struct fs_sb_disk sb;
	struct fs *fs;
	uint64_t copy;

	tfs_umount(t);
	for (copy = 0; copy < 2; copy++) {
		assert_int_equal(fs_bdev_read(t->bdev, copy, 1, &sb), 0);
		assert_int_equal(fs_le16(sb.version_major), 2);
		sb.version_major = fs_cpu16(1);
		sb.csum = 0;
		sb.csum = fs_cpu64(fs_csum(&sb, sizeof(sb), copy));
		assert_int_equal(fs_bdev_write(t->bdev, copy, 1, &sb), 0);
	}
	assert_int_equal(fs_mount(t->bdev, FS_MOUNT_RDONLY, &fs), -EOPNOTSUPP);
	assert_int_equal(fs_mount(t->bdev, 0, &fs), -EOPNOTSUPP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TFS_OWN(test_value_64k),
		TFS_OWN(test_many_attributes),
		TFS_OWN(test_unlink_frees),
		TFS_OWN(test_small_journal),
		cmocka_unit_test(test_crash_replace),
		TFS_OWN(test_check_finds_damage),
		TFS_OWN(test_format1_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
