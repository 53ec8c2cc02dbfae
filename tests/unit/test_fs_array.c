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

/*
 * Metadata blocks rewritten on one member together with their raidcore
 * checksum entries (a lost write of both, or damage resealed): raidcore
 * verifies them, the filesystem's own checksums fail.  The array's
 * redundancy still holds each as written - at RAID 5 the row rebuilt
 * without it, at RAID 6 the row's P and Q name it - and the filesystem
 * takes that reading when it proves itself (fs_bdev_reconsider), which
 * raidcore writes back; at RAID 1 and 10 the other copy, which proves
 * itself.  What the filesystem did not read, a scrub finds and decides
 * the same way.  Before, the mount or the first lookup failed on them,
 * and fsck could not tell which reading was right (U2 D6, D2).  One
 * block per row, so that every row keeps a reading to rebuild from.
 */
static void test_resealed_metadata(void **state)
{
	static const struct { enum rc_level level; int n; uint32_t sb; } lv[] = {
		{ RC_RAID5, 4, 48 }, { RC_RAID6, 5, 48 }, { RC_RAID1, 2, 16 },
		{ RC_RAID10, 4, 16 },
	};
	struct fs_ctx ctx = { .uid = 0, .gid = 0, .umask = 022 };

	(void)state;
	for (size_t k = 0; k < sizeof(lv) / sizeof(lv[0]); k++) {
		static uint8_t seen[1u << 16];
		struct rc_scrub_report sr;
		struct fs_check_report cr;
		struct rc_member_status ms;
		struct rc_stripe_map m;
		struct rc_testbed tb;
		struct rc_array *a;
		struct fs_bdev *b;
		struct rc_info info;
		uint64_t errs = 0;
		uint32_t bad = 0;
		uint8_t blk[4096];
		struct fs *fs;

		formatted(&tb, lv[k].n, lv[k].level, lv[k].sb);
		fs = mount_array(&tb, 0, &a, &b);
		write_files(fs, &ctx, 1);
		unmount_array(fs, a, b);
		a = tb_assemble(&tb, 0, RC_ASSEMBLE_RDONLY);
		rc_array_info(a, &info);
		struct rc_geom g = { .level = info.level, .layout = info.layout,
				     .members = info.members,
				     .chunk_blocks = info.chunk_blocks,
				     .member_blocks = 1ull << 20 };
		memset(seen, 0, sizeof(seen));
		for (uint64_t lb = 1; lb < info.blocks; lb++) {
			uint64_t stripe, row_key, mb, abs, tblk;
			uint8_t table[4096];
			uint32_t col, r;
			const char *why;
			struct rc_sb sb;
			int mem;

			assert_int_equal(rc_read(a, lb, 1, blk), 0);
			if (fs_le32(((struct fs_bhdr *)blk)->magic) != FS_BLK_MAGIC ||
			    !fs_block_proves(blk, lb))
				continue;
			rc_geom_locate(&g, lb, &stripe, &col, &r);
			row_key = stripe * info.chunk_blocks + r;
			if (row_key >= sizeof(seen) * 8 ||
			    (seen[row_key / 8] >> (row_key % 8) & 1))
				continue;
			seen[row_key / 8] |= (uint8_t)(1u << (row_key % 8));
			rc_geom_stripe(&g, stripe, &m);
			mem = (int)m.col[col].member;
			assert_int_equal(rc_dev_read(tb.mem[mem], table, 4096, 0), 0);
			assert_int_equal(rc_sb_decode(table, &sb, &why), 0);
			mb = m.col[col].offset + r;
			abs = sb.data_offset + mb;
			tblk = sb.csum_offset + mb / RC_CSUM_PER_BLOCK;
			for (int i = 0; i < 64; i++)
				blk[1024 + i] ^= 0xa5;
			assert_int_equal(rc_dev_write(tb.mem[mem], blk, 4096,
						      abs * 4096), 0);
			assert_int_equal(rc_dev_read(tb.mem[mem], table, 4096,
						     tblk * 4096), 0);
			rc_csum_set(table, (uint32_t)(mb % RC_CSUM_PER_BLOCK),
				    rc_block_csum(blk, abs));
			rc_csum_block_seal(table, rc_table_seed(sb.array_uuid,
								sb.member_uuid),
					   tblk);
			assert_int_equal(rc_dev_write(tb.mem[mem], table, 4096,
						      tblk * 4096), 0);
			bad++;
		}
		assert_int_equal(rc_array_close(a), 0);
		assert_true(bad >= 3);
		/* mounted: every file reads, the whole tree checks */
		fs = mount_array(&tb, 0, &a, &b);
		check_files(fs, 1);
		assert_int_equal(fs_check(fs, &cr), 0);
		if (cr.errors)
			fail_msg("level %d: %llu errors: %s", lv[k].level,
				 (unsigned long long)cr.errors, cr.first_error);
		/* what the filesystem did not read is found by a scrub, the
		 * filesystem's word deciding there too */
		assert_int_equal(rc_scrub(a, true, &sr, NULL, NULL), 0);
		if (sr.parity_mismatches || sr.unrecoverable)
			fail_msg("level %d: the scrub left %llu mismatches, %llu "
				 "unrecoverable", lv[k].level,
				 (unsigned long long)sr.parity_mismatches,
				 (unsigned long long)sr.unrecoverable);
		for (int i = 0; i < lv[k].n; i++) {
			assert_int_equal(rc_array_member_status(a, i, &ms), 0);
			errs += ms.repaired;
		}
		assert_true(errs >= bad);
		unmount_array(fs, a, b);
		/* the readings taken were written back: found good next time */
		fs = mount_array(&tb, 0, &a, &b);
		check_files(fs, 1);
		unmount_array(fs, a, b);
		tb_fini(&tb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fs_on_raid5),
		cmocka_unit_test(test_vouched_metadata),
		cmocka_unit_test(test_write_over_lost_block),
		cmocka_unit_test(test_resealed_metadata),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
