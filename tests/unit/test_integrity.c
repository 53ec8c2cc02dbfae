/*
 * test_integrity: silent corruption - bit flips on the media and lost
 * writes - is detected by the block checksums, repaired from redundancy,
 * counted against the right member, and never returned; beyond redundancy
 * the read fails with -EIO instead.
 *
 * Members that lie (DESIGN "Members that lie"): one that shrinks (seen on
 * an I/O error, or by the recovery thread asking its size), drops every
 * write, gets an old image of itself copied over it, turns to zeros, has
 * another disk put behind its name, or vanishes, is found, made faulty,
 * and replaced by the spare, the data intact throughout; without a spare
 * the array goes on degraded; a member the array cannot do without is
 * kept.  Errors seen while running reach the members' superblocks
 * (RC_AF_ERRORS) without a close.
 *
 * Offline: an old copy of a member put back (its superblock behind the
 * others') is never read; it is taken as a spare and rebuilt in place.  A
 * suffix of the slots one update behind (a superblock write torn by a
 * crash) is current and kept.  Damaged superblock copies (zeros, garbage,
 * unreadable, over either end) are told and counted on the member at
 * assembly and rewritten at the first write, never by a read-only
 * assembly.  A member shrunk while the array was down is left out and
 * never written.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <xxhash.h>
#include "rc_test_util.h"
#include "ondisk.h"

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

/* A RAID 5 of 4 on tb, assembled, every block written (gen 1). */
/* An array of level on members devices of tb (spares more), assembled,
 * every block written (gen 1). */
static struct rc_array *level_filled(struct rc_testbed *tb, enum rc_level level,
				     int members, uint32_t chunk, int spares,
				     uint64_t *blocks)
{
	struct rc_array *a;
	uint64_t n;

	tb_init(tb, members + spares, DEV_BYTES);
	tb_create(tb, level, chunk, spares);
	a = tb_assemble(tb, 0, 0);
	n = fill(a, 1);
	if (blocks)
		*blocks = n;
	return a;
}

static struct rc_array *raid5_filled(struct rc_testbed *tb, uint64_t *blocks)
{
	return level_filled(tb, RC_RAID5, 4, 16384, 0, blocks);
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
		struct rc_member_status st;
		struct rc_testbed tb;
		struct rc_scrub_report rep;
		struct rc_array *a;
		uint64_t blocks, seed = 99 + i, pick[16];

		a = filled(&tb, c, &blocks);
		pick_blocks(pick, 16, data_blocks_of(a), &seed);
		for (int k = 0; k < 16; k++)
			rc_fault_lose_writes(tb.fault[victim],
					     DATA_OFF_BYTES + pick[k] * RC_BLOCK_SIZE,
					     RC_BLOCK_SIZE, RC_FAULT_PERSISTENT);
		fill(a, 2);
		assert_int_equal(rc_array_close(a), 0);

		a = tb_assemble(&tb, 0, 0);
		assert_int_equal(verify(a, blocks, 2), 0);
		rc_array_member_status(a, victim, &st);
		/* a checkpoint read one of the lost blocks back (fail.c
		 * rc_member_writes_check): faulted then, the rest hold it */
		if (st.state == RC_MEMBER_ACTIVE) {
			assert_int_equal(rc_scrub(a, true, &rep, NULL, NULL), 0);
			assert_int_equal(member_sum(a, victim, false), 16);
		}
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
			rc_fault_pending(tb.fault[victim], off, RC_BLOCK_SIZE);
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

/* Every block of member m's checksum table pending (unreadable until
 * written); *sb: the member's superblock. */
static void table_pending(struct rc_testbed *tb, int m, struct rc_sb *sb)
{
	uint8_t raw[RC_BLOCK_SIZE];

	assert_int_equal(rc_dev_read(tb->mem[m], raw, sizeof(raw), 0), 0);
	assert_int_equal(rc_sb_decode(raw, sb, NULL), 0);
	for (uint64_t t = 0; t < sb->csum_blocks; t++)
		rc_fault_pending(tb->fault[m], (sb->csum_offset + t) *
				 RC_BLOCK_SIZE, RC_BLOCK_SIZE);
}

/* Every block of member m's checksum table overwritten with a pattern
 * (garbage that fails its seal); *sb: the member's superblock. */
static void table_garbage(struct rc_testbed *tb, int m, struct rc_sb *sb)
{
	uint8_t raw[RC_BLOCK_SIZE];

	assert_int_equal(rc_dev_read(tb->mem[m], raw, sizeof(raw), 0), 0);
	assert_int_equal(rc_sb_decode(raw, sb, NULL), 0);
	for (uint64_t t = 0; t < sb->csum_blocks; t++) {
		tb_pattern(raw, 2000 + t, (uint32_t)m + 7);
		assert_int_equal(rc_dev_write(tb->mem[m], raw, sizeof(raw),
				 (sb->csum_offset + t) * RC_BLOCK_SIZE), 0);
	}
}

/* Closes a, assembles the array again: a scrub finds nothing, every block
 * reads right; then closes it and the testbed. */
static void reopen_clean(struct rc_testbed *tb, struct rc_array *a,
			 uint64_t blocks)
{
	struct rc_scrub_report rep;

	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(tb, 0, 0);
	assert_int_equal(rc_scrub(a, false, &rep, NULL, NULL), 0);
	assert_int_equal(rep.read_errors + rep.csum_errors +
			 rep.unrecoverable + rep.parity_mismatches +
			 rep.conflicts + rep.unverified, 0);
	assert_int_equal(verify(a, blocks, 1), 0);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(tb);
}

/*
 * Pending sectors under one member's checksum table (every table block
 * unreadable until written): the tables are re-derived from the rows and
 * written again, each read error counted once and credited as corrected,
 * as a data block's is.  They were never credited (and a failed batch of
 * table reads counted as none in the scrub's report): the errors faulted
 * the member at RAID 6 and said it FAILING at RAID 5 though every rewrite
 * held (a tester's find, W4).
 */
static void test_table_read_errors_credited(void **state)
{
	static const struct cfg tcfgs[] = {
		{ RC_RAID5, 5, 65536 }, { RC_RAID6, 6, 8192 },
	};

	for (size_t i = 0; i < sizeof(tcfgs) / sizeof(tcfgs[0]); i++) {
		const struct cfg *c = &tcfgs[i];
		struct rc_scrub_report rep;
		struct rc_member_status st;
		struct rc_testbed tb;
		struct rc_array *a;
		uint64_t blocks;
		struct rc_sb sb;

		a = filled(&tb, c, &blocks);
		table_pending(&tb, 1, &sb);
		assert_int_equal(rc_scrub(a, true, &rep, NULL, NULL), 0);
		assert_int_equal(rep.read_errors, sb.csum_blocks);
		assert_int_equal(rep.repaired, sb.csum_blocks);
		assert_int_equal(rep.unrecoverable, 0);
		/* each counted once, and credited as corrected (the count
		 * that faults a member goes back down: rc_member_note_corrected
		 * with each repaired) */
		rc_array_member_status(a, 1, &st);
		assert_int_equal(st.state, RC_MEMBER_ACTIVE);
		assert_int_equal(st.read_errors, sb.csum_blocks);
		assert_int_equal(st.repaired, sb.csum_blocks);
		/* written again: the table reads, and a scrub finds nothing */
		reopen_clean(&tb, a, blocks);
	}
}

/*
 * Every table block of one member garbage (its blocks intact): each is a
 * checksum error, corrected when every entry of the block is known again
 * from the rows (csum.c seal_failed).  They were never credited, and
 * a RAID 6 scrub faulted the member, redundancy down to one, for damage
 * it had repaired (a tester's find).
 */
static void test_table_seal_errors_credited(void **state)
{
	static const struct cfg c = { RC_RAID6, 6, 8192 };
	struct rc_scrub_report rep;
	struct rc_member_status st;
	struct rc_testbed tb;
	struct rc_array *a;
	uint64_t blocks;
	struct rc_sb sb;

	a = filled(&tb, &c, &blocks);
	assert_int_equal(rc_array_close(a), 0);
	table_garbage(&tb, 1, &sb);
	assert_true(sb.csum_blocks > 1);        /* the fault limit below */
	a = tb_assemble(&tb, 0, 0);
	rc_array_set_fault_errors(a, 1);        /* fewer than the tables */
	assert_int_equal(rc_scrub(a, true, &rep, NULL, NULL), 0);
	assert_int_equal(rep.unrecoverable, 0);
	/* the errors are judged once they settle (a second): a read
	 * applies what is pending, as the recovery thread does */
	sleep(2);
	assert_int_equal(verify(a, blocks, 1), 0);
	rc_array_member_status(a, 1, &st);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	assert_int_equal(st.csum_errors, sb.csum_blocks);
	reopen_clean(&tb, a, blocks);
}

/*
 * The checksum tables of more members than the redundancy damaged over
 * the same rows (every table block of members 0 and 1 garbage; also 2 at
 * RAID 6), every block intact: the rows agree with all their redundancy,
 * so they are what they say, the entries are re-derived, and a repairing
 * scrub writes the tables again.  They read as I/O errors, and a
 * filesystem on them would not mount (a tester's find).
 */
static void test_tables_damaged_beyond(void **state)
{
	static const struct cfg tcfgs[] = {
		{ RC_RAID5, 3, 4096 }, { RC_RAID5, 5, 65536 },
		{ RC_RAID6, 4, 16384 }, { RC_RAID1, 2, 16384 },
		{ RC_RAID10, 4, 65536 },
	};

	for (size_t i = 0; i < sizeof(tcfgs) / sizeof(tcfgs[0]); i++) {
		const struct cfg *c = &tcfgs[i];
		int victims = c->level == RC_RAID6 ? 3 : 2;
		struct rc_scrub_report rep;
		struct rc_testbed tb;
		struct rc_array *a;
		uint64_t blocks;
		struct rc_sb sb;

		a = filled(&tb, c, &blocks);
		assert_int_equal(rc_array_close(a), 0);
		for (int m = 0; m < victims; m++)
			table_garbage(&tb, m, &sb);
		a = tb_assemble(&tb, 0, 0);
		assert_int_equal(verify(a, blocks, 1), 0);
		assert_int_equal(rc_scrub(a, true, &rep, NULL, NULL), 0);
		assert_int_equal(rep.unrecoverable, 0);
		reopen_clean(&tb, a, blocks);
	}
}

/*
 * The same with the table's writes failing too (a member going away): no
 * rewrite held, none is credited.  It was credited when queued, and fsck
 * said "repaired" on a member that had vanished (a tester's find, V4).
 */
static void test_table_rewrite_failed_not_credited(void **state)
{
	const struct cfg c = { RC_RAID6, 6, 8192 };
	struct rc_scrub_report rep;
	struct rc_member_status st;
	struct rc_testbed tb;
	struct rc_array *a;
	uint64_t blocks;
	struct rc_sb sb;

	a = filled(&tb, &c, &blocks);
	table_pending(&tb, 1, &sb);
	rc_fault_eio(tb.fault[1], RC_FAULT_WRITE, sb.csum_offset * RC_BLOCK_SIZE,
		     sb.csum_blocks * RC_BLOCK_SIZE, RC_FAULT_PERSISTENT);
	rc_scrub(a, true, &rep, NULL, NULL);
	rc_array_member_status(a, 1, &st);
	assert_int_equal(st.repaired, 0);
	assert_int_not_equal(st.state, RC_MEMBER_ACTIVE);
	assert_int_equal(verify(a, blocks, 1), 0);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/*
 * Read errors where nothing was ever written (the filesystem's free
 * space): the blocks hold no data, yet the sectors stay pending until
 * written, so every later pass would report them again.  A repairing
 * scrub writes them with zeros, keeping the "never written" entries, and
 * counts each bad block once (not once more for the run read that failed
 * first).
 */
static void test_read_errors_unwritten(void **state)
{
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		const struct cfg *c = &cfgs[i];
		int victim = (int)(i % (size_t)c->members);
		struct rc_testbed tb;
		struct rc_scrub_report rep;
		struct rc_member_status st;
		struct rc_array *a;
		uint8_t blk[RC_BLOCK_SIZE], zero[RC_BLOCK_SIZE] = { 0 };
		uint64_t top, off[4];
		struct rc_info info;

		tb_init(&tb, c->members, DEV_BYTES);
		tb_create(&tb, c->level, c->chunk, 0);
		a = tb_assemble(&tb, 0, 0);
		rc_array_info(a, &info);
		if (info.chunk_blocks == 1) {   /* no row left unwritten */
			assert_int_equal(rc_array_close(a), 0);
			tb_fini(&tb);
			continue;
		}
		/* The first row of every chunk written, the others not: every
		 * column is read by the scrub, its other rows were never
		 * written. */
		for (uint64_t b = 0; b < info.blocks; b += info.chunk_blocks) {
			tb_pattern(blk, b, 1);
			assert_int_equal(rc_write(a, b, 1, blk), 0);
		}
		assert_int_equal(rc_array_close(a), 0);
		a = tb_assemble(&tb, 0, 0);
		rc_array_set_fault_errors(a, 0);
		/* rows 1 of chunks near the end of every layout's region */
		top = data_blocks_of(a) * 3 / 4 / info.chunk_blocks *
		      info.chunk_blocks + 1;
		for (int k = 0; k < 4; k++) {
			off[k] = DATA_OFF_BYTES + (top - (uint64_t)k *
				 info.chunk_blocks) * RC_BLOCK_SIZE;
			rc_fault_corrupt(tb.fault[victim], off[k], RC_BLOCK_SIZE,
					 5, 11 + (uint64_t)k);
			rc_fault_pending(tb.fault[victim], off[k],
					 RC_BLOCK_SIZE);
		}
		assert_int_equal(rc_scrub(a, true, &rep, NULL, NULL), 0);
		assert_int_equal(rep.read_errors, 4);
		assert_int_equal(rep.unrecoverable, 0);
		assert_int_equal(rep.repaired, 4);
		assert_int_equal(rc_array_member_status(a, victim, &st), 0);
		assert_int_equal(st.read_errors, 4);
		assert_int_equal(st.repaired, 4);
		/* written: zeros on the media, where the bit rot was */
		rc_fault_clear(tb.fault[victim]);
		for (int k = 0; k < 4; k++) {
			assert_int_equal(rc_dev_read(tb.mem[victim], blk,
						     RC_BLOCK_SIZE, off[k]), 0);
			assert_memory_equal(blk, zero, RC_BLOCK_SIZE);
		}
		assert_int_equal(rc_scrub(a, false, &rep, NULL, NULL), 0);
		assert_int_equal(rep.read_errors + rep.csum_errors +
				 rep.unverified + rep.parity_mismatches, 0);
		for (uint64_t b = 0; b < info.blocks; b += info.chunk_blocks) {
			assert_int_equal(rc_read(a, b, 1, blk), 0);
			assert_true(tb_check(blk, b, 1));
		}
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

	a = raid5_filled(&tb, &blocks);
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

/*
 * Writes into a row that holds two lost blocks (RAID 5 of 4, members 0
 * and 1 damaged at the same row of stripe 1: blocks 17 and 21).  A write
 * of the row's third block goes in by read-modify-write when the cheaper
 * reconstruct-write cannot read the lost blocks; a write over a lost block
 * cannot be given parity either way and is dropped: that flush fails, the
 * drop is remembered (rc_write_failed), and the next flush and the close
 * succeed with everything else.  Before, the first failed every commit
 * after it, and the close lost what the cache held.
 */
static void test_write_into_lost_row(void **state)
{
	struct rc_testbed tb;
	struct rc_array *a;
	uint8_t buf[RC_BLOCK_SIZE];
	const uint64_t row = 5;          /* member block 5: stripe 1, row 1 */

	(void)state;
	a = raid5_filled(&tb, NULL);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 0, 0);
	for (int m = 0; m < 2; m++)
		rc_fault_corrupt(tb.fault[m], DATA_OFF_BYTES + row * RC_BLOCK_SIZE,
				 RC_BLOCK_SIZE, 3, 42 + (uint64_t)m);
	assert_int_equal(rc_read(a, 17, 1, buf), -EIO);
	assert_int_equal(rc_read(a, 21, 1, buf), -EIO);

	tb_pattern(buf, 13, 2);
	assert_int_equal(rc_write(a, 13, 1, buf), 0);
	assert_int_equal(rc_flush(a), 0);
	assert_int_equal(rc_write_failures(a), 0);

	tb_pattern(buf, 17, 2);
	assert_int_equal(rc_write(a, 17, 1, buf), 0);
	assert_int_equal(rc_flush(a), -EIO);
	assert_int_equal(rc_write_failures(a), 1);
	assert_true(rc_write_failed(a, 0, 16, 2));
	assert_false(rc_write_failed(a, 0, 13, 1));
	assert_false(rc_write_failed(a, 1, 17, 1));
	assert_int_equal(rc_read(a, 17, 1, buf), -EIO);

	tb_pattern(buf, 100, 2);
	assert_int_equal(rc_write(a, 100, 1, buf), 0);
	assert_int_equal(rc_flush(a), 0);
	assert_int_equal(rc_array_close(a), 0);

	a = tb_assemble(&tb, 0, 0);
	assert_int_equal(rc_read(a, 13, 1, buf), 0);
	assert_true(tb_check(buf, 13, 2));
	assert_int_equal(rc_read(a, 100, 1, buf), 0);
	assert_true(tb_check(buf, 100, 2));
	assert_int_equal(rc_read(a, 12, 1, buf), 0);
	assert_true(tb_check(buf, 12, 1));
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/* ---- members that lie ------------------------------------------------------ */

enum lie {
	LIE_SHRINK_EIO,         /* to half its size: I/O past it fails */
	LIE_SHRINK_TAIL,        /* its last blocks only: no I/O meets it */
	LIE_LOST_WRITES,        /* acknowledges every write, keeps none */
	LIE_OLD_IMAGE,          /* an old copy of itself copied over it */
	LIE_ZEROS,              /* blank */
	LIE_SWAP,               /* another (blank) disk behind its name */
	LIE_VANISH,
};
static const char *const lie_name[] = {
	"shrinks to half", "shrinks by its last blocks", "drops its writes",
	"gets an old image of itself", "turns to zeros",
	"has another disk behind its name", "vanishes",
};

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Waits (at most 30 s) until slot is not active, or with the spare in it
 * again, active on the spare. */
static void wait_replaced(struct rc_array *a, int slot, bool spare,
			  const char *what)
{
	struct rc_member_status st;
	struct rc_info info;

	for (int i = 0; i < 3000; i++) {
		rc_array_member_status(a, slot, &st);
		rc_array_info(a, &info);
		if (!spare && st.state != RC_MEMBER_ACTIVE)
			return;
		if (spare && st.state == RC_MEMBER_ACTIVE && !info.degraded &&
		    info.spares == 0)
			return;
		sleep_ms(10);
	}
	fail_msg("%s: the member was not %s", what,
		 spare ? "replaced by the spare" : "taken out");
}

/* What the lie does to member v once the array runs (gen 1 on it). */
static void lie_apply(struct rc_testbed *tb, struct rc_array *a, int v,
		      enum lie l, uint64_t blocks)
{
	struct rc_dev *other;
	uint8_t *old;

	switch (l) {
	case LIE_SHRINK_EIO:
		rc_fault_shrink(tb->fault[v], DEV_BYTES / 2);
		/* Reads meet the end: the first error asks the size. */
		assert_int_equal(verify(a, blocks, 1), 0);
		return;
	case LIE_SHRINK_TAIL:
		rc_fault_shrink(tb->fault[v], DEV_BYTES - 2 * RC_BLOCK_SIZE);
		return;
	case LIE_LOST_WRITES:
		rc_fault_lose_writes(tb->fault[v], 0, DEV_BYTES,
				     RC_FAULT_PERSISTENT);
		fill(a, 1);     /* enough to checkpoint: superblocks read back */
		return;
	case LIE_OLD_IMAGE:
		old = malloc(DEV_BYTES);
		assert_non_null(old);
		assert_int_equal(rc_dev_read(tb->mem[v], old, DEV_BYTES, 0), 0);
		fill(a, 1);     /* superblocks move on */
		assert_int_equal(rc_array_clear_errors(a, false), 0);
		assert_int_equal(rc_dev_write(tb->mem[v], old, DEV_BYTES, 0), 0);
		free(old);
		return;
	case LIE_ZEROS:
		assert_int_equal(rc_dev_zero(tb->mem[v], 0, DEV_BYTES), 0);
		return;
	case LIE_SWAP:
		assert_int_equal(rc_dev_mem_create(DEV_BYTES, "other", &other), 0);
		assert_int_equal(rc_fault_swap(tb->fault[v], other), 0);
		return;
	case LIE_VANISH:
		rc_fault_vanish(tb->fault[v]);
		return;
	}
}

/* One lie on member 1 of a RAID 5 of 4, with or without a spare, the
 * recovery thread checking every 20 ms. */
static void lying_member(enum lie l, bool spare)
{
	struct rc_testbed tb;
	struct rc_member_status st;
	struct rc_info info;
	struct rc_array *a;
	uint64_t blocks;
	char what[96];

	snprintf(what, sizeof(what), "a member that %s", lie_name[l]);
	tb_init(&tb, spare ? 5 : 4, DEV_BYTES);
	tb_create(&tb, RC_RAID5, 16384, spare ? 1 : 0);
	a = tb_assemble(&tb, 0, 0);
	blocks = fill(a, 1);
	rc_array_set_health_interval(a, 20);
	assert_int_equal(rc_array_start_recovery(a), 0);
	lie_apply(&tb, a, 1, l, blocks);
	wait_replaced(a, 1, spare, what);
	rc_array_member_status(a, 1, &st);
	rc_array_info(a, &info);
	if (spare) {
		assert_string_equal(st.name, "mem4");
	} else {
		assert_int_equal(st.state, RC_MEMBER_FAULTY);
		assert_true(info.degraded);
	}
	assert_int_equal(verify(a, blocks, 1), 0);
	assert_int_equal(rc_array_close(a), 0);
	/* A new assembly leaves the liar out (stale in the slot table). */
	a = tb_assemble(&tb, 0, 0);
	rc_array_member_status(a, 1, &st);
	if (spare)
		assert_string_equal(st.name, "mem4");
	else
		assert_int_not_equal(st.state, RC_MEMBER_ACTIVE);
	assert_int_equal(verify(a, blocks, 1), 0);
	assert_int_equal(rc_array_close(a), 0);
	fprintf(stderr, "%s: taken out%s\n", what,
		spare ? ", the spare took over" : ", degraded");
	tb_fini(&tb);
}

/* Each lie: the member goes, the spare takes over (or the array goes on
 * degraded), every block reads right before and after, and after a new
 * assembly. */
static void test_lying_members(void **state)
{
	for (int l = LIE_SHRINK_EIO; l <= LIE_VANISH; l++)
		for (int spare = 1; spare >= 0; spare--)
			lying_member((enum lie)l, spare);
}

/* Without a spare: faulty, degraded, data intact; nothing is needed for
 * that but the calls a program makes (no recovery thread). */
static void test_shrunk_member_degrades(void **state)
{
	struct rc_testbed tb;
	struct rc_member_status st;
	struct rc_info info;
	struct rc_array *a;
	uint64_t blocks;

	a = raid5_filled(&tb, &blocks);
	lie_apply(&tb, a, 2, LIE_SHRINK_EIO, blocks);
	rc_array_member_status(a, 2, &st);
	assert_int_equal(st.state, RC_MEMBER_FAULTY);
	rc_array_info(a, &info);
	assert_true(info.degraded);
	assert_int_equal(verify(a, blocks, 1), 0);
	assert_int_equal(rc_array_close(a), 0);
	/* The shrink at a checkpoint, with no I/O error to tell it. */
	a = tb_assemble(&tb, 1u << 2, 0);
	assert_int_equal(verify(a, blocks, 1), 0);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);

	a = raid5_filled(&tb, &blocks);
	rc_fault_shrink(tb.fault[0], DEV_BYTES - RC_BLOCK_SIZE);
	assert_int_equal(rc_array_close(a), 0);      /* checkpoints */
	a = tb_assemble(&tb, 0, 0);
	rc_array_member_status(a, 0, &st);
	assert_int_not_equal(st.state, RC_MEMBER_ACTIVE);
	assert_int_equal(verify(a, blocks, 1), 0);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/* Degraded already: the member that lies is the last copy of its data;
 * it stays (loudly), it is not made faulty. */
static void test_needed_liar_kept(void **state)
{
	struct rc_testbed tb;
	struct rc_member_status st;
	struct rc_array *a;

	tb_init(&tb, 4, DEV_BYTES);
	tb_create(&tb, RC_RAID5, 16384, 0);
	a = tb_assemble(&tb, 1u << 3, 0);
	fill(a, 1);
	rc_array_set_health_interval(a, 20);
	assert_int_equal(rc_array_start_recovery(a), 0);
	assert_int_equal(rc_dev_zero(tb.mem[1], 0, DEV_BYTES), 0);
	sleep_ms(300);
	rc_array_member_status(a, 1, &st);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	rc_array_close(a);
	tb_fini(&tb);
}

/*
 * What a repairing scrub corrects does not cost the array the member it
 * corrected (md: "read error corrected"; ZFS degrades, it does not fault):
 * two members of a RAID 6 with 100 damaged blocks each, far over the
 * threshold of 32, are both repaired, read back as written, and both stay.
 * A member whose blocks read back other than written (here: every read of
 * a range flips a bit, the media is fine) is not credited and goes.
 */
static void test_corrected_errors_kept(void **state)
{
	struct rc_testbed tb;
	struct rc_scrub_report rep;
	struct rc_member_status st;
	struct rc_info info;
	struct rc_array *a;
	uint64_t blocks, seed = 99, pick[100];

	a = level_filled(&tb, RC_RAID6, 6, 8192, 0, &blocks);
	for (int v = 1; v <= 2; v++) {
		pick_blocks(pick, 100, data_blocks_of(a), &seed);
		for (int k = 0; k < 100; k++)
			rc_fault_corrupt(tb.fault[v], DATA_OFF_BYTES +
					 pick[k] * RC_BLOCK_SIZE, RC_BLOCK_SIZE,
					 3, seed + (uint64_t)k);
	}
	assert_int_equal(rc_scrub(a, true, &rep, NULL, NULL), 0);
	assert_int_equal(rep.unrecoverable, 0);
	assert_int_equal(rep.repaired, 200);
	sleep_ms(1100);                 /* past RC_FAULT_SETTLE_NS */
	assert_int_equal(verify(a, blocks, 1), 0);      /* applies faults */
	for (int v = 1; v <= 2; v++) {
		rc_array_member_status(a, v, &st);
		assert_int_equal(st.state, RC_MEMBER_ACTIVE);
		assert_int_equal(st.repaired, 100);
	}
	rc_array_info(a, &info);
	assert_false(info.degraded);
	assert_int_equal(rc_scrub(a, false, &rep, NULL, NULL), 0);
	assert_int_equal(rep.csum_errors + rep.read_errors, 0);

	/* The liar: 100 blocks that never read back as written. */
	rc_fault_flip_on_read(tb.fault[3], DATA_OFF_BYTES, 100 * RC_BLOCK_SIZE,
			      RC_FAULT_PERSISTENT);
	assert_int_equal(rc_scrub(a, true, &rep, NULL, NULL), 0);
	sleep_ms(1100);
	assert_int_equal(verify(a, blocks, 1), 0);
	rc_array_member_status(a, 3, &st);
	assert_int_equal(st.state, RC_MEMBER_FAULTY);
	for (int v = 1; v <= 2; v++) {
		rc_array_member_status(a, v, &st);
		assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	}
	assert_int_equal(verify(a, blocks, 1), 0);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/*
 * A read-only array faults no member for its errors: nothing can be
 * rewritten, so nothing is ever corrected, and a member taken out takes
 * its good blocks from the rows the others' errors hit.  A RAID 6 of 6,
 * three members unreadable over 100 blocks each at different rows (at
 * most one bad block per row): every block reads, twice, and every
 * member stays.  Before, the first two were faulted and the third's rows
 * read as I/O errors (a tester's report).
 */
static void test_rdonly_errors_keep_members(void **state)
{
	struct rc_testbed tb;
	struct rc_member_status st;
	struct rc_array *a;
	uint64_t blocks;

	a = level_filled(&tb, RC_RAID6, 6, 8192, 0, &blocks);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 0, RC_ASSEMBLE_RDONLY);
	for (int v = 1; v <= 3; v++)
		rc_fault_eio(tb.fault[v], RC_FAULT_READ, DATA_OFF_BYTES +
			     (uint64_t)(v - 1) * 120 * RC_BLOCK_SIZE,
			     100 * RC_BLOCK_SIZE, RC_FAULT_PERSISTENT);
	assert_int_equal(verify(a, blocks, 1), 0);
	sleep_ms(1100);                 /* past RC_FAULT_SETTLE_NS */
	assert_int_equal(verify(a, blocks, 1), 0);
	for (int v = 1; v <= 3; v++) {
		rc_array_member_status(a, v, &st);
		assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	}
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/*
 * A member whose read errors are not corrected (a range that stays
 * unreadable after its rewrite) is faulted only while the array keeps
 * redundancy without it.  A RAID 5 of 4 keeps it, with or without a
 * spare (a rebuild onto the spare would go without its good blocks:
 * `raidfsctl replace` copies them): its good blocks are the redundancy of
 * the rows another member's damage hits, and that damage, at other rows,
 * is repaired; every block reads.  Read errors show again after any
 * remount, so keeping such a member never serves stale data.
 */
static void test_last_redundancy_kept(void **state)
{
	for (int spare = 0; spare <= 1; spare++) {
		struct rc_testbed tb;
		struct rc_scrub_report rep;
		struct rc_member_status st;
		struct rc_info info;
		struct rc_array *a;
		uint64_t blocks;

		a = level_filled(&tb, RC_RAID5, 4, 16384, spare, &blocks);
		rc_fault_eio(tb.fault[1], RC_FAULT_READ, DATA_OFF_BYTES,
			     100 * RC_BLOCK_SIZE, RC_FAULT_PERSISTENT);
		assert_int_equal(verify(a, blocks, 1), 0);
		sleep_ms(1100);
		assert_int_equal(verify(a, blocks, 1), 0);
		rc_array_member_status(a, 1, &st);
		assert_int_equal(st.state, RC_MEMBER_ACTIVE);
		rc_array_info(a, &info);
		assert_false(info.degraded);
		assert_int_equal(info.spares, spare);
		/* damage on another member, at other rows: repaired from the
		 * kept member's good blocks */
		for (int k = 0; k < 8; k++)
			rc_fault_corrupt(tb.fault[2], DATA_OFF_BYTES +
					 (uint64_t)(200 + k) * RC_BLOCK_SIZE,
					 RC_BLOCK_SIZE, 3, 5 + (uint64_t)k);
		assert_int_equal(rc_scrub(a, true, &rep, NULL, NULL), 0);
		assert_int_equal(rep.unrecoverable, 0);
		assert_int_equal(verify(a, blocks, 1), 0);
		assert_int_equal(rc_array_close(a), 0);
		tb_fini(&tb);
	}
}

/*
 * The same kept member with a spare waiting and the recovery thread
 * running: the spare replaces it online, as ZFS's hot spare takes a
 * degraded vdev's place (it waited for raidfsctl replace).  The member's
 * good blocks are copied, its unreadable ones reconstructed; at the end
 * the spare holds the slot, the old device is let go, and every block
 * reads, also with another member lost after.
 */
static void test_kept_member_spare_replaces(void **state)
{
	struct rc_testbed tb;
	struct rc_member_status st;
	struct rc_info info;
	struct rc_array *a;
	uint64_t blocks;
	char spare_name[256];
	int i;

	a = level_filled(&tb, RC_RAID5, 4, 16384, 1, &blocks);
	assert_int_equal(rc_array_member_status(a, 4, &st), 0);
	snprintf(spare_name, sizeof(spare_name), "%s", st.name);
	assert_int_equal(rc_array_start_recovery(a), 0);
	rc_fault_eio(tb.fault[1], RC_FAULT_READ, DATA_OFF_BYTES,
		     100 * RC_BLOCK_SIZE, RC_FAULT_PERSISTENT);
	assert_int_equal(verify(a, blocks, 1), 0);
	sleep_ms(1100);
	assert_int_equal(verify(a, blocks, 1), 0);
	for (i = 0; i < 1000; i++) {
		rc_array_member_status(a, 1, &st);
		rc_array_info(a, &info);
		if (!info.replacing && !strcmp(st.name, spare_name))
			break;
		sleep_ms(20);
	}
	assert_string_equal(st.name, spare_name);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	assert_int_equal(st.read_errors, 0);
	assert_int_equal(info.spares, 0);
	assert_false(info.degraded);
	assert_int_equal(verify(a, blocks, 1), 0);
	/* the replacement holds slot 1's column: lose another member */
	rc_fault_vanish(tb.fault[2]);
	assert_int_equal(verify(a, blocks, 1), 0);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/*
 * A member that drops writes - its data and its checksum tables, not its
 * superblocks - is never kept for the array's last redundancy: a repaired
 * block that reads back other than written faults it at once.  Kept, it
 * was read after a clean remount, its old blocks verifying against its
 * old tables: files read back as they were before their overwrite, with
 * no error (a tester's report).  A RAID 5 of 4 without a spare, every
 * block overwritten: the member is faulted, and after a new assembly
 * every block reads as last written.
 */
static void test_lost_writes_faulted(void **state)
{
	struct rc_testbed tb;
	struct rc_member_status st;
	struct rc_array *a;
	uint64_t blocks;

	a = raid5_filled(&tb, &blocks);
	rc_fault_lose_writes(tb.fault[1], 8 * RC_BLOCK_SIZE,
			     DEV_BYTES - 10 * RC_BLOCK_SIZE,
			     RC_FAULT_PERSISTENT);
	fill(a, 2);
	assert_int_equal(verify(a, blocks, 2), 0);
	rc_array_member_status(a, 1, &st);
	assert_int_equal(st.state, RC_MEMBER_FAULTY);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 0, 0);
	assert_int_equal(verify(a, blocks, 2), 0);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/* An error seen while running is on every member's superblock soon after,
 * without a close: a crash then still leaves RC_AF_ERRORS for fsck. */
static void test_errors_recorded_promptly(void **state)
{
	struct rc_testbed tb;
	struct rc_probe p = { 0 };
	struct rc_array *a;
	struct rc_dev *d;
	uint8_t buf[RC_BLOCK_SIZE];

	a = raid5_filled(&tb, NULL);
	assert_int_equal(rc_array_start_recovery(a), 0);
	d = tb_borrow(&tb, 2);
	assert_int_equal(rc_member_probe(d, &p), 0);
	rc_dev_close(d);
	assert_false(p.errors);
	/* logical block 0: data column 0 of stripe 0, on member 0 */
	assert_int_equal(rc_fault_corrupt(tb.fault[0], DATA_OFF_BYTES,
					  RC_BLOCK_SIZE, 3, 1), 0);
	assert_int_equal(rc_read(a, 0, 1, buf), 0);
	assert_true(tb_check(buf, 0, 1));
	for (int i = 0; i < 500 && !p.errors; i++) {
		sleep_ms(10);
		d = tb_borrow(&tb, 2);
		assert_int_equal(rc_member_probe(d, &p), 0);
		rc_dev_close(d);
	}
	assert_true(p.errors);
	rc_array_close(a);
	tb_fini(&tb);
}

/* Moves every superblock copy of member v back by `back` events. */
static void sb_events_back(struct rc_testbed *tb, int v, uint64_t back)
{
	uint8_t blk[RC_BLOCK_SIZE];
	struct rc_sb sb;
	const char *why;

	for (uint32_t c = 0; c < RC_SB_COPIES; c++) {
		uint64_t off = rc_sb_copy_block(c, DEV_BYTES / RC_BLOCK_SIZE) *
			       RC_BLOCK_SIZE;

		assert_int_equal(rc_dev_read(tb->mem[v], blk, RC_BLOCK_SIZE,
					     off), 0);
		assert_int_equal(rc_sb_decode(blk, &sb, &why), 0);
		sb.events -= back;
		/* as the update before wrote it: its time (format 2.7) */
		if (back == 1) {
			sb.utime_ns = sb.prev_utime_ns;
			sb.prev_utime_ns = 0;
		}
		rc_sb_encode(&sb, blk);
		assert_int_equal(rc_dev_write(tb->mem[v], blk, RC_BLOCK_SIZE,
					      off), 0);
	}
}

/* An old image of member v put back while the array was down. */
static void stale_member_offline(const struct cfg *c, int v)
{
	struct rc_testbed tb;
	struct rc_member_status st;
	struct rc_info info;
	struct rc_array *a;
	uint64_t blocks;
	uint8_t *old = malloc(DEV_BYTES);

	assert_non_null(old);
	tb_init(&tb, c->members, DEV_BYTES);
	tb_create(&tb, c->level, c->chunk, 0);
	a = tb_assemble(&tb, 0, 0);
	blocks = fill(a, 1);
	assert_int_equal(rc_array_close(a), 0);
	assert_int_equal(rc_dev_read(tb.mem[v], old, DEV_BYTES, 0), 0);
	a = tb_assemble(&tb, 0, 0);
	fill(a, 2);
	assert_int_equal(rc_array_close(a), 0);
	assert_int_equal(rc_dev_write(tb.mem[v], old, DEV_BYTES, 0), 0);

	/* Left out, not written (an old copy named by mistake is kept);
	 * everything reads gen 2. */
	a = tb_assemble(&tb, 0, 0);
	assert_int_equal(verify(a, blocks, 2), 0);
	rc_array_member_status(a, v, &st);
	rc_array_info(a, &info);
	assert_int_not_equal(st.state, RC_MEMBER_ACTIVE);
	assert_true(info.degraded);
	assert_int_equal(info.spares, 0);
	assert_int_equal(rc_array_start_recovery(a), 0);
	assert_int_equal(rc_array_close(a), 0);
	{
		uint8_t *now = malloc(DEV_BYTES);

		assert_non_null(now);
		assert_int_equal(rc_dev_read(tb.mem[v], now, DEV_BYTES, 0), 0);
		assert_memory_equal(now, old, DEV_BYTES);
		free(now);
	}
	/* Added by an administrator: rebuilt in place. */
	a = tb_assemble(&tb, 0, 0);
	assert_int_equal(rc_array_start_recovery(a), 0);
	assert_int_equal(rc_spare_add(a, tb_borrow(&tb, v)), 0);
	wait_replaced(a, v, true, "a stale member");
	assert_int_equal(verify(a, blocks, 2), 0);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 0, 0);
	rc_array_member_status(a, v, &st);
	rc_array_info(a, &info);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	assert_false(info.degraded);
	assert_int_equal(verify(a, blocks, 2), 0);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
	free(old);
}

static void test_stale_member_offline(void **state)
{
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
		for (int v = 0; v < cfgs[i].members; v += cfgs[i].members - 1)
			stale_member_offline(&cfgs[i], v);
}

/* One update behind: current when it is a suffix of the slots (a torn
 * superblock write), stale when a later slot is newer. */
static void test_events_margin(void **state)
{
	struct rc_testbed tb;
	struct rc_member_status st;
	struct rc_info info;
	struct rc_array *a;
	uint64_t blocks;

	a = raid5_filled(&tb, &blocks);
	assert_int_equal(rc_array_close(a), 0);
	sb_events_back(&tb, 2, 1);
	sb_events_back(&tb, 3, 1);
	a = tb_assemble(&tb, 0, 0);
	rc_array_info(a, &info);
	assert_false(info.degraded);
	assert_int_equal(info.spares, 0);
	assert_int_equal(verify(a, blocks, 1), 0);
	fill(a, 1);             /* a write: every superblock is even again */
	assert_int_equal(rc_array_close(a), 0);

	sb_events_back(&tb, 1, 1);
	a = tb_assemble(&tb, 0, 0);
	rc_array_member_status(a, 1, &st);
	rc_array_info(a, &info);
	assert_int_not_equal(st.state, RC_MEMBER_ACTIVE);
	assert_true(info.degraded);
	assert_int_equal(info.spares, 0);
	assert_int_equal(verify(a, blocks, 1), 0);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/* Writes 64 blocks at b of generation gen, noted in gens, and flushes. */
static void write64(struct rc_array *a, uint32_t *gens, uint64_t b,
		    uint32_t gen)
{
	uint8_t *buf = malloc(64 * RC_BLOCK_SIZE);

	for (uint32_t i = 0; i < 64; i++) {
		tb_pattern(buf + (size_t)i * RC_BLOCK_SIZE, b + i, gen);
		gens[b + i] = gen;
	}
	assert_int_equal(rc_write(a, b, 64, buf), 0);
	assert_int_equal(rc_flush(a), 0);
	free(buf);
}

/*
 * An old copy of the last member, one superblock update behind, put back
 * after a crash: by the superblocks alone it is what a torn update leaves
 * (kept, by test_events_margin's rule), but its journal lacks the records
 * of the batches after the update that name it, and the writes between the
 * copy and the update are on no journal any more.  Kept, its old blocks
 * verified against its own old tables: fsync'd data read back old, or as
 * EIO when another column disagreed (a tester's freeze-and-copy at RAID 5,
 * 6 and 10).  Replay finds it and the assembly leaves it out as stale.
 */
/*
 * Two crashes in a row, each in a superblock round: the first left slots
 * 2 and 3 one update behind (a torn round, kept); the second came in the
 * next mount's first round, right after slot 0's superblock.  That round
 * now completes the torn one at its events, so slots 2 and 3 are still
 * one behind, and the array assembles whole with every block.  Before, a
 * new round left them two behind: both stale, and the RAID 5 refused to
 * assemble for good (a tester's find, with two kill -9).
 */
static void test_torn_rounds_twice(void **state)
{
	uint8_t **pre, **post, buf[RC_BLOCK_SIZE];
	struct rc_testbed tb;
	struct rc_info info;
	struct rc_array *a;
	uint64_t blocks;

	(void)state;
	a = raid5_filled(&tb, &blocks);
	assert_int_equal(rc_array_close(a), 0);
	sb_events_back(&tb, 2, 1);
	sb_events_back(&tb, 3, 1);
	pre = tb_snapshot(&tb);
	a = tb_assemble(&tb, 0, 0);
	tb_pattern(buf, 0, 1);
	assert_int_equal(rc_write(a, 0, 1, buf), 0);   /* the first round */
	post = tb_snapshot(&tb);
	assert_int_equal(rc_array_close(a), 0);
	/* the crash: slot 0 took the round, slots 1-3 did not */
	for (int i = 0; i < 4; i++)
		assert_int_equal(rc_dev_write(tb.mem[i], i ? pre[i] : post[i],
					      DEV_BYTES, 0), 0);
	tb_snapshot_free(&tb, pre);
	tb_snapshot_free(&tb, post);
	a = tb_assemble(&tb, 0, 0);
	rc_array_info(a, &info);
	assert_false(info.degraded);
	assert_int_equal(info.spares, 0);
	assert_int_equal(verify(a, blocks, 1), 0);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

static void test_stale_one_behind_unclean(void **state)
{
	struct rc_testbed tb;
	struct rc_member_status st;
	struct rc_info info;
	struct rc_array *a;
	uint64_t blocks, e0, b = 0;
	uint8_t *old = malloc(DEV_BYTES), **crash;
	uint8_t buf[RC_BLOCK_SIZE];
	uint32_t *gens;
	int v = 3;

	a = raid5_filled(&tb, &blocks);
	gens = malloc(blocks * sizeof(*gens));
	for (uint64_t i = 0; i < blocks; i++)
		gens[i] = 1;
	rc_array_info(a, &info);
	e0 = info.events;
	assert_int_equal(rc_dev_read(tb.mem[v], old, DEV_BYTES, 0), 0);
	/* writes up to the next superblock update (a checkpoint) ... */
	for (; info.events == e0; b = (b + 64) % (blocks - 63)) {
		write64(a, gens, b, gens[b] + 1);
		rc_array_info(a, &info);
	}
	assert_int_equal(info.events, e0 + 1);
	/* ... and a batch after it, with a record on every member */
	write64(a, gens, 0, gens[0] + 1);
	rc_array_info(a, &info);
	assert_int_equal(info.events, e0 + 1);
	crash = tb_snapshot(&tb);
	assert_int_equal(rc_array_close(a), 0);
	tb_restore(&tb, crash);
	tb_snapshot_free(&tb, crash);
	assert_int_equal(rc_dev_write(tb.mem[v], old, DEV_BYTES, 0), 0);

	a = tb_assemble(&tb, 0, 0);
	for (uint64_t i = 0; i < blocks; i++) {
		assert_int_equal(rc_read(a, i, 1, buf), 0);
		if (!tb_check(buf, i, gens[i]))
			fail_msg("block %llu: not generation %u",
				 (unsigned long long)i, gens[i]);
	}
	rc_array_member_status(a, v, &st);
	rc_array_info(a, &info);
	assert_int_not_equal(st.state, RC_MEMBER_ACTIVE);
	assert_true(info.degraded);
	assert_int_equal(info.spares, 0);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
	free(gens);
	free(old);
}

/*
 * The same after a clean close: a copy of the last member from the
 * array's last superblock update before the close, put back.  With one
 * update at the close it was one behind the clean superblocks, as a
 * member whose update a crash tore, and kept; the writes since the copy
 * are not on it, its old blocks verify against its own old tables, and no
 * journal is left to hold it to them: the batch written after the copy
 * read back old.  The close's barrier update (array.c close_barrier)
 * leaves such a copy two behind: stale, rebuilt, every block current.
 */
static void test_stale_one_behind_clean(void **state)
{
	struct rc_testbed tb;
	struct rc_member_status st;
	struct rc_info info;
	struct rc_array *a;
	uint64_t blocks, e0, b = 0;
	uint8_t *old = malloc(DEV_BYTES);
	uint8_t buf[RC_BLOCK_SIZE];
	uint32_t *gens;
	int v = 3;

	a = raid5_filled(&tb, &blocks);
	gens = malloc(blocks * sizeof(*gens));
	for (uint64_t i = 0; i < blocks; i++)
		gens[i] = 1;
	rc_array_info(a, &info);
	e0 = info.events;
	/* writes up to the next superblock update (a checkpoint) ... */
	for (; info.events == e0; b = (b + 64) % (blocks - 63)) {
		write64(a, gens, b, gens[b] + 1);
		rc_array_info(a, &info);
	}
	/* ... the copy then, and a batch after it */
	assert_int_equal(rc_dev_read(tb.mem[v], old, DEV_BYTES, 0), 0);
	write64(a, gens, 0, gens[0] + 1);
	rc_array_info(a, &info);
	assert_int_equal(info.events, e0 + 1);
	assert_int_equal(rc_array_close(a), 0);
	assert_int_equal(rc_dev_write(tb.mem[v], old, DEV_BYTES, 0), 0);

	a = tb_assemble(&tb, 0, 0);
	for (uint64_t i = 0; i < blocks; i++) {
		assert_int_equal(rc_read(a, i, 1, buf), 0);
		if (!tb_check(buf, i, gens[i]))
			fail_msg("block %llu: not generation %u",
				 (unsigned long long)i, gens[i]);
	}
	rc_array_member_status(a, v, &st);
	assert_int_not_equal(st.state, RC_MEMBER_ACTIVE);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
	free(gens);
	free(old);
}

/* Assembled from every member of tb, member v is left out and every
 * block reads as generation 2; then tb is done with. */
static void left_out_whole(struct rc_testbed *tb, int v, uint64_t blocks)
{
	struct rc_member_status st;
	struct rc_array *a = tb_assemble(tb, 0, 0);

	rc_array_member_status(a, v, &st);
	assert_int_not_equal(st.state, RC_MEMBER_ACTIVE);
	assert_int_equal(verify(a, blocks, 2), 0);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(tb);
}

/*
 * Half of one member put back from an old image of it (a saved front
 * copied back with dd, a restore cut short), at its start or at its end:
 * its old blocks and old checksum tables verify against each other, and
 * the current superblock copies at its other end made it look current,
 * so every block in that half read back as its previous version, with no
 * error (RAID 1; found while testing).  The two old copies at one end
 * make it stale: rebuilt, never read.
 */
static void test_old_image_half(void **state)
{
	static const struct { enum rc_level level; int members; } lv[] = {
		{ RC_RAID1, 2 }, { RC_RAID5, 4 },
	};
	const uint64_t half = DEV_BYTES / 2;
	uint8_t *old = malloc(half);

	(void)state;
	assert_non_null(old);
	for (size_t l = 0; l < sizeof(lv) / sizeof(lv[0]); l++) {
		for (int end = 0; end < 2; end++) {
			struct rc_testbed tb;
			struct rc_array *a;
			uint64_t blocks, off = end ? DEV_BYTES - half : 0;
			int v = lv[l].members - 1;

			a = level_filled(&tb, lv[l].level, lv[l].members, 16384,
					 0, &blocks);
			assert_int_equal(rc_array_close(a), 0);
			assert_int_equal(rc_dev_read(tb.mem[v], old, half, off), 0);
			a = tb_assemble(&tb, 0, 0);
			fill(a, 2);
			assert_int_equal(rc_array_close(a), 0);
			assert_int_equal(rc_dev_write(tb.mem[v], old, half, off), 0);
			left_out_whole(&tb, v, blocks);
		}
	}
	free(old);
}

/*
 * One member drops writes to its checksum tables and data, or to its data
 * only, while its superblocks are written (a faulty firmware or target
 * losing writes to a range): nothing read while mounted sees it.  The
 * checkpoint reads back the last table block and the last data block it
 * wrote in place: the member is faulted at the close, and the next
 * assembly reads every block as written.  Where the array cannot run
 * without it (a degraded RAID 1's survivor) the array is suspended
 * instead, keeping the journal, and a remount with the device keeping its
 * writes again replays it.  Before: kept, its tables and blocks old and
 * agreeing, and after the remount blocks read back as their previous
 * versions with no error (testers' RAID 1 and 5); with its data only
 * dropped, kept with the array calling itself redundant.
 */
/*
 * A member whose superblock copies at its end are not kept (writes there
 * acknowledged and lost: a dm-zero tail, a device dropping writes there):
 * the first superblock update reads every copy back and faults it.  Copy 0
 * alone was read back: the end copies were found damaged and "rewritten"
 * at every check, for ever, the member kept active (a tester's find).
 */
static void test_sb_tail_lost(void **state)
{
	struct rc_testbed tb;
	struct rc_member_status st;
	struct rc_array *a;
	uint8_t buf[RC_BLOCK_SIZE];
	uint64_t blocks;

	(void)state;
	a = level_filled(&tb, RC_RAID5, 3, 16384, 0, &blocks);
	assert_int_equal(rc_array_close(a), 0);
	a = tb_assemble(&tb, 0, 0);
	rc_fault_lose_writes(tb.fault[1], DEV_BYTES - RC_SB_TAIL_BLOCKS *
			     RC_BLOCK_SIZE, RC_SB_TAIL_BLOCKS * RC_BLOCK_SIZE,
			     RC_FAULT_PERSISTENT);
	tb_pattern(buf, 5, 9);
	assert_int_equal(rc_write(a, 5, 1, buf), 0);
	assert_int_equal(rc_flush(a), 0);
	rc_array_member_status(a, 1, &st);
	assert_int_equal(st.state, RC_MEMBER_FAULTY);
	for (uint64_t b = 0; b < blocks; b++) {
		assert_int_equal(rc_read(a, b, 1, buf), 0);
		assert_true(tb_check(buf, b, b == 5 ? 9 : 1));
	}
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/*
 * A member zeroed but for its last superblock copies (a wipe that stopped
 * short) assembles, but is not counted on until a scrub of the whole
 * array verified it: failing another member is refused (-EINPROGRESS)
 * until then.  Only a repairing pass from stripe 0 to the last, in order,
 * through rc_scrub_stripes_bufs, verifies it; a pass that starts in the
 * middle, and heal.c's repairs (rc_scrub_stripes), do not.
 */
static void test_wiped_member_verified(void **state)
{
	struct rc_scrub_report rep;
	struct rc_scrub_bufs *b;
	struct rc_testbed tb;
	struct rc_info info;
	struct rc_array *a;
	uint8_t *zero = calloc(1, RC_BLOCK_SIZE);
	uint64_t blocks, half, gen;

	(void)state;
	a = raid5_filled(&tb, &blocks);
	assert_int_equal(rc_array_close(a), 0);
	for (uint64_t o = 0; o < DEV_BYTES - 2 * RC_BLOCK_SIZE; o += RC_BLOCK_SIZE)
		assert_int_equal(tb.mem[1]->ops->write(tb.mem[1], zero,
						       RC_BLOCK_SIZE, o), 0);
	a = tb_assemble(&tb, 0, 0);
	rc_array_info(a, &info);
	assert_int_equal(info.verify_slots, 1u << 1);
	assert_non_null(strstr(info.verify_why, "superblock copies 0 1"));
	assert_int_equal(rc_member_fail_redundant(a, 0), -EINPROGRESS);
	/* member 1 itself may go: the others hold everything */
	half = info.stripes / 2;
	assert_int_equal(rc_scrub_stripes(a, 0, info.stripes, true, &rep), 0);
	assert_int_equal(rc_scrub_bufs_new(a, &b), 0);
	assert_int_equal(rc_scrub_stripes_bufs(a, b, half, info.stripes - half,
					       true, &rep), 0);
	rc_array_info(a, &info);
	assert_int_equal(info.verify_slots, 1u << 1);
	assert_int_equal(rc_member_fail_redundant(a, 0), -EINPROGRESS);
	/* damaged again (its copy 0, rewritten since, zeroed) behind a
	 * pass that set out to verify it: the pass verifies nothing, and the
	 * member is told again (it ended "verified": V1 D2) */
	gen = info.verify_gen;
	assert_int_equal(rc_scrub_stripes_bufs(a, b, 0, half, true, &rep), 0);
	assert_int_equal(tb.mem[1]->ops->write(tb.mem[1], zero, RC_BLOCK_SIZE,
					       0), 0);
	rc_array_set_health_interval(a, 20);
	assert_int_equal(rc_array_start_recovery(a), 0);
	for (int i = 0; i < 200 && info.verify_gen == gen; i++) {
		sleep_ms(10);
		rc_array_info(a, &info);
	}
	rc_array_set_health_interval(a, 0);
	assert_true(info.verify_gen > gen);
	assert_int_equal(rc_scrub_stripes_bufs(a, b, half, info.stripes - half,
					       true, &rep), 0);
	rc_array_info(a, &info);
	assert_int_equal(info.verify_slots, 1u << 1);
	assert_int_equal(rc_scrub_stripes_bufs(a, b, 0, half, true, &rep), 0);
	assert_int_equal(rc_scrub_stripes_bufs(a, b, half, info.stripes - half,
					       true, &rep), 0);
	rc_scrub_bufs_free(b);
	rc_array_info(a, &info);
	assert_int_equal(info.verify_slots, 0);
	assert_int_equal(rc_member_fail_redundant(a, 0), 0);
	assert_int_equal(verify(a, blocks, 1), 0);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
	free(zero);
}

static void test_lost_writes_found(void **state)
{
	static const struct {
		enum rc_level level;
		int members;
		uint32_t skip;
		bool data_only, suspends;
	} cs[] = {
		{ RC_RAID1, 2, 0, false, false }, { RC_RAID5, 3, 0, false, false },
		{ RC_RAID1, 2, 0, true, false }, { RC_RAID5, 3, 0, true, false },
		{ RC_RAID1, 2, 1u << 1, false, true },
	};

	(void)state;
	for (size_t l = 0; l < sizeof(cs) / sizeof(cs[0]); l++) {
		struct rc_testbed tb;
		struct rc_info info;
		struct rc_array *a;
		uint8_t blk[RC_BLOCK_SIZE];
		uint64_t blocks, first;
		const char *why;
		struct rc_sb sb;
		int v = 0;

		a = level_filled(&tb, cs[l].level, cs[l].members, 16384, 0,
				 &blocks);
		assert_int_equal(rc_array_close(a), 0);
		assert_int_equal(rc_dev_read(tb.mem[v], blk, RC_BLOCK_SIZE, 0),
				 0);
		assert_int_equal(rc_sb_decode(blk, &sb, &why), 0);
		a = tb_assemble(&tb, cs[l].skip, 0);
		/* its tables (or not) and data; not its superblock copies at
		 * the end, nor its journal */
		first = (cs[l].data_only ? sb.data_offset : sb.csum_offset) *
			RC_BLOCK_SIZE;
		assert_true(sb.data_offset > sb.csum_offset);
		rc_fault_lose_writes(tb.fault[v], first, DEV_BYTES - first -
				     RC_SB_TAIL_BLOCKS * RC_BLOCK_SIZE,
				     RC_FAULT_PERSISTENT);
		if (cs[l].suspends) {
			uint32_t *gens = malloc(blocks * sizeof(*gens));
			uint8_t buf[RC_BLOCK_SIZE];

			assert_non_null(gens);
			for (uint64_t b = 0; b < blocks; b++)
				gens[b] = 1;
			write64(a, gens, 0, 2);     /* flushed: acknowledged */
			assert_int_equal(rc_array_close(a), -EIO);
			a = tb_assemble(&tb, cs[l].skip, 0);
			assert_int_equal(rc_array_info(a, &info), 0);
			assert_false(info.suspended);
			for (uint64_t b = 0; b < blocks; b++) {
				assert_int_equal(rc_read(a, b, 1, buf), 0);
				if (!tb_check(buf, b, gens[b]))
					fail_msg("block %llu: not generation %u",
						 (unsigned long long)b, gens[b]);
			}
			free(gens);
			assert_int_equal(rc_array_close(a), 0);
			tb_fini(&tb);
			continue;
		}
		fill(a, 2);             /* flushed: acknowledged */
		assert_int_equal(rc_array_close(a), 0);
		left_out_whole(&tb, v, blocks);
	}
}

static int sb_damage_lines;

static void count_sb_damage(int level, const char *msg)
{
	(void)level;
	if (strstr(msg, "superblock copies"))
		sb_damage_lines++;
	fprintf(stderr, "raidcore: %s\n", msg);
}

enum sb_hurt { SB_ZEROS_HEAD, SB_GARBAGE_TAIL, SB_EIO_HEAD };

/* Copies 0-1 (head) or 2-3 (tail) of member v's media. */
static uint64_t sb_copies_off(enum sb_hurt h)
{
	return h == SB_GARBAGE_TAIL ?
	       rc_sb_copy_block(2, DEV_BYTES / RC_BLOCK_SIZE) * RC_BLOCK_SIZE : 0;
}

static void sb_hurt_media(struct rc_testbed *tb, int v, enum sb_hurt h)
{
	uint8_t blk[2 * RC_BLOCK_SIZE];
	uint64_t seed = 7;

	if (h == SB_ZEROS_HEAD)
		assert_int_equal(rc_dev_zero(tb->mem[v], 0, sizeof(blk)), 0);
	if (h != SB_GARBAGE_TAIL)
		return;
	for (size_t i = 0; i < sizeof(blk) / 8; i++)
		((uint64_t *)blk)[i] = tb_rand(&seed);
	assert_int_equal(rc_dev_write(tb->mem[v], blk, sizeof(blk),
				      sb_copies_off(h)), 0);
}

/* Assembles with member v's copies 0-1 failing their next two reads (the
 * assembly's) if h says so. */
static struct rc_array *sb_hurt_assemble(struct rc_testbed *tb, int v,
					 enum sb_hurt h, unsigned flags)
{
	struct rc_dev *devs[8];
	struct rc_array *a = NULL;
	char err[256];

	tb_devs(tb, devs, false, 0);
	if (h == SB_EIO_HEAD)
		assert_int_equal(rc_fault_eio(tb->fault[v], RC_FAULT_READ, 0,
					      2 * RC_BLOCK_SIZE, 2), 0);
	assert_int_equal(tb_try_assemble(tb, devs, flags, &a, err,
					 sizeof(err)), 0);
	return a;
}

static void sb_copies_all_good(struct rc_testbed *tb, int v)
{
	uint8_t blk[RC_BLOCK_SIZE];
	struct rc_sb sb;
	const char *why;

	for (uint32_t c = 0; c < RC_SB_COPIES; c++) {
		assert_int_equal(rc_dev_read(tb->mem[v], blk, RC_BLOCK_SIZE,
			rc_sb_copy_block(c, DEV_BYTES / RC_BLOCK_SIZE) *
			RC_BLOCK_SIZE), 0);
		assert_int_equal(rc_sb_decode(blk, &sb, &why), 0);
	}
}

static void sb_copy_damage(enum sb_hurt h)
{
	struct rc_testbed tb;
	struct rc_member_status st;
	struct rc_array *a;
	uint64_t blocks, hash;
	const int v = 2;

	a = raid5_filled(&tb, &blocks);
	assert_int_equal(rc_array_close(a), 0);
	sb_hurt_media(&tb, v, h);

	/* Read-only: told and counted, nothing written. */
	hash = tb_media_hash(&tb);
	sb_damage_lines = 0;
	a = sb_hurt_assemble(&tb, v, h, RC_ASSEMBLE_RDONLY);
	assert_int_equal(sb_damage_lines, 1);
	rc_array_member_status(a, v, &st);
	assert_int_equal(st.state, RC_MEMBER_ACTIVE);
	assert_int_equal(h == SB_EIO_HEAD ? st.read_errors : st.csum_errors, 2);
	assert_int_equal(verify(a, blocks, 1), 0);
	assert_int_equal(rc_array_close(a), 0);
	assert_true(tb_media_hash(&tb) == hash);

	/* Read-write: the first write rewrites the copies. */
	a = sb_hurt_assemble(&tb, v, h, 0);
	assert_int_equal(sb_damage_lines, 2);
	fill(a, 2);
	assert_int_equal(rc_array_close(a), 0);
	sb_copies_all_good(&tb, v);
	a = tb_assemble(&tb, 0, 0);
	assert_int_equal(sb_damage_lines, 2);
	rc_array_member_status(a, v, &st);
	assert_int_equal(h == SB_EIO_HEAD ? st.read_errors : st.csum_errors, 2);
	assert_int_equal(verify(a, blocks, 2), 0);
	assert_int_equal(rc_array_close(a), 0);
	tb_fini(&tb);
}

/* Copies 1-3 one update behind copy 0 (the crash cut a superblock write
 * short) are not damage to fsck's probe: copies_torn, not missing from
 * copies_ok as damaged - fsck -n said "copies 1,2,3 are damaged" and
 * exited 4 for it.  Two updates behind, or one copy alone behind while a
 * later one is current, is damage. */
static void test_probe_torn_copies(void **state)
{
	struct rc_testbed tb;
	struct rc_probe p;
	uint8_t blk[RC_BLOCK_SIZE];
	struct rc_sb sb;
	const char *why;
	uint64_t blocks;
	const int v = 1;
	struct rc_array *a = raid5_filled(&tb, &blocks);

	assert_int_equal(rc_array_close(a), 0);
	for (uint32_t c = 1; c < RC_SB_COPIES; c++) {
		uint64_t off = rc_sb_copy_block(c, DEV_BYTES / RC_BLOCK_SIZE) *
			       RC_BLOCK_SIZE;

		assert_int_equal(rc_dev_read(tb.mem[v], blk, RC_BLOCK_SIZE,
					     off), 0);
		assert_int_equal(rc_sb_decode(blk, &sb, &why), 0);
		sb.events -= c == 2 ? 2 : 1;
		rc_sb_encode(&sb, blk);
		assert_int_equal(rc_dev_write(tb.mem[v], blk, RC_BLOCK_SIZE,
					      off), 0);
	}
	assert_int_equal(rc_member_probe(tb.mem[v], &p), 0);
	assert_int_equal(p.copies_ok, 0x1);
	assert_int_equal(p.copies_torn, 0x2 | 0x8);     /* copy 2: old */
	assert_int_equal(rc_member_probe(tb.mem[0], &p), 0);
	assert_int_equal(p.copies_ok, 0xf);
	assert_int_equal(p.copies_torn, 0);
	tb_fini(&tb);
}

static void test_sb_copy_damage(void **state)
{
	rc_set_logger(count_sb_damage);
	sb_copy_damage(SB_ZEROS_HEAD);
	sb_copy_damage(SB_GARBAGE_TAIL);
	sb_copy_damage(SB_EIO_HEAD);
	rc_set_logger(NULL);
}

/* Member v's device replaced, while the array was down, by one 1 MiB
 * shorter holding the same bytes (a partition shrunk, an image truncated):
 * left out, the array degraded and intact, and the device never written. */
static void test_shrunk_offline(void **state)
{
	struct rc_testbed tb;
	struct rc_member_status st;
	struct rc_info info;
	struct rc_dev *devs[8], *small, *grown;
	struct rc_array *a = NULL;
	uint64_t blocks, len = DEV_BYTES - (1ull << 20), h0, h1;
	uint8_t *img = malloc(DEV_BYTES);
	char err[256];
	const int v = 1;

	assert_non_null(img);
	a = raid5_filled(&tb, &blocks);
	assert_int_equal(rc_array_close(a), 0);
	assert_int_equal(rc_dev_read(tb.mem[v], img, len, 0), 0);
	assert_int_equal(rc_dev_mem_create(len, "small", &small), 0);
	assert_int_equal(rc_dev_write(small, img, len, 0), 0);
	h0 = XXH3_64bits(img, len);

	tb_devs(&tb, devs, false, 0);
	rc_dev_close(devs[v]);
	assert_int_equal(rc_dev_mem_share(small, &devs[v]), 0);
	assert_int_equal(tb_try_assemble(&tb, devs, 0, &a, err,
					 sizeof(err)), 0);
	rc_array_member_status(a, v, &st);
	rc_array_info(a, &info);
	assert_int_not_equal(st.state, RC_MEMBER_ACTIVE);
	assert_true(info.degraded);
	assert_int_equal(verify(a, blocks, 1), 0);
	fill(a, 2);             /* superblocks written: not to it */
	assert_int_equal(verify(a, blocks, 2), 0);
	assert_int_equal(rc_array_close(a), 0);
	assert_int_equal(rc_dev_read(small, img, len, 0), 0);
	h1 = XXH3_64bits(img, len);
	assert_true(h0 == h1);

	/* The device back at its full size, its tail zeroed: not caught up
	 * on the regions written meanwhile (its tail would stay zeros under
	 * an array that says clean), it returns only by a full rebuild. */
	assert_int_equal(rc_dev_mem_create(DEV_BYTES, "grown", &grown), 0);
	assert_int_equal(rc_dev_write(grown, img, len, 0), 0);
	tb_devs(&tb, devs, false, 0);
	rc_dev_close(devs[v]);
	assert_int_equal(rc_dev_mem_share(grown, &devs[v]), 0);
	assert_int_equal(tb_try_assemble(&tb, devs, RC_ASSEMBLE_CATCHUP, &a,
					 err, sizeof(err)), 0);
	rc_array_member_status(a, v, &st);
	rc_array_info(a, &info);
	assert_int_not_equal(st.state, RC_MEMBER_ACTIVE);
	assert_int_not_equal(st.state, RC_MEMBER_REBUILDING);
	assert_true(info.degraded);
	assert_int_equal(verify(a, blocks, 2), 0);
	assert_int_equal(rc_array_close(a), 0);
	rc_dev_close(grown);
	rc_dev_close(small);
	tb_fini(&tb);
	free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bitflips),
		cmocka_unit_test(test_lost_writes),
		cmocka_unit_test(test_two_members_same_stripe),
		cmocka_unit_test(test_write_into_lost_row),
		cmocka_unit_test(test_lying_members),
		cmocka_unit_test(test_shrunk_member_degrades),
		cmocka_unit_test(test_needed_liar_kept),
		cmocka_unit_test(test_corrected_errors_kept),
		cmocka_unit_test(test_rdonly_errors_keep_members),
		cmocka_unit_test(test_last_redundancy_kept),
		cmocka_unit_test(test_kept_member_spare_replaces),
		cmocka_unit_test(test_lost_writes_faulted),
		cmocka_unit_test(test_errors_recorded_promptly),
		cmocka_unit_test(test_stale_member_offline),
		cmocka_unit_test(test_events_margin),
		cmocka_unit_test(test_torn_rounds_twice),
		cmocka_unit_test(test_stale_one_behind_unclean),
		cmocka_unit_test(test_stale_one_behind_clean),
		cmocka_unit_test(test_old_image_half),
		cmocka_unit_test(test_lost_writes_found),
		cmocka_unit_test(test_sb_tail_lost),
		cmocka_unit_test(test_wiped_member_verified),
		cmocka_unit_test(test_sb_copy_damage),
		cmocka_unit_test(test_probe_torn_copies),
		cmocka_unit_test(test_shrunk_offline),
		cmocka_unit_test(test_read_errors_rewritten),
		cmocka_unit_test(test_table_read_errors_credited),
		cmocka_unit_test(test_tables_damaged_beyond),
		cmocka_unit_test(test_table_seal_errors_credited),
		cmocka_unit_test(test_table_rewrite_failed_not_credited),
		cmocka_unit_test(test_read_errors_unwritten),
	};

	/* RC_TEST_FILTER=test_lying_members: one test alone */
	if (getenv("RC_TEST_FILTER"))
		cmocka_set_test_filter(getenv("RC_TEST_FILTER"));

	return cmocka_run_group_tests(tests, NULL, NULL);
}
