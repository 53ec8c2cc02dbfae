/*
 * test_fs_array: the filesystem on a real raidcore array (RAID 5 of four
 * memory members) through fs_bdev_from_array: format, files, unmount,
 * reassemble, then the same with a member missing (degraded reads and
 * writes are invisible to the filesystem), then again with the stale
 * member offered back.
 */
#include "fs_test_util.h"
#include "rc_test_util.h"
#include "fs_int.h"
#include "geom.h"
#include "ondisk.h"
#include <sys/stat.h>

#define ROOT FS_ROOT_INO

static void write_files(struct fs *fs, struct fs_ctx *ctx, int gen)
{
	static uint8_t w[3 << 20];
	struct fs_attr a;
	char name[32];
	uint64_t fh;
	int i;

	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "g%d-%d", gen, i);
		tfs_pattern(w, sizeof(w), (uint64_t)(gen * 10 + i));
		assert_int_equal(fs_create(fs, ctx, ROOT, name, 0644, O_RDWR, &a,
					   &fh), 0);
		assert_int_equal(fs_write(fs, a.ino, 0, sizeof(w) - i * 1000, w, 0),
				 sizeof(w) - i * 1000);
		fs_release(fs, a.ino, fh);
		fs_forget(fs, a.ino, 1);
	}
	assert_int_equal(fs_syncfs(fs), 0);
}

static void check_files(struct fs *fs, int gen)
{
	static uint8_t w[3 << 20], r[3 << 20];
	struct fs_attr a;
	char name[32];
	int i;

	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "g%d-%d", gen, i);
		tfs_pattern(w, sizeof(w), (uint64_t)(gen * 10 + i));
		assert_int_equal(fs_lookup(fs, ROOT, name, &a), 0);
		fs_forget(fs, a.ino, 1);
		assert_int_equal(fs_read(fs, a.ino, 0, sizeof(r), r),
				 sizeof(w) - i * 1000);
		assert_memory_equal(r, w, sizeof(w) - i * 1000);
	}
}

static struct fs *mount_array(struct rc_testbed *tb, uint32_t skip,
			      struct rc_array **a, struct fs_bdev **b)
{
	struct fs *fs;

	*a = tb_assemble(tb, skip, 0);
	assert_int_equal(fs_bdev_from_array(*a, b), 0);
	assert_int_equal(fs_mount(*b, 0, &fs), 0);
	return fs;
}

static void unmount_array(struct fs *fs, struct rc_array *a, struct fs_bdev *b)
{
	assert_int_equal(fs_unmount(fs), 0);
	fs_bdev_close(b);
	assert_int_equal(rc_array_close(a), 0);
}

/* tb's n memory members of 64 MiB made an array of level, with an empty
 * filesystem on it; the array closed again. */
static void formatted(struct rc_testbed *tb, int n, enum rc_level level,
		      uint32_t stripe_blocks)
{
	struct rc_array *a;
	struct fs_bdev *b;

	tb_init(tb, n, 64ull << 20);
	tb_create(tb, level, 64 << 10, 0);
	a = tb_assemble(tb, 0, 0);
	assert_int_equal(fs_bdev_from_array(a, &b), 0);
	assert_true(b->stripe_blocks == stripe_blocks);
	assert_int_equal(fs_format(b, NULL), 0);
	fs_bdev_close(b);
	assert_int_equal(rc_array_close(a), 0);
}

static void test_fs_on_raid5(void **state)
{
	struct fs_ctx ctx = { .uid = 0, .gid = 0, .umask = 022 };
	struct rc_testbed tb;
	struct rc_array *a;
	struct fs_bdev *b;
	struct fs *fs;

	(void)state;
	formatted(&tb, 4, RC_RAID5, 48);
	fs = mount_array(&tb, 0, &a, &b);
	write_files(fs, &ctx, 1);
	unmount_array(fs, a, b);

	/* member 2 missing: everything reads, new files write */
	fs = mount_array(&tb, 1u << 2, &a, &b);
	check_files(fs, 1);
	write_files(fs, &ctx, 2);
	unmount_array(fs, a, b);

	/* member 2 is stale now and left out; the rest carry everything */
	fs = mount_array(&tb, 0, &a, &b);
	check_files(fs, 1);
	check_files(fs, 2);
	unmount_array(fs, a, b);
	tb_fini(&tb);
}

/*
 * A degraded RAID 1 whose surviving member's first checksum table block
 * is damaged: raidcore cannot verify the 511 blocks it covers and has no
 * copy to check them against.  The filesystem's metadata among them
 * vouches for itself (its checksums are seeded with its block numbers),
 * so the filesystem mounts and every file outside that range reads; what
 * file data lies in it reads as EIO, never as unverified bytes.  Before,
 * the mount failed: every file unreachable, data intact (a tester's find).
 */
static void test_vouched_metadata(void **state)
{
	struct fs_ctx ctx = { .uid = 0, .gid = 0, .umask = 022 };
	static uint8_t buf[3 << 20];
	uint8_t blk[4096];
	struct rc_testbed tb;
	struct rc_array *a;
	struct fs_bdev *b;
	struct fs_attr at;
	const char *why;
	struct rc_sb sb;
	struct fs *fs;
	int ok = 0;

	(void)state;
	formatted(&tb, 2, RC_RAID1, 16);
	fs = mount_array(&tb, 0, &a, &b);
	write_files(fs, &ctx, 1);
	unmount_array(fs, a, b);

	assert_int_equal(rc_dev_read(tb.mem[0], blk, sizeof(blk), 0), 0);
	assert_int_equal(rc_sb_decode(blk, &sb, &why), 0);
	memset(blk, 0x5a, sizeof(blk));         /* table block 0: garbage */
	assert_int_equal(rc_dev_write(tb.mem[0], blk, sizeof(blk),
				      sb.csum_offset * 4096), 0);
	fs = mount_array(&tb, 1u << 1, &a, &b);
	/* every file is found; each reads whole or fails with EIO */
	for (int i = 0; i < 4; i++) {
		char name[32];
		ssize_t n;

		snprintf(name, sizeof(name), "g1-%d", i);
		assert_int_equal(fs_lookup(fs, ROOT, name, &at), 0);
		fs_forget(fs, at.ino, 1);
		n = fs_read(fs, at.ino, 0, sizeof(buf), buf);
		assert_true(n == (ssize_t)(sizeof(buf) - i * 1000) || n == -EIO);
		ok += n > 0;
	}
	assert_true(ok > 0);
	unmount_array(fs, a, b);
	tb_fini(&tb);
}

/* Block lblk of file ino: where the filesystem put it. */
static uint64_t file_pblk(struct fs *fs, uint64_t ino, uint64_t lblk)
{
	struct fs_inode *ip;
	struct fs_extent e;
	bool found;

	assert_int_equal(fs_iget(fs, ino, &ip), 0);
	assert_int_equal(fs_ext_map(fs, ip, lblk, &e, &found), 0);
	assert_true(found);
	fs_iput(fs, ip);
	return e.pblk + (lblk - e.lblk);
}

/*
 * A degraded RAID 5 (member 3 missing) whose member 0 lost one block to
 * damage, in a row where member 3 held data too: two data blocks of the
 * row are lost, and a write over one of them cannot be given parity.  The
 * write is dropped: that file's fsync fails (once, as Linux reports a
 * writeback error), syncfs fails once, and everything else goes on - the
 * filesystem stays writable, other files' writes are durable, a write to
 * the row's good block goes in by the other parity method.  Before, the
 * row's stripe stayed dirty and failed every later commit: the journal
 * commit failed, the filesystem went read-only, and the unmount failed
 * with what the cache held lost.
 */
static void test_write_over_lost_block(void **state)
{
	struct fs_ctx ctx = { .uid = 0, .gid = 0, .umask = 022 };
	static uint8_t blk[4096], back[4096];
	uint64_t p0, s, lost = 0, good = 0, fh;
	struct rc_stripe_map m;
	struct rc_geom g = { .level = RC_RAID5, .members = 4,
			     .chunk_blocks = 16, .member_blocks = 1ull << 20 };
	struct rc_testbed tb;
	struct rc_array *a;
	struct fs_bdev *b;
	struct fs_attr at, nat;
	const char *why;
	struct rc_sb sb;
	struct fs *fs;
	int c0 = -1;

	(void)state;
	g.layout = rc_geom_default_layout(RC_RAID5);
	formatted(&tb, 4, RC_RAID5, 48);
	fs = mount_array(&tb, 0, &a, &b);
	write_files(fs, &ctx, 1);
	assert_int_equal(fs_lookup(fs, ROOT, "g1-0", &at), 0);
	fs_forget(fs, at.ino, 1);
	p0 = file_pblk(fs, at.ino, 0);
	/* a stripe inside the file whose data columns are on members 0
	 * and 3, its parity on 1 or 2 */
	for (s = p0 / 48 + 1; s < p0 / 48 + 14 && c0 < 0; s++) {
		int c3 = -1;

		rc_geom_stripe(&g, s, &m);
		for (uint32_t c = 0; c < m.ndata; c++) {
			if (m.col[c].member == 0)
				c0 = (int)c;
			if (m.col[c].member == 3)
				c3 = (int)c;
		}
		if (c3 < 0)
			c0 = -1;
	}
	assert_true(c0 >= 0);
	s--;
	lost = s * 48 + (uint64_t)c0 * 16 + 3;          /* row 3 */
	for (uint32_t c = 0; c < m.ndata; c++)
		if (m.col[c].member != 0 && m.col[c].member != 3)
			good = s * 48 + c * 16 + 3;
	assert_int_equal(file_pblk(fs, at.ino, lost - p0), lost);
	unmount_array(fs, a, b);

	assert_int_equal(rc_dev_read(tb.mem[0], blk, sizeof(blk), 0), 0);
	assert_int_equal(rc_sb_decode(blk, &sb, &why), 0);
	memset(blk, 0x5a, sizeof(blk));
	assert_int_equal(rc_dev_write(tb.mem[0], blk, sizeof(blk),
				      (sb.data_offset + m.col[c0].offset + 3) *
				      4096), 0);

	fs = mount_array(&tb, 1u << 3, &a, &b);
	assert_int_equal(fs_read(fs, at.ino, (lost - p0) * 4096, 4096, back),
			 -EIO);
	tfs_pattern(blk, sizeof(blk), 99);
	assert_int_equal(fs_write(fs, at.ino, (lost - p0) * 4096, 4096, blk, 0),
			 4096);
	assert_int_equal(fs_fsync(fs, at.ino, 1), -EIO);
	assert_int_equal(fs_fsync(fs, at.ino, 1), 0);       /* told once */
	assert_int_equal(fs_syncfs(fs), -EIO);
	assert_int_equal(fs_syncfs(fs), 0);
	/* the dropped block reads as before */
	assert_int_equal(fs_read(fs, at.ino, (lost - p0) * 4096, 4096, back),
			 -EIO);
	/* the row's good block takes a write */
	assert_int_equal(fs_write(fs, at.ino, (good - p0) * 4096, 4096, blk, 0),
			 4096);
	assert_int_equal(fs_fsync(fs, at.ino, 1), 0);
	/* the filesystem is writable, other files durable */
	assert_int_equal(fs_create(fs, &ctx, ROOT, "after", 0644, O_RDWR, &nat,
				   &fh), 0);
	assert_int_equal(fs_write(fs, nat.ino, 0, 4096, blk, 0), 4096);
	assert_int_equal(fs_fsync(fs, nat.ino, 0), 0);
	fs_release(fs, nat.ino, fh);
	fs_forget(fs, nat.ino, 1);
	unmount_array(fs, a, b);

	fs = mount_array(&tb, 1u << 3, &a, &b);
	assert_int_equal(fs_read(fs, at.ino, (good - p0) * 4096, 4096, back),
			 4096);
	assert_memory_equal(back, blk, 4096);
	assert_int_equal(fs_lookup(fs, ROOT, "after", &nat), 0);
	fs_forget(fs, nat.ino, 1);
	assert_int_equal(fs_read(fs, nat.ino, 0, 4096, back), 4096);
	assert_memory_equal(back, blk, 4096);
	unmount_array(fs, a, b);
	tb_fini(&tb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fs_on_raid5),
		cmocka_unit_test(test_vouched_metadata),
		cmocka_unit_test(test_write_over_lost_block),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
