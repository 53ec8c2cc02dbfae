/*
 * test_badinput: what assembly and creation do with input they must not
 * trust - corrupt superblocks, a newer format, unknown incompat features,
 * members of two arrays, the same member twice, stale members, members in
 * the wrong order, too many members missing.  Each gets a clear error (or
 * a degraded array with the bad device left out) and nothing is written
 * when assembly is refused.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <xxhash.h>
#include "rc_test_util.h"
#include "ondisk.h"

#define DEV_BYTES (4ull << 20)

static void setup_raid5(struct rc_testbed *tb, int n)
{
	struct rc_array *a;
	uint8_t buf[RC_BLOCK_SIZE];

	tb_init(tb, n, DEV_BYTES);
	tb_create(tb, RC_RAID5, 16384, 0);
	a = tb_assemble(tb, 0, 0);
	for (uint64_t b = 0; b < 100; b++) {
		tb_pattern(buf, b, 1);
		assert_int_equal(rc_write(a, b, 1, buf), 0);
	}
	assert_int_equal(rc_array_close(a), 0);
}

static void check_data(struct rc_array *a)
{
	uint8_t buf[RC_BLOCK_SIZE];

	for (uint64_t b = 0; b < 100; b++) {
		assert_int_equal(rc_read(a, b, 1, buf), 0);
		assert_true(tb_check(buf, b, 1));
	}
}

/* Refused, with a message containing want, and no byte written. */
static void expect_refused(struct rc_testbed *tb, struct rc_dev **devs,
			   unsigned flags, int err_want, const char *want)
{
	uint64_t before = tb_media_hash(tb);
	struct rc_array *a = NULL;
	char err[512];
	int ret;

	ret = tb_try_assemble(tb, devs, flags, &a, err, sizeof(err));
	assert_int_equal(ret, err_want);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not say \"%s\"", err, want);
	assert_true(tb_media_hash(tb) == before);
}

static struct rc_array *expect_degraded(struct rc_testbed *tb,
					struct rc_dev **devs)
{
	struct rc_array *a = NULL;
	struct rc_info info;
	char err[512];

	assert_int_equal(tb_try_assemble(tb, devs, 0, &a, err, sizeof(err)), 0);
	rc_array_info(a, &info);
	assert_true(info.degraded);
	check_data(a);
	return a;
}

/* Byte offset of superblock copy c (of 4: two at each end) on device i. */
static uint64_t sb_copy_off(struct rc_testbed *tb, int i, int c)
{
	return rc_sb_copy_block((uint32_t)c, tb->mem[i]->size / RC_BLOCK_SIZE) *
	       RC_BLOCK_SIZE;
}

/* Rewrites superblock copy c of device i through fn, re-sealed. */
static void sb_edit(struct rc_testbed *tb, int i, int c,
		    void (*fn)(uint8_t *raw))
{
	uint64_t at = sb_copy_off(tb, i, c);
	uint8_t raw[RC_BLOCK_SIZE];
	uint64_t sum;

	assert_int_equal(rc_dev_read(tb->mem[i], raw, RC_BLOCK_SIZE, at), 0);
	fn(raw);
	memset(raw + 4088, 0, 8);
	sum = htole64(XXH3_64bits(raw, RC_BLOCK_SIZE));
	memcpy(raw + 4088, &sum, 8);
	assert_int_equal(rc_dev_write(tb->mem[i], raw, RC_BLOCK_SIZE, at), 0);
}

static void newer_major(uint8_t *raw)
{
	uint16_t v = htole16(RC_SB_VERSION_MAJOR + 1);

	memcpy(raw + offsetof(struct rc_sb_disk, version_major), &v, 2);
}

static void unknown_incompat(uint8_t *raw)
{
	uint64_t v = htole64(1ull << 40);

	memcpy(raw + offsetof(struct rc_sb_disk, feature_incompat), &v, 8);
}

static void flip_byte(struct rc_testbed *tb, int i, uint64_t off)
{
	uint8_t b;

	rc_dev_read(tb->mem[i], &b, 1, off);
	b ^= 0x20;
	rc_dev_write(tb->mem[i], &b, 1, off);
}

static void test_bad_checksum(void **state)
{
	struct rc_testbed tb;
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a;
	struct rc_info info;

	setup_raid5(&tb, 4);
	/* One copy torn: the other copy serves, nothing is degraded. */
	flip_byte(&tb, 1, 300);
	tb_devs(&tb, devs, false, 0);
	assert_int_equal(tb_try_assemble(&tb, devs, 0, &a, NULL, 0), 0);
	rc_array_info(a, &info);
	assert_false(info.degraded);
	check_data(a);
	assert_int_equal(rc_array_close(a), 0);
	/* Both copies at the start bad (its first MiB zeroed, say): the
	 * copies at the end keep the member in, nothing is degraded. */
	flip_byte(&tb, 2, 300);
	flip_byte(&tb, 2, RC_BLOCK_SIZE + 300);
	tb_devs(&tb, devs, false, 0);
	assert_int_equal(tb_try_assemble(&tb, devs, 0, &a, NULL, 0), 0);
	rc_array_info(a, &info);
	assert_false(info.degraded);
	check_data(a);
	assert_int_equal(rc_array_close(a), 0);
	/* All four bad: the member is left out, the array degraded. */
	for (int c = 0; c < RC_SB_COPIES; c++)
		flip_byte(&tb, 3, sb_copy_off(&tb, 3, c) + 300);
	tb_devs(&tb, devs, false, 0);
	a = expect_degraded(&tb, devs);
	assert_int_equal(rc_array_close(a), 0);
	/* Two members with bad superblocks: refused, naming the slots. */
	tb_fini(&tb);
	setup_raid5(&tb, 4);
	for (int i = 0; i < 2; i++)
		for (int c = 0; c < RC_SB_COPIES; c++)
			flip_byte(&tb, i, sb_copy_off(&tb, i, c) + 100);
	tb_devs(&tb, devs, false, 0);
	expect_refused(&tb, devs, 0, -ENODEV, "slot 0");
	tb_fini(&tb);
}

static void test_newer_format(void **state)
{
	void (*edits[])(uint8_t *) = { newer_major, unknown_incompat };

	for (int e = 0; e < 2; e++) {
		struct rc_testbed tb;
		struct rc_dev *devs[TB_MAX];

		setup_raid5(&tb, 3);
		for (int c = 0; c < RC_SB_COPIES; c++)
			sb_edit(&tb, 0, c, edits[e]);
		tb_devs(&tb, devs, false, 0);
		expect_refused(&tb, devs, 0, -EPROTONOSUPPORT, "mem0");
		tb_fini(&tb);
	}
}

static void test_two_arrays(void **state)
{
	struct rc_testbed x, y;
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a;

	setup_raid5(&x, 4);
	setup_raid5(&y, 4);
	/* Two of each: ambiguous, refused. */
	tb_devs(&x, devs, false, 0);
	rc_dev_close(devs[2]);
	rc_dev_close(devs[3]);
	devs[2] = tb_borrow(&y, 2);
	devs[3] = tb_borrow(&y, 3);
	expect_refused(&x, devs, 0, -EINVAL, "different arrays");
	/* Three of x and one of y: x assembles, y's member left out. */
	tb_devs(&x, devs, false, 0);
	rc_dev_close(devs[3]);
	devs[3] = tb_borrow(&y, 3);
	a = expect_degraded(&x, devs);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&x);
	tb_fini(&y);
}

static void test_duplicates(void **state)
{
	struct rc_testbed tb;
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a;
	struct rc_create_params p = { .level = RC_RAID5, .chunk_bytes = 16384 };
	char err[256];

	setup_raid5(&tb, 4);
	/* Member 2 given twice (as member 3's place): left out once. */
	tb_devs(&tb, devs, false, 0);
	rc_dev_close(devs[3]);
	devs[3] = tb_borrow(&tb, 2);
	a = expect_degraded(&tb, devs);
	assert_int_equal(rc_array_close(a), 0);
	/* Creating over the same device twice is refused. */
	for (int i = 0; i < 3; i++)
		devs[i] = tb_borrow(&tb, i);
	devs[3] = tb_borrow(&tb, 1);
	assert_int_equal(rc_array_create_err(&p, devs, 4, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "same device"));
	for (int i = 0; i < 4; i++)
		rc_dev_close(devs[i]);
	tb_fini(&tb);
}

/* Copies superblock copy c of device from over device to's. */
static void sb_copy(struct rc_testbed *tb, int from, int to, int c)
{
	uint8_t raw[RC_BLOCK_SIZE];

	assert_int_equal(rc_dev_read(tb->mem[from], raw, RC_BLOCK_SIZE,
				     sb_copy_off(tb, from, c)), 0);
	assert_int_equal(rc_dev_write(tb->mem[to], raw, RC_BLOCK_SIZE,
				      sb_copy_off(tb, to, c)), 0);
}

/*
 * A device whose superblock names a member it is not: member 3's
 * superblocks over member 2's (member 2 then claims member 3's slot, a
 * tie at equal events), members 0's and 1's exchanged, and a whole copy
 * of member 1 standing for member 2.  Each was placed by its superblock
 * before (the first device named took the slot), every block of the
 * misplaced one failed its checks, and a repair wrote that judgment over
 * the data.  Now refused, nothing written; the real members still
 * assemble, and a copy named alone with the others stands in.
 */
static void test_mislabelled_members(void **state)
{
	struct rc_testbed tb;
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a;
	uint8_t **snap;

	setup_raid5(&tb, 4);
	snap = tb_snapshot(&tb);
	for (int c = 0; c < RC_SB_COPIES; c++)
		sb_copy(&tb, 3, 2, c);
	tb_devs(&tb, devs, false, 0);
	expect_refused(&tb, devs, 0, -EINVAL,
		       "says member 3, but its checksum tables were written "
		       "for member 2");
	/* Without the mislabelled device: degraded, every block intact. */
	tb_devs(&tb, devs, false, 0);
	rc_dev_close(devs[2]);
	devs[2] = NULL;
	a = expect_degraded(&tb, devs);
	assert_int_equal(rc_array_close(a), 0);

	tb_restore(&tb, snap);
	for (int c = 0; c < RC_SB_COPIES; c++) {
		uint8_t raw[RC_BLOCK_SIZE];

		assert_int_equal(rc_dev_read(tb.mem[0], raw, RC_BLOCK_SIZE,
					     sb_copy_off(&tb, 0, c)), 0);
		sb_copy(&tb, 1, 0, c);
		assert_int_equal(rc_dev_write(tb.mem[1], raw, RC_BLOCK_SIZE,
					      sb_copy_off(&tb, 1, c)), 0);
	}
	tb_devs(&tb, devs, false, 0);
	expect_refused(&tb, devs, 0, -EINVAL, "swapped or copied");

	/* A whole copy of member 1 (a dd clone) in member 2's place. */
	tb_restore(&tb, snap);
	{
		uint8_t *img = malloc(DEV_BYTES);

		assert_non_null(img);
		assert_int_equal(rc_dev_read(tb.mem[1], img, DEV_BYTES, 0), 0);
		assert_int_equal(rc_dev_write(tb.mem[2], img, DEV_BYTES, 0), 0);
		free(img);
	}
	tb_devs(&tb, devs, false, 0);
	expect_refused(&tb, devs, 0, -EINVAL, "both hold member 1");
	tb_snapshot_free(&tb, snap);
	tb_fini(&tb);
}

/* Block b written again (generation 1) on the open array a, flushed. */
static void run_write_on(struct rc_array *a, uint64_t b)
{
	uint8_t buf[RC_BLOCK_SIZE];

	tb_pattern(buf, b, 1);
	assert_int_equal(rc_write(a, b, 1, buf), 0);
	assert_int_equal(rc_flush(a), 0);
}

/* One run of the array (members in skip away): block b written with
 * generation gen, then a clean close - updates of its superblocks. */
static void run_write(struct rc_testbed *tb, uint32_t skip, uint64_t b,
		      uint32_t gen)
{
	struct rc_array *a = tb_assemble(tb, skip, 0);
	uint8_t buf[RC_BLOCK_SIZE];

	tb_pattern(buf, b, gen);
	assert_int_equal(rc_write(a, b, 1, buf), 0);
	assert_int_equal(rc_array_close(a), 0);
}

/* An old copy of member 1 (taken before the array's last run) in member
 * 2's place: its superblock is behind member 1's own, so it is the copy,
 * left out as mdadm leaves out a device behind its member; the array
 * runs degraded without slot 2, every block intact.  Refused before, as
 * a copy at equal events still is (test_mislabelled_members). */
static void test_old_copy_left_out(void **state)
{
	struct rc_testbed tb;
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a;
	uint8_t *img = malloc(DEV_BYTES);

	assert_non_null(img);
	setup_raid5(&tb, 4);
	assert_int_equal(rc_dev_read(tb.mem[1], img, DEV_BYTES, 0), 0);
	run_write(&tb, 0, 7, 1);                       /* the same data */
	assert_int_equal(rc_dev_write(tb.mem[2], img, DEV_BYTES, 0), 0);
	tb_devs(&tb, devs, false, 0);
	a = expect_degraded(&tb, devs);
	assert_int_equal(rc_array_close(a), 0);
	free(img);
	tb_fini(&tb);
}

/* RAID 1 of 2: member 0's device ran alone once (side X), and a copy of
 * it from before ran on with member 1 (side Y, more updates since).  X's
 * device is behind Y's, and its history may be its own (it ran without
 * member 1, which Y ran with): left out, never written, and said to be
 * a possible split brain; Y's members assemble whole.  Two such old
 * devices alike, named before the newest one, are left out too (they
 * refused by the order they were named in: V1). */
static void test_old_copy_split_left_out(void **state)
{
	struct rc_testbed tb;
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a;
	struct rc_info info;
	uint8_t *fork = malloc(DEV_BYTES), *x = malloc(DEV_BYTES);
	char err[512];

	assert_non_null(fork);
	assert_non_null(x);
	tb_init(&tb, 3, DEV_BYTES);
	tb.n = 2;
	tb_create(&tb, RC_RAID1, 16384, 0);
	run_write(&tb, 0, 1, 1);
	assert_int_equal(rc_dev_read(tb.mem[0], fork, DEV_BYTES, 0), 0);
	run_write(&tb, 1u << 1, 2, 2);                  /* X: alone */
	assert_int_equal(rc_dev_read(tb.mem[0], x, DEV_BYTES, 0), 0);
	assert_int_equal(rc_dev_write(tb.mem[0], fork, DEV_BYTES, 0), 0);
	for (uint32_t k = 0; k < 4; k++)                /* Y, ahead */
		run_write(&tb, 0, 3, 3 + k);
	assert_int_equal(rc_dev_write(tb.mem[2], x, DEV_BYTES, 0), 0);
	tb.n = 3;
	tb_devs(&tb, devs, false, 0);
	assert_int_equal(tb_try_assemble(&tb, devs, 0, &a, err, sizeof(err)),
			 0);
	rc_array_info(a, &info);
	assert_false(info.degraded);
	assert_int_equal(rc_array_close(a), 0);
	assert_int_equal(rc_dev_read(tb.mem[2], fork, DEV_BYTES, 0), 0);
	assert_memory_equal(fork, x, DEV_BYTES);
	/* X twice (mem 0 and 1), named before Y's member 0 (mem 2) */
	assert_int_equal(rc_dev_read(tb.mem[0], fork, DEV_BYTES, 0), 0);
	assert_int_equal(rc_dev_write(tb.mem[0], x, DEV_BYTES, 0), 0);
	assert_int_equal(rc_dev_read(tb.mem[2], x, DEV_BYTES, 0), 0);
	assert_int_equal(rc_dev_write(tb.mem[1], x, DEV_BYTES, 0), 0);
	assert_int_equal(rc_dev_write(tb.mem[2], fork, DEV_BYTES, 0), 0);
	tb_devs(&tb, devs, false, 0);
	assert_int_equal(tb_try_assemble(&tb, devs, 0, &a, err, sizeof(err)),
			 0);
	rc_array_info(a, &info);
	assert_true(info.degraded);             /* Y's member 1 not named */
	assert_int_equal(rc_array_close(a), 0);
	free(fork);
	free(x);
	tb_fini(&tb);
}

/* Device i's superblocks as the next update writes them (what a crash
 * during it leaves on the slots it reached). */
static void sb_next_update(struct rc_testbed *tb, int i)
{
	uint8_t raw[RC_BLOCK_SIZE];
	struct rc_sb sb;

	for (int c = 0; c < RC_SB_COPIES; c++) {
		assert_int_equal(rc_dev_read(tb->mem[i], raw, RC_BLOCK_SIZE,
					     sb_copy_off(tb, i, c)), 0);
		assert_int_equal(rc_sb_decode(raw, &sb, NULL), 0);
		sb.events++;
		sb.prev_utime_ns = sb.utime_ns;
		sb.utime_ns += 1000000000ull;
		rc_sb_encode(&sb, raw);
		assert_int_equal(rc_dev_write(tb->mem[i], raw, RC_BLOCK_SIZE,
					      sb_copy_off(tb, i, c)), 0);
	}
}

/* Two copies of a whole array (a backup, a cloned disk set), each
 * assembled and written on its own the same number of times: members
 * 0 and 1 of one with 2 and 3 of the other carry the same events, and
 * were taken together - a mix of both histories, which fsck called
 * clean (a tester's find, x1).  Refused, nothing written; each copy
 * alone still assembles whole. */
static void test_clone_mix_refused(void **state)
{
	struct rc_testbed tb;
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a;
	struct rc_sb sa, sb;
	uint8_t **clone, **side_a, **side_b;
	uint8_t buf[RC_BLOCK_SIZE];

	setup_raid5(&tb, 4);
	clone = tb_snapshot(&tb);
	for (int side = 0; side < 2; side++) {
		if (side) {
			side_a = tb_snapshot(&tb);
			tb_restore(&tb, clone);
		}
		run_write(&tb, 0, 5, 1);       /* the same data: an update */
	}
	/* members 0 and 1 of side A, 2 and 3 of side B */
	for (int i = 0; i < 2; i++)
		assert_int_equal(rc_dev_write(tb.mem[i], side_a[i], DEV_BYTES,
					      0), 0);
	assert_int_equal(rc_dev_read(tb.mem[0], buf, RC_BLOCK_SIZE, 0), 0);
	assert_int_equal(rc_sb_decode(buf, &sa, NULL), 0);
	assert_int_equal(rc_dev_read(tb.mem[3], buf, RC_BLOCK_SIZE, 0), 0);
	assert_int_equal(rc_sb_decode(buf, &sb, NULL), 0);
	assert_true(sa.events == sb.events);
	tb_devs(&tb, devs, false, 0);
	expect_refused(&tb, devs, 0, -EINVAL, "SPLIT BRAIN");
	/* side A one update further, cut short after its members 0 and 1:
	 * B's members, one behind, would pass as the slots a crash left
	 * behind in the last update, but carry another update's time */
	side_b = tb_snapshot(&tb);
	tb_restore(&tb, side_a);
	for (int i = 0; i < 2; i++)
		sb_next_update(&tb, i);
	for (int i = 2; i < 4; i++)
		assert_int_equal(rc_dev_write(tb.mem[i], side_b[i], DEV_BYTES,
					      0), 0);
	tb_snapshot_free(&tb, side_b);
	assert_int_equal(rc_dev_read(tb.mem[0], buf, RC_BLOCK_SIZE, 0), 0);
	assert_int_equal(rc_sb_decode(buf, &sa, NULL), 0);
	if (sa.events != sb.events + 1)
		fail_msg("events %llu and %llu", (unsigned long long)sa.events, (unsigned long long)sb.events);
	tb_devs(&tb, devs, false, 0);
	expect_refused(&tb, devs, 0, -EINVAL, "one update behind");
	/* the same cut on side A alone: a crash's suffix, assembled */
	tb_restore(&tb, side_a);
	for (int i = 0; i < 2; i++)
		sb_next_update(&tb, i);
	a = tb_assemble(&tb, 0, 0);
	check_data(a);
	assert_int_equal(rc_array_close(a), 0);
	tb_restore(&tb, side_a);
	a = tb_assemble(&tb, 0, 0);
	check_data(a);
	assert_int_equal(rc_array_close(a), 0);
	tb_snapshot_free(&tb, side_a);
	tb_snapshot_free(&tb, clone);
	tb_fini(&tb);
}

/* Two copies of an array run apart, each without a member: B without
 * member 0, A (more runs) without member 3.  B's member 3 named with A's
 * others looked like A's missing member come back, covered by A's
 * write-intent record, and was caught up - B's writes left wherever A
 * did not write, under a slot said in sync (a tester's find, V1).  Its
 * superblock was written after A's record began but without it: another
 * history, left out as a split brain. */
static void test_clone_member_not_caught_up(void **state)
{
	struct rc_member_status st;
	struct rc_testbed tb;
	struct rc_array *a;
	uint8_t **clone, **side_b;

	setup_raid5(&tb, 4);
	clone = tb_snapshot(&tb);
	for (int k = 0; k < 2; k++)
		run_write(&tb, 1u << 0, 5, 1);          /* B */
	side_b = tb_snapshot(&tb);
	tb_restore(&tb, clone);
	for (int k = 0; k < 3; k++)
		run_write(&tb, 1u << 3, 5, 1);          /* A */
	assert_int_equal(rc_dev_write(tb.mem[3], side_b[3], DEV_BYTES, 0), 0);
	a = tb_assemble(&tb, 0, RC_ASSEMBLE_CATCHUP);
	rc_array_member_status(a, 3, &st);
	assert_int_not_equal(st.state, RC_MEMBER_REBUILDING);
	assert_false(st.catchup);
	check_data(a);
	assert_int_equal(rc_array_close(a), 0);
	tb_snapshot_free(&tb, side_b);
	tb_snapshot_free(&tb, clone);
	tb_fini(&tb);
}

/* Some of member 1's superblock copies replaced by member 0's: copy 0
 * alone (one block copied), then copies 1-3 (a majority).  Which member
 * the device is comes from its checksum tables; the copies naming
 * another are damage, rewritten by the first write.  One copied block
 * refused the whole array as swapped superblocks, three were left in
 * place with fsck saying clean (V1). */
static void test_sb_copies_of_another_member(void **state)
{
	static const uint8_t which[2] = { 1u << 0, 0xe };
	struct rc_testbed tb;
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a = NULL;
	uint8_t **snap, raw[RC_BLOCK_SIZE];
	struct rc_sb sb;
	char err[512];

	tb_init(&tb, 4, 4 * DEV_BYTES);         /* several table blocks */
	tb_create(&tb, RC_RAID5, 16384, 0);
	a = tb_assemble(&tb, 0, 0);
	for (uint64_t b = 0; b < 100; b++)
		run_write_on(a, b);
	assert_int_equal(rc_array_close(a), 0);
	snap = tb_snapshot(&tb);
	for (int k = 0; k < 2; k++) {
		tb_restore(&tb, snap);
		for (int c = 0; c < RC_SB_COPIES; c++)
			if (which[k] >> c & 1)
				sb_copy(&tb, 0, 1, c);
		tb_devs(&tb, devs, false, 0);
		if (tb_try_assemble(&tb, devs, 0, &a, err, sizeof(err)))
			fail_msg("copies %x refused: %s", which[k], err);
		check_data(a);
		run_write_on(a, 5);
		assert_int_equal(rc_array_close(a), 0);
		for (int c = 0; c < RC_SB_COPIES; c++) {
			assert_int_equal(rc_dev_read(tb.mem[1], raw,
						     RC_BLOCK_SIZE,
						     sb_copy_off(&tb, 1, c)), 0);
			assert_int_equal(rc_sb_decode(raw, &sb, NULL), 0);
			assert_int_equal(sb.role, 1);
		}
	}
	tb_snapshot_free(&tb, snap);
	tb_fini(&tb);
}

/* One checksum table block - member 1's first - copied over member 0's
 * first, its superblocks and every other table block its own: damage to
 * that block, not a swapped superblock.  It refused the whole array
 * before (a tester's find); now the array assembles whole, every block
 * reads back, and the block is written again sealed for member 0. */
static void test_table_block_copied(void **state)
{
	struct rc_testbed tb;
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a = NULL;
	struct rc_info info;
	struct rc_scrub_report rep;
	uint8_t raw[RC_BLOCK_SIZE], own[RC_BLOCK_SIZE];
	struct rc_sb sb;
	char err[512];

	/* members of several table blocks (one of 4 MiB has one: nothing
	 * beside it to tell its owner by) */
	tb_init(&tb, 4, 4 * DEV_BYTES);
	tb_create(&tb, RC_RAID5, 16384, 0);
	a = tb_assemble(&tb, 0, 0);
	for (uint64_t b = 0; b < 100; b++) {
		tb_pattern(raw, b, 1);
		assert_int_equal(rc_write(a, b, 1, raw), 0);
	}
	assert_int_equal(rc_array_close(a), 0);
	a = NULL;
	assert_int_equal(rc_dev_read(tb.mem[0], raw, RC_BLOCK_SIZE, 0), 0);
	assert_int_equal(rc_sb_decode(raw, &sb, NULL), 0);
	assert_int_equal(rc_dev_read(tb.mem[0], own, RC_BLOCK_SIZE,
				     sb.csum_offset * RC_BLOCK_SIZE), 0);
	assert_int_equal(rc_dev_read(tb.mem[1], raw, RC_BLOCK_SIZE,
				     sb.csum_offset * RC_BLOCK_SIZE), 0);
	assert_int_equal(rc_dev_write(tb.mem[0], raw, RC_BLOCK_SIZE,
				      sb.csum_offset * RC_BLOCK_SIZE), 0);
	tb_devs(&tb, devs, false, 0);
	if (tb_try_assemble(&tb, devs, 0, &a, err, sizeof(err)))
		fail_msg("refused: %s", err);
	rc_array_info(a, &info);
	assert_false(info.degraded);
	check_data(a);
	assert_int_equal(rc_scrub(a, true, &rep, NULL, NULL), 0);
	assert_int_equal(rc_array_close(a), 0);
	assert_int_equal(rc_dev_read(tb.mem[0], raw, RC_BLOCK_SIZE,
				     sb.csum_offset * RC_BLOCK_SIZE), 0);
	assert_memory_equal(raw, own, RC_BLOCK_SIZE);
	tb_fini(&tb);
}

static void test_stale_member(void **state)
{
	struct rc_testbed tb;
	struct rc_array *a;
	struct rc_member_status st;
	uint8_t buf[RC_BLOCK_SIZE];

	setup_raid5(&tb, 4);
	a = tb_assemble(&tb, 1u << 1, 0);       /* member 1 away */
	tb_pattern(buf, 3, 2);
	assert_int_equal(rc_write(a, 3, 1, buf), 0);
	assert_int_equal(rc_array_close(a), 0);
	/* Member 1 comes back with old data: not trusted. */
	a = tb_assemble(&tb, 0, 0);
	rc_array_member_status(a, 1, &st);
	assert_int_not_equal(st.state, RC_MEMBER_ACTIVE);
	assert_int_equal(rc_read(a, 3, 1, buf), 0);
	assert_true(tb_check(buf, 3, 2));
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/*
 * An old copy of member 2 in its place (its slot active at the last
 * update): the array runs without it, and it is not written - named in a
 * list of paths the daemon checks for typos or not (it was taken as a
 * spare and rebuilt over: an old backup named by mistake was lost, a
 * tester's find).  mdadm too starts without a non-fresh device.
 */
static void test_stale_copy_named(void **state)
{
	struct rc_testbed tb;
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a;
	uint8_t buf[RC_BLOCK_SIZE], *old = malloc(DEV_BYTES),
		*now = malloc(DEV_BYTES), **snap;

	assert_non_null(old);
	assert_non_null(now);
	setup_raid5(&tb, 4);
	assert_int_equal(rc_dev_read(tb.mem[2], old, DEV_BYTES, 0), 0);
	a = tb_assemble(&tb, 0, 0);
	tb_pattern(buf, 7, 1);
	assert_int_equal(rc_write(a, 7, 1, buf), 0);
	assert_int_equal(rc_array_close(a), 0);
	assert_int_equal(rc_dev_write(tb.mem[2], old, DEV_BYTES, 0), 0);
	snap = tb_snapshot(&tb);
	for (int k = 0; k < 2; k++) {
		char err[512];

		tb_restore(&tb, snap);  /* slot 2 active at the last update */
		tb_devs(&tb, devs, false, 0);
		assert_int_equal(tb_try_assemble(&tb, devs, k ?
						 RC_ASSEMBLE_NO_FOREIGN : 0,
						 &a, err, sizeof(err)), 0);
		check_data(a);
		assert_int_equal(rc_array_start_recovery(a), 0);
		assert_int_equal(rc_array_close(a), 0);
		assert_int_equal(rc_dev_read(tb.mem[2], now, DEV_BYTES, 0), 0);
		assert_memory_equal(now, old, DEV_BYTES);
	}
	tb_snapshot_free(&tb, snap);
	free(old);
	free(now);
	tb_fini(&tb);
}

static void test_wrong_order(void **state)
{
	struct rc_testbed tb;
	struct rc_dev *devs[TB_MAX], *rev[TB_MAX];
	struct rc_array *a;
	struct rc_info info;

	setup_raid5(&tb, 5);
	tb_devs(&tb, devs, false, 0);
	for (int i = 0; i < 5; i++)
		rev[i] = devs[4 - i];
	assert_int_equal(tb_try_assemble(&tb, rev, 0, &a, NULL, 0), 0);
	rc_array_info(a, &info);
	assert_false(info.degraded);
	check_data(a);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

static void test_too_many_missing(void **state)
{
	struct rc_testbed tb;
	struct rc_dev *devs[TB_MAX];

	setup_raid5(&tb, 4);
	tb_devs(&tb, devs, false, 1u << 0 | 1u << 3);
	expect_refused(&tb, devs, 0, -ENODEV, "slot 3");
	/* degraded=refuse: one missing is already too many. */
	tb_devs(&tb, devs, false, 1u << 2);
	expect_refused(&tb, devs, RC_ASSEMBLE_NO_DEGRADED, -ENODEV, "slot 2");
	/* Nothing that is a member at all. */
	tb_devs(&tb, devs, false, 0xf);
	expect_refused(&tb, devs, 0, -ENODEV, "no raidfs member");
	tb_fini(&tb);
}

static void test_not_a_member(void **state)
{
	struct rc_testbed tb;
	struct rc_dev *devs[TB_MAX];
	struct rc_array *a;

	setup_raid5(&tb, 4);
	/* A device of zeros (a new disk) in member 0's place. */
	tb_devs(&tb, devs, false, 0);
	rc_dev_close(devs[0]);
	assert_int_equal(rc_dev_mem_create(DEV_BYTES, "blank", &devs[0]), 0);
	a = expect_degraded(&tb, devs);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

static void test_create_checks(void **state)
{
	struct {
		enum rc_level level;
		int n;
		uint32_t chunk;
		uint64_t bytes;
		int want;
	} cases[] = {
		{ RC_RAID5, 2, 16384, DEV_BYTES, -EINVAL },   /* too few */
		{ RC_RAID6, 3, 16384, DEV_BYTES, -EINVAL },
		{ RC_RAID5, 3, 12288, DEV_BYTES, -EINVAL },   /* not 2^n */
		{ RC_RAID5, 3, 2u << 20, DEV_BYTES, -EINVAL },/* > 1 MiB */
		{ RC_RAID5, 3, 16384, 64 * 1024, -ENOSPC },    /* too small */
		{ (enum rc_level)7, 3, 16384, DEV_BYTES, -EINVAL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rc_testbed tb;
		struct rc_dev *devs[TB_MAX];
		struct rc_create_params p = { .level = cases[i].level,
					      .chunk_bytes = cases[i].chunk };
		char err[256] = "";
		uint64_t before;

		tb_init(&tb, cases[i].n, cases[i].bytes);
		before = tb_media_hash(&tb);
		for (int d = 0; d < cases[i].n; d++)
			devs[d] = tb_borrow(&tb, d);
		assert_int_equal(rc_array_create_err(&p, devs, cases[i].n, err,
						     sizeof(err)), cases[i].want);
		assert_true(err[0] != 0);
		assert_true(tb_media_hash(&tb) == before);
		for (int d = 0; d < cases[i].n; d++)
			rc_dev_close(devs[d]);
		tb_fini(&tb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_checksum),
		cmocka_unit_test(test_newer_format),
		cmocka_unit_test(test_two_arrays),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_mislabelled_members),
		cmocka_unit_test(test_table_block_copied),
		cmocka_unit_test(test_old_copy_left_out),
		cmocka_unit_test(test_old_copy_split_left_out),
		cmocka_unit_test(test_clone_mix_refused),
		cmocka_unit_test(test_clone_member_not_caught_up),
		cmocka_unit_test(test_sb_copies_of_another_member),
		cmocka_unit_test(test_stale_copy_named),
		cmocka_unit_test(test_stale_member),
		cmocka_unit_test(test_wrong_order),
		cmocka_unit_test(test_too_many_missing),
		cmocka_unit_test(test_not_a_member),
		cmocka_unit_test(test_create_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
