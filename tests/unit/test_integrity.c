/*
 * test_integrity: silent corruption - bit flips on the media and lost
 * writes - is detected by the block checksums, repaired from redundancy,
 * counted against the right member, and never returned; beyond redundancy
 * the read fails with -EIO instead.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "rc_test_util.h"

#define DEV_BYTES (6ull << 20)
#define DATA_OFF_BYTES (2ull << 20)   /* data_offset for 6 MiB members */

struct cfg {
	enum rc_level level;
	int members;
	uint32_t chunk;
};

static const struct cfg cfgs[] = {
	{ RC_RAID1, 2, 16384 }, { RC_RAID4, 4, 16384 }, { RC_RAID5, 3, 4096 },
	{ RC_RAID5, 5, 65536 }, { RC_RAID6, 4, 16384 }, { RC_RAID6, 6, 8192 },
	{ RC_RAID10, 3, 16384 }, { RC_RAID10, 4, 65536 },
};

static uint64_t fill(struct rc_array *a, uint32_t gen)
{
	struct rc_info info;
	uint8_t *buf = malloc(64 * RC_BLOCK_SIZE);

	rc_array_info(a, &info);
	for (uint64_t b = 0; b < info.blocks; b += 64) {
		uint32_t n = info.blocks - b < 64 ? (uint32_t)(info.blocks - b) : 64;

		for (uint32_t i = 0; i < n; i++)
			tb_pattern(buf + (size_t)i * RC_BLOCK_SIZE, b + i, gen);
		assert_int_equal(rc_write(a, b, n, buf), 0);
	}
	assert_int_equal(rc_flush(a), 0);
	free(buf);
	return info.blocks;
}

/* Reads everything; returns how many blocks failed with -EIO, and fails
 * the test on any wrong data. */
static uint64_t verify(struct rc_array *a, uint64_t blocks, uint32_t gen)
{
	uint8_t buf[RC_BLOCK_SIZE];
	uint64_t eio = 0;

	for (uint64_t b = 0; b < blocks; b++) {
		int ret = rc_read(a, b, 1, buf);

		if (ret == -EIO) {
			eio++;
			continue;
		}
		assert_int_equal(ret, 0);
		if (!tb_check(buf, b, gen))
			fail_msg("block %llu: wrong data returned",
				 (unsigned long long)b);
	}
	return eio;
}

/* The data region blocks of a member: up to the last whole chunk before
 * the superblock copies at the end of the device. */
static uint64_t data_blocks_of(struct rc_array *a)
{
	struct rc_info info;

	rc_array_info(a, &info);
	return ((DEV_BYTES - DATA_OFF_BYTES) / RC_BLOCK_SIZE - 2) /
	       info.chunk_blocks * info.chunk_blocks;
}

static void pick_blocks(uint64_t *out, int n, uint64_t range, uint64_t *seed)
{
	for (int i = 0; i < n; i++) {
again:
		out[i] = tb_rand(seed) % range;
		for (int j = 0; j < i; j++)
			if (out[j] == out[i])
				goto again;
	}
}

static uint64_t member_sum(struct rc_array *a, int slot, bool repaired)
{
	struct rc_member_status st;

	assert_int_equal(rc_array_member_status(a, slot, &st), 0);
	return repaired ? st.repaired : st.csum_errors;
}

/* A filled array of c on a new testbed, assembled again (fill's writes
 * all reached the media): the blocks filled in *blocks. */
static struct rc_array *filled(struct rc_testbed *tb, const struct cfg *c,
			       uint64_t *blocks)
{
	struct rc_array *a;

	tb_init(tb, c->members, DEV_BYTES);
	tb_create(tb, c->level, c->chunk, 0);
	a = tb_assemble(tb, 0, 0);
	*blocks = fill(a, 1);
	assert_int_equal(rc_array_close(a), 0);
	return tb_assemble(tb, 0, 0);
}

static void test_bitflips(void **state)
{
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		const struct cfg *c = &cfgs[i];

		for (int victim = 0; victim < c->members; victim++) {
			struct rc_testbed tb;
			struct rc_scrub_report rep;
			struct rc_array *a;
			uint64_t blocks, seed = i * 10 + (uint64_t)victim, pick[24];
			uint64_t range;

			a = filled(&tb, c, &blocks);
			range = data_blocks_of(a);
			pick_blocks(pick, 24, range, &seed);
			for (int k = 0; k < 24; k++)
				assert_int_equal(rc_fault_corrupt(tb.fault[victim],
					DATA_OFF_BYTES + pick[k] * RC_BLOCK_SIZE,
					RC_BLOCK_SIZE, 1 + k % 3, seed + k), 0);
			/* Data reads find the flips in data blocks... */
			assert_int_equal(verify(a, blocks, 1), 0);
			/* ...scrub finds the rest (parity, second copies). */
			assert_int_equal(rc_scrub(a, true, &rep, NULL, NULL), 0);
			assert_int_equal(rep.unrecoverable, 0);
			assert_int_equal(member_sum(a, victim, false), 24);
			assert_int_equal(member_sum(a, victim, true), 24);
			for (int s = 0; s < c->members; s++)
				if (s != victim)
					assert_int_equal(member_sum(a, s, false), 0);
			/* Repaired on the media: a second scrub is clean. */
			assert_int_equal(rc_scrub(a, false, &rep, NULL, NULL), 0);
			assert_int_equal(rep.csum_errors, 0);
			assert_int_equal(rep.parity_mismatches, 0);
			assert_int_equal(rc_array_close(a), 0);
			/* And the repairs persisted across assembly. */
			a = tb_assemble(&tb, 0, 0);
			assert_int_equal(rc_scrub(a, false, &rep, NULL, NULL), 0);
			assert_int_equal(rep.csum_errors, 0);
			assert_int_equal(verify(a, blocks, 1), 0);
			assert_int_equal(rc_array_close(a), 0);
			tb_fini(&tb);
		}
	}
}

/* Writes acknowledged by one member but never stored. */
static void test_lost_writes(void **state)
{
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		const struct cfg *c = &cfgs[i];
		int victim = (int)(i % (size_t)c->members);
		struct rc_testbed tb;
		struct rc_scrub_report rep;
		struct rc_array *a;
		uint64_t blocks, seed = 99 + i, pick[16];

		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		a = tb_assemble(&tb, 0, 0);
		blocks = fill(a, 1);
		pick_blocks(pick, 16, data_blocks_of(a), &seed);
		for (int k = 0; k < 16; k++)
			rc_fault_lose_writes(tb.fault[victim],
					     DATA_OFF_BYTES + pick[k] * RC_BLOCK_SIZE,
					     RC_BLOCK_SIZE, RC_FAULT_PERSISTENT);
		fill(a, 2);
		assert_int_equal(rc_array_close(a), 0);

		a = tb_assemble(&tb, 0, 0);
		assert_int_equal(verify(a, blocks, 2), 0);
		assert_int_equal(rc_scrub(a, true, &rep, NULL, NULL), 0);
		assert_int_equal(member_sum(a, victim, false), 16);
		assert_int_equal(rc_scrub(a, false, &rep, NULL, NULL), 0);
		assert_int_equal(rep.csum_errors + rep.parity_mismatches, 0);
		assert_int_equal(rc_array_close(a), 0);
		tb_fini(&tb);
	}
}

/*
 * Read errors (pending sectors): a repairing scrub rewrites each block
 * that failed to read once its reconstruction verifies against the
 * block's checksum, as md does, so the drive can remap the sector.  The
 * media under the errors is corrupt too: only a rewrite makes the next
 * scrub, with the errors gone, find nothing.
 */
static void test_read_errors_rewritten(void **state)
{
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		const struct cfg *c = &cfgs[i];
		int victim = (int)(i % (size_t)c->members);
		struct rc_testbed tb;
		struct rc_scrub_report rep;
		struct rc_array *a;
		uint64_t blocks, seed = 7 + i, pick[8];

		a = filled(&tb, c, &blocks);
		rc_array_set_fault_errors(a, 0);
		pick_blocks(pick, 8, data_blocks_of(a), &seed);
		for (int k = 0; k < 8; k++) {
			uint64_t off = DATA_OFF_BYTES + pick[k] * RC_BLOCK_SIZE;

			rc_fault_corrupt(tb.fault[victim], off, RC_BLOCK_SIZE, 5,
					 seed + (uint64_t)k);
			rc_fault_eio(tb.fault[victim], RC_FAULT_READ, off,
				     RC_BLOCK_SIZE, RC_FAULT_PERSISTENT);
		}
		assert_int_equal(rc_scrub(a, true, &rep, NULL, NULL), 0);
		assert_int_equal(rep.read_errors, 8);
		assert_int_equal(rep.unrecoverable, 0);
		assert_int_equal(rep.repaired, 8);
		assert_int_equal(member_sum(a, victim, true), 8);
		/* The sectors were rewritten (remapped): they read again, and
		 * what they hold verifies. */
		rc_fault_clear(tb.fault[victim]);
		assert_int_equal(rc_scrub(a, false, &rep, NULL, NULL), 0);
		assert_int_equal(rep.read_errors + rep.csum_errors, 0);
		assert_int_equal(rep.parity_mismatches, 0);
		assert_int_equal(verify(a, blocks, 1), 0);
		assert_int_equal(rc_array_close(a), 0);
		tb_fini(&tb);
	}
}

/*
 * RAID 5: the same row of one stripe corrupt on two members.  The data
 * block(s) of that row read -EIO, never wrong data; everything else reads
 * correctly.
 */
static void test_two_members_same_stripe(void **state)
{
	struct rc_testbed tb;
	struct rc_array *a;
	uint64_t blocks, eio;
	const uint64_t row = 5;          /* member block 5: stripe 1, row 1 */

	tb_init(&tb, 4, DEV_BYTES);
	tb_create(&tb, RC_RAID5, 16384, 0);
	a = tb_assemble(&tb, 0, 0);
	blocks = fill(a, 1);
	assert_int_equal(rc_array_close(a), 0);

	a = tb_assemble(&tb, 0, 0);
	for (int m = 0; m < 2; m++)
		rc_fault_corrupt(tb.fault[m], DATA_OFF_BYTES + row * RC_BLOCK_SIZE,
				 RC_BLOCK_SIZE, 3, 42 + (uint64_t)m);
	{
		/* Scrub names the lost logical blocks, and exactly those
		 * read -EIO. */
		struct rc_scrub_report rep;
		uint64_t bad[8];

		assert_int_equal(rc_scrub_list(a, false, &rep, bad, 8, NULL,
					       NULL), 0);
		assert_int_equal(rep.nbad, 2);
		for (uint64_t i = 0; i < rep.nbad; i++) {
			uint8_t buf[RC_BLOCK_SIZE];

			assert_int_equal(rc_read(a, bad[i], 1, buf), -EIO);
		}
	}
	eio = verify(a, blocks, 1);
	/* Members 0 and 1 both hold data in stripe 1 (parity is on member
	 * 2), so two data blocks of the row are lost. */
	assert_int_equal(eio, 2);
	{
		struct rc_info info;

		rc_array_info(a, &info);
		assert_true(info.unrecoverable >= 2);
	}
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bitflips),
		cmocka_unit_test(test_lost_writes),
		cmocka_unit_test(test_two_members_same_stripe),
		cmocka_unit_test(test_read_errors_rewritten),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
